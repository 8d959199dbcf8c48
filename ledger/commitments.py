"""Hidden values on their way into the chain and out to each caller (pure; no I/O).

Writing: :func:`public_of` gives an event's public form — what the hash chain covers and every
public byte shows — from the game's declaration (``Game.hidden``) or, for private table talk,
:func:`domain.platform.events.message_secrets` (construction: :mod:`domain.kernel.hidden`).

Reading: :func:`shown` is an event as one caller may read it: the public form with the values
the caller may read put back in the clear, plus an *opening* (path and salt) for each, so the
caller can recompute the commitment and check the event's hash. A seat reads the values the
game gives it; once the game is over everyone reads every game value (the seed is revealed), but
a private message is opened only to its sender and addressees, ever. Games of canonical form 1
(created before commitments) have no public form: their events are redacted as they always
were (``Game.event_view``; private message text as null).
"""

from __future__ import annotations

from typing import Any

import msgspec

from domain.kernel import AUDITOR, SPECTATOR, Secret, typed
from domain.kernel import seat as seat_viewer
from domain.kernel.hidden import get_at, public_form, salt, set_at
from domain.platform.events import (
    LobbyCreated,
    TableMessage,
    created_secrets,
    is_platform,
    message_secrets,
)
from domain.registry import AnyGame

#: The first canonical form with commitments (``ledger.chain``); new games are created
#: in it.
CANONICAL = 2
MESSAGE = "table.message"
CREATED = "lobby.created"


class Keys(msgspec.Struct, frozen=True):
    """A game's secret keys: its seed, and the key of its private table talk (None for games
    created before commitments)."""

    seed: bytes
    messages: bytes | None = None


def secrets_of(rules: AnyGame, type: str, data: Any) -> list[Secret]:
    """The hidden values of a stored event (clear data)."""
    if type == MESSAGE:
        return message_secrets(typed(data, TableMessage))
    if type == CREATED:
        return created_secrets(typed(data, LobbyCreated))
    if is_platform(type):
        return []
    return rules.hidden(rules.decode_event(data))


def key_for(type: str, keys: Keys) -> bytes | None:
    return keys.messages if type == MESSAGE else keys.seed


def public_of(
    canonical: int, secrets: list[Secret], type: str, data: Any, version: int, keys: Keys
) -> Any:
    """The public form of an event about to be appended (None: it has no hidden values, or
    the game is of canonical form 1)."""
    key = key_for(type, keys)
    if canonical < CANONICAL or not secrets or key is None:
        return None
    return public_form(data, secrets, version, key)


def _may_read(secret: Secret, type: str, seat: int | None, finished: bool) -> bool:
    if finished and type != MESSAGE:
        return True
    return seat is not None and seat in secret.seats


def shown(
    rules: AnyGame,
    event: Any,
    seat: int | None,
    finished: bool,
    keys: Keys | None,
) -> tuple[Any, list[dict[str, Any]]]:
    """``event``'s data as ``seat`` (None: anyone) may read it, and the openings of what it
    may read (``keys``: the game's, to compute salts; None: give no openings)."""
    secrets = secrets_of(rules, event.type, event.data)
    if not secrets:
        return event.data, []
    if event.public is None:
        return _legacy(rules, event, secrets, seat, finished), []
    out = event.public
    openings: list[dict[str, Any]] = []
    key = None if keys is None else key_for(event.type, keys)
    for secret in secrets:
        if _may_read(secret, event.type, seat, finished):
            out = set_at(out, secret.path, get_at(event.data, secret.path))
            if key is not None:
                salt_hex = salt(key, event.version, secret.path).hex()
                openings.append({"path": list(secret.path), "salt": salt_hex})
    return out, openings


def _legacy(
    rules: AnyGame, event: Any, secrets: list[Secret], seat: int | None, finished: bool
) -> Any:
    """Canonical form 1: redacted as before, by the game's ``event_view`` (platform events:
    what the caller may not read as null), as JSON builtins like every event's data."""
    if is_platform(event.type):
        data = event.data
        for secret in secrets:
            if not _may_read(secret, event.type, seat, finished):
                data = set_at(data, secret.path, None)
        return data
    viewer = AUDITOR if finished else SPECTATOR if seat is None else seat_viewer(seat)
    return msgspec.to_builtins(rules.event_view(rules.decode_event(event.data), viewer))


def withholds(event: Any, rules: AnyGame, seat: int | None, finished: bool) -> bool:
    """Does ``seat`` lack the opening of any hidden value of ``event``?"""
    return any(
        not _may_read(s, event.type, seat, finished)
        for s in secrets_of(rules, event.type, event.data)
    )
