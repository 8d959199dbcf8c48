"""Empire Builder's decider record: its types, metadata and functions, for the kernel."""

from __future__ import annotations

from domain.kernel import Game, Outcome
from domain.kernel.assets import data_assets

from . import events as ev
from . import rules
from .board import LOADS, MAP_BYTES
from .commands import Command
from .evolve import evolve
from .grammar import grammar
from .legal import legal
from .options import Options
from .position import Position, position_of
from .queries import Query, ask
from .render import svg
from .state import State
from .views import EmpireBuilderView, EventView, event_view, view


def to_act(state: State) -> list[int]:
    current = state.current()
    return [] if current is None else sorted({current, *state.pending})


def outcome(state: State) -> Outcome | None:
    if state.phase != "finished":
        return None
    return Outcome(
        scores=[state.worth(s) for s in range(state.seats)],  # cash less debt, as the win
        winners=list(state.winners),
        details={
            "reason": state.reason,
            "connected_majors": [rules.connected_majors(state, s) for s in range(state.seats)],
        },
    )


EMPIRE_BUILDER: Game[State, Command, ev.E, Options, Position] = Game(
    id="empire-builder",
    title="Empire Builder",
    min_seats=rules.MIN_SEATS,
    max_seats=rules.MAX_SEATS,
    #: the map, and the loads (with their supply cities), demand cards and event cards as the
    #: data files hold them
    assets={"map": MAP_BYTES, **data_assets("domain.empire_builder", "loads", "demands", "events")},
    #: Uniformly random play spends all its money on track and never wins: bots stop after 25
    #: turns each (see docs/rules/empire-builder.md, "turn limit").
    bot_options={"turn_limit": 25},
    state_type=State,
    command_type=Command,
    event_type=ev.Event,
    options_type=Options,
    position_type=Position,
    query_type=Query,
    start=rules.start,
    start_from_position=rules.start_from_position,
    decide=rules.decide,
    evolve=evolve,
    legal=legal,
    grammar=grammar,
    to_act=to_act,
    outcome=outcome,
    seats=lambda state: state.seats,
    view=view,
    event_view=event_view,
    export_position=position_of,
    position_seats=lambda position: len(position.players),
    draw=svg,
    view_type=EmpireBuilderView,
    event_view_type=EventView,
    picture_loads=frozenset(LOADS),
    #: a player card's face changes nothing of the game (a turn clock does not count it as a
    #: move: docs/api.md, "Clocks")
    cosmetic_events=frozenset({"face_chosen"}),
    answer=ask,
)
