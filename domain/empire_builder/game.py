"""Empire Builder wired into the kernel's game protocol."""

from __future__ import annotations

from typing import Any, ClassVar

from domain.kernel import Viewer, WiredGame, Wiring
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


class EmpireBuilder(WiredGame[State, Command, ev.E, Options, Position]):
    id: ClassVar[str] = "empire-builder"
    title: ClassVar[str] = "Empire Builder"
    min_seats: ClassVar[int] = rules.MIN_SEATS
    max_seats: ClassVar[int] = rules.MAX_SEATS
    view_type: ClassVar[type[EmpireBuilderView]] = EmpireBuilderView
    event_view_type: ClassVar[Any] = EventView
    picture_loads: ClassVar[frozenset[str]] = frozenset(LOADS)
    #: the map, and the loads (with their supply cities), demand cards and event cards as the
    #: data files hold them
    assets: ClassVar[dict[str, bytes]] = {
        "map": MAP_BYTES, **data_assets("domain.empire_builder", "loads", "demands", "events")
    }
    #: Uniformly random play spends all its money on track and never wins: bots stop after 25
    #: turns each (see docs/rules/empire-builder.md, "turn limit").
    query_type: ClassVar[Any] = Query
    bot_options: ClassVar[dict[str, Any] | None] = {"turn_limit": 25}

    def to_act(self, state: State) -> list[int]:
        current = state.current()
        return [] if current is None else sorted({current, *state.pending})

    def final_scores(self, state: State) -> list[int]:
        return [state.worth(s) for s in range(state.seats)]  # cash less debt, as the win

    def final_details(self, state: State) -> dict[str, Any]:
        return {
            "reason": state.reason,
            "connected_majors": [rules.connected_majors(state, s) for s in range(state.seats)],
        }

    def answer(self, state: State, viewer: Viewer, query: Any) -> dict[str, Any]:
        return ask(state, viewer, query)


EMPIRE_BUILDER = EmpireBuilder(
    Wiring(state_type=State, command_type=Command, event_type=ev.Event, options_type=Options,
           position_type=Position, start=rules.start, start_from_position=rules.start_from_position,
           decide=rules.decide, evolve=evolve, legal=legal, view=view, event_view=event_view,
           export_position=position_of, svg=svg, grammar=grammar)
)
