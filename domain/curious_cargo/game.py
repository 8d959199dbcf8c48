"""Curious Cargo wired into the kernel's game protocol."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from domain.kernel import Game, Outcome, Rng, Secret, Viewer

from . import events as ev
from . import rules
from .commands import Command
from .evolve import evolve
from .legal import legal
from .options import Options
from .position import Position, position_of
from .state import State
from .svg import svg
from .views import event_view, hidden, hidden_position, view


class CuriousCargo(Game[State, Command, ev.E, Options, Position]):
    id: ClassVar[str] = "curious-cargo"
    title: ClassVar[str] = "Curious Cargo"
    min_seats: ClassVar[int] = 2
    max_seats: ClassVar[int] = 2
    options_type: ClassVar[type[Any]] = Options
    command_type: ClassVar[Any] = Command
    event_type: ClassVar[Any] = ev.Event
    position_type: ClassVar[type[Any]] = Position
    state_type: ClassVar[type[Any]] = State

    def start(self, options: Options, seats: int, rng: Rng) -> list[ev.E]:
        return rules.start(options, seats, rng)

    def start_from_position(self, position: Position, rng: Rng) -> list[ev.E]:
        return rules.start_from_position(position, rng)

    def decide(self, state: State, seat: int, command: Command, rng: Rng) -> list[ev.E]:
        return rules.decide(state, seat, command, rng)

    def evolve(self, state: State | None, event: ev.E) -> State:
        return evolve(state, event)

    def legal(self, state: State, seat: int) -> list[Command]:
        return legal(state, seat)

    def to_act(self, state: State) -> list[int]:
        return state.to_act()

    def outcome(self, state: State) -> Outcome | None:
        if state.phase != "finished":
            return None
        return Outcome(
            scores=[s.total for s in state.scores],
            winners=list(state.winners),
            details={"scores": [self.to_builtins(s) for s in state.scores]},
        )

    def view(self, state: State, viewer: Viewer) -> dict[str, Any]:
        return view(state, viewer)

    def svg(self, view: Mapping[str, Any]) -> str:
        return svg(view)

    def event_view(self, event: ev.E, viewer: Viewer) -> dict[str, Any]:
        return event_view(event, viewer)

    def export_position(self, state: State) -> Position:
        return position_of(state)

    def hidden(self, event: ev.E) -> list[Secret]:
        return hidden(event)

    def hidden_position(self, position: Position) -> list[Secret]:
        return hidden_position(position)

    def position_seats(self, position: Position) -> int:
        return len(position.players)


CURIOUS_CARGO = CuriousCargo()
