"""Tom Jolly's CARGO wired into the kernel's game protocol."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from domain.kernel import Outcome, Secret, WiredGame, Wiring

from . import events as ev
from . import rules
from .commands import Command
from .evolve import evolve
from .legal import legal
from .options import Options
from .position import Position, position_of
from .state import State
from .svg import svg
from .views import event_view, hidden, view


class JollyCargo(WiredGame[State, Command, ev.E, Options, Position]):
    id: ClassVar[str] = "jolly-cargo"
    title: ClassVar[str] = "Tom Jolly's CARGO"
    min_seats: ClassVar[int] = rules.MIN_SEATS
    max_seats: ClassVar[int] = rules.MAX_SEATS
    options_type: ClassVar[type[Any]] = Options
    command_type: ClassVar[Any] = Command
    event_type: ClassVar[Any] = ev.Event
    position_type: ClassVar[type[Any]] = Position
    state_type: ClassVar[type[Any]] = State

    def to_act(self, state: State) -> list[int]:
        if state.phase in ("crates", "ships", "workers"):
            return [rules.setup_seat(state)]
        if state.phase == "play":
            waiting = rules.waiting_to_place(state)
            if waiting:
                return waiting
            return [] if state.current is None else [state.current]
        return []

    def outcome(self, state: State) -> Outcome | None:
        if state.phase != "finished":
            return None
        return Outcome(
            scores=[p.score for p in state.players],
            winners=list(state.winners),
            details={
                "collected": [p.collected for p in state.players],
                "loaded": [p.loaded for p in state.players],
                "captured": [p.captured for p in state.players],
                "colours": [p.colour for p in state.players],
            },
        )

    def svg(self, view: Mapping[str, Any]) -> str:
        return svg(view)

    def hidden(self, event: ev.E) -> list[Secret]:
        return hidden(event)

    def position_seats(self, position: Position) -> int:
        return len(position.players)


JOLLY_CARGO = JollyCargo(
    Wiring(rules.start, rules.start_from_position, rules.decide, evolve, legal, view, event_view,
           position_of)
)
