"""Tom Jolly's CARGO wired into the kernel's game protocol."""

from __future__ import annotations

from typing import Any, ClassVar

from domain.kernel import WiredGame, Wiring

from . import events as ev
from . import rules
from .commands import Command
from .evolve import evolve
from .grammar import grammar
from .legal import legal
from .options import Options
from .position import Position, position_of
from .state import State
from .svg import svg
from .views import EventView, JollyCargoView, event_view, hidden, view


class JollyCargo(WiredGame[State, Command, ev.E, Options, Position]):
    id: ClassVar[str] = "jolly-cargo"
    title: ClassVar[str] = "Tom Jolly's CARGO"
    min_seats: ClassVar[int] = rules.MIN_SEATS
    max_seats: ClassVar[int] = rules.MAX_SEATS
    view_type: ClassVar[type[JollyCargoView]] = JollyCargoView
    event_view_type: ClassVar[Any] = EventView

    def to_act(self, state: State) -> list[int]:
        if state.phase in ("crates", "ships", "workers"):
            return [rules.setup_seat(state)]
        if state.phase == "play":
            waiting = rules.waiting_to_place(state)
            if waiting:
                return waiting
            return [] if state.current is None else [state.current]
        return []

    def final_scores(self, state: State) -> list[int]:
        return [p.score for p in state.players]

    def final_details(self, state: State) -> dict[str, Any]:
        return {
            "collected": [p.collected for p in state.players],
            "loaded": [p.loaded for p in state.players],
            "captured": [p.captured for p in state.players],
            "colours": [p.colour for p in state.players],
        }


JOLLY_CARGO = JollyCargo(
    Wiring(state_type=State, command_type=Command, event_type=ev.Event, options_type=Options,
           position_type=Position, start=rules.start, start_from_position=rules.start_from_position,
           decide=rules.decide, evolve=evolve, legal=legal, view=view, event_view=event_view,
           export_position=position_of, svg=svg, hidden=hidden, grammar=grammar)
)
