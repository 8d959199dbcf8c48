"""A stored event told as a sentence for one viewer (:mod:`domain.kernel.messages`): built from
the viewer's event view — the game's ``event_view`` for its own events,
:func:`domain.platform.events.event_view` for the platform's — never from the raw event, so a
sentence holds nothing the viewer's event view hides. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from domain.kernel import Viewer, seat_of
from domain.kernel.messages import PLATFORM, Sentence, package_of, speaker
from domain.platform.events import decode_platform, event_view, is_platform
from domain.registry import AnyGame


def view_of(rules: AnyGame, event_type: str, data: Any, viewer: Viewer, seat: int | None) -> Any:
    """The event view (JSON) a sentence is built from: ``data`` is the event's clear data,
    ``viewer`` the reader of the game's events, ``seat`` the reader's seat (a private message's
    text is its sender's and addressees' only, even once the game is over)."""
    if is_platform(event_type):
        return event_view(decode_platform(data), seat)
    return msgspec.to_builtins(rules.event_view(rules.decode_event(data), viewer))


def tell(
    rules: AnyGame,
    event_type: str,
    data: Any,
    viewer: Viewer,
    names: Sequence[str | None],
    lang: str,
    seat: int | None = None,
) -> Sentence:
    """The event (type and clear ``data``) as ``viewer`` reads it, in ``lang``, its seats
    called by ``names``. ``seat`` defaults to the viewer's."""
    reader = seat_of(viewer) if seat is None else seat
    view = view_of(rules, event_type, data, viewer, reader)
    scope = PLATFORM if is_platform(event_type) else rules.id
    return speaker(package_of(rules.state_type.__module__), lang).sentence(
        scope, event_type, view, names
    )
