"""Curious Cargo's decider record: its types, metadata and functions, for the kernel."""

from __future__ import annotations

import msgspec

from domain.kernel import Decider, Game, Outcome, PositionForm, Presentation
from domain.kernel.assets import data_assets

from . import events as ev
from . import rules
from .commands import Command
from .evolve import folder
from .grammar import grammar
from .legal import legal
from .options import Options
from .position import Position, position_of
from .state import EDITION, State
from .svg import svg
from .timeout import TIMEOUT
from .views import CuriousCargoView, EventView, event_view, hidden, hidden_position, view


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


GameRecord = Game[State, Command, ev.E, Options, Position]


def _edition(edition: int) -> GameRecord:
    """The game under a rules edition: its ``evolve`` records the edition in the state when the
    opening event folds, and the rules read it where behaviour changed (docs/rules/
    curious-cargo.md, "Rules editions")."""
    return Game(
        id="curious-cargo",
        title="Curious Cargo",
        min_seats=2,
        max_seats=2,
        state_type=State,
        command_type=Command,
        event_type=ev.Event,
        options_type=Options,
        seats=lambda state: len(state.players),
        decider=Decider(
            start=rules.start,
            decide=rules.decide,
            evolve=folder(edition),
            legal=legal,
            grammar=grammar,
            to_act=to_act,
            outcome=outcome,
            hidden=hidden,
        ),
        presentation=Presentation(
            view_type=CuriousCargoView,
            view=view,
            event_view_type=EventView,
            event_view=event_view,
            draw=svg,
            #: the components (tiles, trucks, board) and the player boards as the data files
            #: hold them
            assets=data_assets("domain.curious_cargo", "components", "boards"),
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


CURIOUS_CARGO: GameRecord = _edition(EDITION)
#: Every rules edition this code plays and re-adjudicates (the registry's ``editions``).
EDITIONS: dict[int, GameRecord] = {1: _edition(1), EDITION: CURIOUS_CARGO}
