"""Empire Builder's decider record: its types, metadata and functions, for the kernel."""

from __future__ import annotations

from domain.kernel import Decider, Game, Outcome, PositionForm, Presentation
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
from .timeout import TIMEOUT
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
    state_type=State,
    command_type=Command,
    event_type=ev.Event,
    options_type=Options,
    seats=lambda state: state.seats,
    out_of_turn=rules.out_of_turn,
    decider=Decider(
        start=rules.start,
        decide=rules.decide,
        evolve=evolve,
        legal=legal,
        grammar=grammar,
        to_act=to_act,
        outcome=outcome,
    ),
    presentation=Presentation(
        view_type=EmpireBuilderView,
        view=view,
        event_view_type=EventView,
        event_view=event_view,
        draw=svg,
        picture_loads=frozenset(LOADS),
        query_type=Query,
        answer=ask,
        #: the map, and the loads (with their supply cities), demand cards and event cards as the
        #: data files hold them
        assets={
            "map": MAP_BYTES,
            **data_assets("domain.empire_builder", "loads", "demands", "events"),
        },
        #: Uniformly random play spends all its money on track and never wins: bots stop after 25
        #: turns each (see docs/rules/empire-builder.md, "turn limit").
        bot_options={"turn_limit": 25},
        timeout=TIMEOUT,
        position=PositionForm(
            type=Position,
            start=rules.start_from_position,
            export=position_of,
            seats=lambda position: len(position.players),
        ),
    ),
)
