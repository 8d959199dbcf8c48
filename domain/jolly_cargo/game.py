"""Tom Jolly's CARGO's decider record: its types, metadata and functions, for the kernel."""

from __future__ import annotations

from domain.kernel import Decider, Game, Outcome, PositionForm, Presentation

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
from .timeout import TIMEOUT
from .views import EventView, JollyCargoView, event_view, hidden, view


def to_act(state: State) -> list[int]:
    if state.phase in ("crates", "ships", "workers"):
        return [rules.setup_seat(state)]
    if state.phase == "play":
        waiting = rules.waiting_to_place(state)
        if waiting:
            return waiting
        return [] if state.current is None else [state.current]
    return []


def outcome(state: State) -> Outcome | None:
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


JOLLY_CARGO: Game[State, Command, ev.E, Options, Position] = Game(
    id="jolly-cargo",
    title="Tom Jolly's CARGO",
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
        hidden=hidden,
    ),
    presentation=Presentation(
        view_type=JollyCargoView,
        view=view,
        event_view_type=EventView,
        event_view=event_view,
        draw=svg,
        timeout=TIMEOUT,
        position=PositionForm(
            type=Position,
            start=rules.start_from_position,
            export=position_of,
            seats=lambda position: len(position.players),
        ),
    ),
)
