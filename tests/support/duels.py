"""A greedy bot against the uniform random bot, seat by seat in turn: the duel each game's greedy
tests play (``tests/domain/<game>/test_greedy.py``)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from domain.kernel import LocalGame, Rng


def duel_wins(
    game: Any,
    make_bot: Callable[[Rng], Any],
    options: Any,
    name: str,
    games: int,
    check_ending: Callable[[LocalGame[Any, Any, Any, Any, Any]], None],
) -> int:
    """How many of ``games`` two-seat games (seeded ``<name>/greedy/duel/<n>``) the greedy bot
    wins alone, seated first in even games and second in odd ones; each game's ending is
    checked by ``check_ending``."""
    wins = 0
    for n in range(games):
        seed = hashlib.sha256(f"{name}/greedy/duel/{n}".encode()).digest()
        me = n % 2
        table = LocalGame.new(game, seed, 2, options)
        bot, other = make_bot(Rng(seed, 1_000_000)), Rng(seed, 2_000_000)
        while game.to_act(table.state):
            seat = game.to_act(table.state)[0]
            if seat == me:
                table.submit(seat, bot.choose(table.state, seat))
            else:
                table.submit(seat, other.choice(game.legal(table.state, seat)))
        check_ending(table)
        wins += table.state.winners == [me]
    return wins
