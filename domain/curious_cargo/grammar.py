"""What ``legal`` does not list (:mod:`domain.kernel.grammar`): the cleanup ``store`` (every
tile in hand once, in any order, each on any stack: 3ⁿ·n! commands, of which ``legal`` lists
the hand's order on each stack), a ``choose_loads`` with its docks and a ``trade_tiles``
with its two stacks in any order."""

from __future__ import annotations

from domain.kernel.grammar import AnyOrder, Assignment, Rule

from . import commands as cmd
from .components import STACKS
from .state import State


def grammar(state: State, seat: int, listed: list[cmd.Command]) -> list[Rule]:
    rules: list[Rule] = []
    if any(isinstance(c, cmd.Store) for c in listed):
        hand = list(state.players[seat].hand)
        rules.append(Assignment("store", "placements", "tile", hand, "stack", list(range(STACKS))))
    if any(isinstance(c, cmd.ChooseLoads) for c in listed):
        rules.append(AnyOrder("choose_loads", "docks"))
    if any(isinstance(c, cmd.TradeTiles) for c in listed):
        rules.append(AnyOrder("trade_tiles", "stacks"))
    return rules
