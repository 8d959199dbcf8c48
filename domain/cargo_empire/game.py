"""Cargo Empire wired into the kernel's game protocol."""

from __future__ import annotations

from typing import Any, ClassVar

from domain.kernel import WiredGame, Wiring
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
from .views import CargoEmpireView, EventView, event_view, hidden, hidden_position, view


class CargoEmpire(WiredGame[State, Command, ev.E, Options, Position]):
    id: ClassVar[str] = "cargo-empire"
    title: ClassVar[str] = "Cargo Empire"
    min_seats: ClassVar[int] = rules.MIN_SEATS
    max_seats: ClassVar[int] = rules.MAX_SEATS
    view_type: ClassVar[type[CargoEmpireView]] = CargoEmpireView
    event_view_type: ClassVar[Any] = EventView
    #: the map and the components as the data files hold them
    assets: ClassVar[dict[str, bytes]] = data_assets("domain.cargo_empire", "map", "components")

    def to_act(self, state: State) -> list[int]:
        current = state.current()
        return [] if current is None else [current]

    def final_scores(self, state: State) -> list[int]:
        return [s.total for s in state.scores]

    def final_details(self, state: State) -> dict[str, Any]:
        return {
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
        }


CARGO_EMPIRE = CargoEmpire(
    Wiring(state_type=State, command_type=Command, event_type=ev.Event, options_type=Options,
           position_type=Position, start=rules.start, start_from_position=rules.start_from_position,
           decide=rules.decide, evolve=evolve, legal=legal, view=view, event_view=event_view,
           export_position=position_of, svg=svg, hidden=hidden, hidden_position=hidden_position)
)
