"""What a turn clock's expiry does in this game (``Game.timeout``): ``end_turn``
when the rules allow it; where they ask for something else first (a card to keep in the draft,
loads to choose, an action point to spend), the first legal command.

No forfeit: the rules have none (docs/rules, "Decision: clocks")."""

from __future__ import annotations

from domain.kernel import Bot
from domain.kernel.timeouts import Timeout, bot_rng

from .greedy import GreedyBot

PREFER = ("end_turn", "keep_card", "choose_loads")


def sitting_in(seat: int, version: int) -> Bot:
    return GreedyBot(bot_rng(seat, version))


TIMEOUT = Timeout(prefer=PREFER, bot=sitting_in)
