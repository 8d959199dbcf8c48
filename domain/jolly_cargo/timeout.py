"""What a turn clock's expiry does in this game (:mod:`domain.platform.timeouts`): ``end_turn``
(the turn ends with the actions left unused); in the set-up, the first legal placement or ship.

No forfeit: the rules have none (docs/rules, "Decision: clocks")."""

from __future__ import annotations

from typing import Any

from domain.kernel import Bot
from domain.platform.timeouts import Timeout, bot_rng, minimal

from .greedy import GreedyBot

PREFER = ("end_turn",)


def sitting_in(seat: int, version: int) -> Bot:
    return GreedyBot(bot_rng(seat, version))


def timeout_command(state: Any, seat: int) -> Any:
    return minimal("jolly-cargo", state, seat, PREFER, sitting_in)


TIMEOUT = Timeout(command=timeout_command, bot=sitting_in)
