"""Cargo Empire's decider record: its types, metadata and functions, for the kernel."""

from __future__ import annotations

from domain.kernel import Decider, Game, Outcome, PositionForm, Presentation
from domain.kernel.assets import data_assets

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
from .timeout import TIMEOUT
from .views import CargoEmpireView, EventView, event_view, hidden, hidden_position, view


def to_act(state: State) -> list[int]:
    current = state.current()
    return [] if current is None else [current]


def outcome(state: State) -> Outcome | None:
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


CARGO_EMPIRE: Game[State, Command, ev.E, Options, Position] = Game(
    id="cargo-empire",
    title="Cargo Empire",
    min_seats=rules.MIN_SEATS,
    max_seats=rules.MAX_SEATS,
    state_type=State,
    command_type=Command,
    event_type=ev.Event,
    options_type=Options,
    seats=lambda state: state.seats,
    decider=Decider(
        start=rules.start,
        decide=rules.decide,
        evolve=evolve,
        legal=legal,
        to_act=to_act,
        outcome=outcome,
        hidden=hidden,
    ),
    presentation=Presentation(
        view_type=CargoEmpireView,
        view=view,
        event_view_type=EventView,
        event_view=event_view,
        draw=svg,
        #: the map and the components as the data files hold them
        assets=data_assets("domain.cargo_empire", "map", "components"),
        timeout=TIMEOUT,
        position=PositionForm(
            type=Position,
            start=rules.start_from_position,
            export=position_of,
            seats=lambda position: len(position.players),
            hidden=hidden_position,
        ),
    ),
)
