"""Empire Builder wired into the kernel's game protocol."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from domain.kernel import Game, Outcome, Rng, Viewer

from . import events as ev
from . import rules
from .board import MAP_BYTES
from .commands import Command
from .evolve import evolve
from .legal import legal
from .options import Options
from .position import Position, position_of
from .queries import Query, ask
from .render import svg
from .state import State
from .views import event_view, view


class EmpireBuilder(Game[State, Command, ev.E, Options, Position]):
    id: ClassVar[str] = "empire-builder"
    title: ClassVar[str] = "Empire Builder"
    min_seats: ClassVar[int] = rules.MIN_SEATS
    max_seats: ClassVar[int] = rules.MAX_SEATS
    options_type: ClassVar[type[Any]] = Options
    command_type: ClassVar[Any] = Command
    event_type: ClassVar[Any] = ev.Event
    position_type: ClassVar[type[Any]] = Position
    state_type: ClassVar[type[Any]] = State
    assets: ClassVar[dict[str, bytes]] = {"map": MAP_BYTES}
    #: Uniformly random play spends all its money on track and never wins: bots stop after 25
    #: turns each (see docs/rules/empire-builder.md, "turn limit").
    query_type: ClassVar[Any] = Query
    bot_options: ClassVar[dict[str, Any] | None] = {"turn_limit": 25}

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
        current = state.current()
        return [] if current is None else sorted({current, *state.pending})

    def outcome(self, state: State) -> Outcome | None:
        if state.phase != "finished":
            return None
        return Outcome(
            scores=[p.money for p in state.players],
            winners=list(state.winners),
            details={
                "reason": state.reason,
                "connected_majors": [
                    rules.connected_majors(state, s) for s in range(state.seats)
                ],
            },
        )

    def view(self, state: State, viewer: Viewer) -> dict[str, Any]:
        return view(state, viewer)

    def svg(self, view: Mapping[str, Any]) -> str | None:
        return svg(view)

    def event_view(self, event: ev.E, viewer: Viewer) -> dict[str, Any]:
        return event_view(event, viewer)

    def ask(self, state: State, viewer: Viewer, query: Any) -> dict[str, Any]:
        return ask(state, viewer, query)

    def export_position(self, state: State) -> Position:
        return position_of(state)

    def position_seats(self, position: Position) -> int:
        return len(position.players)


EMPIRE_BUILDER = EmpireBuilder()
