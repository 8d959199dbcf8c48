"""Who is looking: a seat, a spectator, or an auditor who may see everything."""

from __future__ import annotations

from typing import Any

import msgspec


class SeatViewer(msgspec.Struct, frozen=True, tag="seat", tag_field="kind"):
    seat: int


class SpectatorViewer(msgspec.Struct, frozen=True, tag="spectator", tag_field="kind"):
    pass


class AuditorViewer(msgspec.Struct, frozen=True, tag="auditor", tag_field="kind"):
    pass


Viewer = SeatViewer | SpectatorViewer | AuditorViewer

SPECTATOR = SpectatorViewer()
AUDITOR = AuditorViewer()


def seat(index: int) -> SeatViewer:
    return SeatViewer(index)


def sees_everything(viewer: Viewer) -> bool:
    return isinstance(viewer, AuditorViewer)


def seat_of(viewer: Viewer) -> int | None:
    return viewer.seat if isinstance(viewer, SeatViewer) else None


def redact_others(players: list[dict[str, Any]], viewer: Viewer, *fields: str) -> None:
    """Blank (``None``) ``fields`` of every player's JSON but the viewer's own seat's."""
    me = seat_of(viewer)
    for index, player in enumerate(players):
        if index != me:
            for field in fields:
                player[field] = None
