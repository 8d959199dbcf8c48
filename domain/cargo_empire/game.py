"""Cargo Empire wired into the kernel's game protocol."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from domain.kernel import Outcome, Secret, WiredGame, Wiring

from . import events as ev
from . import rules
from .board import COMPONENTS
from .commands import Command
from .evolve import evolve
from .legal import legal
from .options import Options
from .position import Position, position_of
from .state import State
from .svg import svg
from .views import event_view, hidden, hidden_position, view


class CargoEmpire(WiredGame[State, Command, ev.E, Options, Position]):
    id: ClassVar[str] = "cargo-empire"
    title: ClassVar[str] = "Cargo Empire"
    min_seats: ClassVar[int] = rules.MIN_SEATS
    max_seats: ClassVar[int] = rules.MAX_SEATS
    options_type: ClassVar[type[Any]] = Options
    command_type: ClassVar[Any] = Command
    event_type: ClassVar[Any] = ev.Event
    position_type: ClassVar[type[Any]] = Position
    state_type: ClassVar[type[Any]] = State

    def to_act(self, state: State) -> list[int]:
        current = state.current()
        return [] if current is None else [current]

    def outcome(self, state: State) -> Outcome | None:
        if state.phase != "finished":
            return None
        return Outcome(
            scores=[s.total for s in state.scores],
            winners=list(state.winners),
            details={
                "breakdown": [
                    {
                        "vehicles": s.vehicles,
                        "lv3_posts": s.lv3_posts,
                        "private_cities": s.private_cities,
                        "goals": s.goals,
                    }
                    for s in state.scores
                ],
                "private": [list(p.private) for p in state.players],
                "solo_target": COMPONENTS.solo_target if state.seats == 1 else None,
            },
        )

    def svg(self, view: Mapping[str, Any]) -> str:
        return svg(view)

    def hidden(self, event: ev.E) -> list[Secret]:
        return hidden(event)

    def hidden_position(self, position: Position) -> list[Secret]:
        return hidden_position(position)

    def position_seats(self, position: Position) -> int:
        return len(position.players)


CARGO_EMPIRE = CargoEmpire(
    Wiring(rules.start, rules.start_from_position, rules.decide, evolve, legal, view, event_view,
           position_of)
)
