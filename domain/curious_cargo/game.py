"""Curious Cargo's decider record: its types, metadata and functions, for the kernel."""

from __future__ import annotations

import msgspec

from domain.kernel import Game, Outcome
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
        #: the components (tiles, trucks, board) and the player boards as the data files hold them
        assets=data_assets("domain.curious_cargo", "components", "boards"),
        state_type=State,
        command_type=Command,
        event_type=ev.Event,
        options_type=Options,
        position_type=Position,
        start=rules.start,
        start_from_position=rules.start_from_position,
        decide_rules=rules.decide,
        evolve=folder(edition),
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
        draw=svg,
        view_type=CuriousCargoView,
        event_view_type=EventView,
        timeout=TIMEOUT,
    )


CURIOUS_CARGO: GameRecord = _edition(EDITION)
#: Every rules edition this code plays and re-adjudicates (the registry's ``editions``).
EDITIONS: dict[int, GameRecord] = {1: _edition(1), EDITION: CURIOUS_CARGO}
