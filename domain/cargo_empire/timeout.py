"""What a turn clock's expiry does in this game (``Game.timeout``): ``gather`` from
the deck (``market: null``, listed first: the pass the rules allow instead of a delivery); in
the set-up, the first legal trading post.

No forfeit: the rules have none (docs/rules, "Decision: clocks")."""

from __future__ import annotations

from domain.kernel import Bot
from domain.kernel.timeouts import Timeout, bot_rng

from .greedy import GreedyBot

PREFER = ("gather",)


def sitting_in(seat: int, version: int) -> Bot:
    return GreedyBot(bot_rng(seat, version))


TIMEOUT = Timeout(prefer=PREFER, bot=sitting_in)
