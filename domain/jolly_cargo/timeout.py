"""What a turn clock's expiry does in this game (``Game.timeout``): ``end_turn``
(the turn ends with the actions left unused); in the set-up, the first legal placement or ship.

No forfeit: the rules have none (docs/rules, "Decision: clocks")."""

from __future__ import annotations

from domain.kernel import Bot
from domain.kernel.timeouts import Timeout, bot_rng

from .greedy import GreedyBot

PREFER = ("end_turn",)


def sitting_in(seat: int, version: int) -> Bot:
    return GreedyBot(bot_rng(seat, version))


TIMEOUT = Timeout(prefer=PREFER, bot=sitting_in)
