"""What a turn clock's expiry does in this game (``Game.timeout``): ``end_turn``
(the train stays, nothing is built); where a choice is asked for (an event card's lost load, the
first turn's train), the first legal one.

No forfeit: the rules have none (docs/rules, "Decision: clocks")."""

from __future__ import annotations

from domain.kernel import Bot
from domain.kernel.timeouts import Timeout

from .greedy import GreedyBot

PREFER = ("end_turn",)


def sitting_in(seat: int, version: int) -> Bot:
    del seat, version  # it plans from the state alone
    return GreedyBot()


#: A player card's face changes nothing of the game: a turn clock does not count it as a move
#: (docs/api.md, "Clocks").
TIMEOUT = Timeout(prefer=PREFER, bot=sitting_in, cosmetic_events=frozenset({"face_chosen"}))
