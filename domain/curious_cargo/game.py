"""Curious Cargo's decider record: its types, metadata and functions, for the kernel."""

from __future__ import annotations

import msgspec

from domain.kernel import Game, Outcome
from domain.kernel.assets import data_assets

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
from .views import event_view, hidden, hidden_position, view


def to_act(state: State) -> list[int]:
    return state.to_act()


def outcome(state: State) -> Outcome | None:
    if state.phase != "finished":
        return None
    return Outcome(
        scores=[s.total for s in state.scores],
        winners=list(state.winners),
        details={"scores": [msgspec.to_builtins(s) for s in state.scores]},
    )


CURIOUS_CARGO: Game[State, Command, ev.E, Options, Position] = Game(
    id="curious-cargo",
    title="Curious Cargo",
    min_seats=2,
    max_seats=2,
    #: the components (tiles, trucks, board) as the data file holds them
    assets=data_assets("domain.curious_cargo", "components"),
    state_type=State,
    command_type=Command,
    event_type=ev.Event,
    options_type=Options,
    position_type=Position,
    start=rules.start,
    start_from_position=rules.start_from_position,
    decide=rules.decide,
    evolve=evolve,
    legal=legal,
    grammar=grammar,
    to_act=to_act,
    outcome=outcome,
    seats=lambda state: len(state.players),
    view=view,
    event_view=event_view,
    export_position=position_of,
    position_seats=lambda position: len(position.players),
    hidden=hidden,
    hidden_position=hidden_position,
    svg=svg,
)
