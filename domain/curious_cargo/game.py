"""Curious Cargo wired into the kernel's game protocol."""

from __future__ import annotations

from typing import Any, ClassVar

from domain.kernel import WiredGame, Wiring
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
from .views import CuriousCargoView, EventView, event_view, hidden, hidden_position, view


class CuriousCargo(WiredGame[State, Command, ev.E, Options, Position]):
    id: ClassVar[str] = "curious-cargo"
    title: ClassVar[str] = "Curious Cargo"
    min_seats: ClassVar[int] = 2
    max_seats: ClassVar[int] = 2
    view_type: ClassVar[type[CuriousCargoView]] = CuriousCargoView
    event_view_type: ClassVar[Any] = EventView
    #: the components (tiles, trucks, board) as the data file holds them
    assets: ClassVar[dict[str, bytes]] = data_assets("domain.curious_cargo", "components")

    def to_act(self, state: State) -> list[int]:
        return state.to_act()

    def final_scores(self, state: State) -> list[int]:
        return [s.total for s in state.scores]

    def final_details(self, state: State) -> dict[str, Any]:
        return {"scores": [self.to_builtins(s) for s in state.scores]}


CURIOUS_CARGO = CuriousCargo(
    Wiring(state_type=State, command_type=Command, event_type=ev.Event, options_type=Options,
           position_type=Position, start=rules.start, start_from_position=rules.start_from_position,
           decide=rules.decide, evolve=evolve, legal=legal, view=view, event_view=event_view,
           export_position=position_of, svg=svg, hidden=hidden, hidden_position=hidden_position,
           grammar=grammar)
)
