"""Who is looking: a seat, a spectator, or an auditor who may see everything."""

from __future__ import annotations

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
