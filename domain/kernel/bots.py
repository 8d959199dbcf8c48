"""A bot that plays any registered game to its end by picking uniformly from ``legal``."""

from __future__ import annotations

from typing import Any

from .game import Game, Outcome
from .localgame import LocalGame
from .rng import Rng


class BotGameStalled(RuntimeError):
    """The game wanted a command but no seat had a legal one, or it ran past its budget."""


def play_random_game(
    game: Game[Any, Any, Any, Any, Any],
    seed: bytes,
    seats: int,
    options: Any = None,
    *,
    bot_seed: bytes | None = None,
    max_commands: int = 1_000_000,
) -> tuple[LocalGame[Any, Any, Any, Any, Any], Outcome]:
    """Play a whole game with uniformly random legal commands; return the table and outcome.

    The bot's own choices come from a generator seeded by ``bot_seed`` (default: the game
    seed), so a bot game is reproducible.
    """
    if options is None:
        options = game.decode_options(game.bot_options)
    table = LocalGame.new(game, seed, seats, options)
    chooser = Rng(bot_seed if bot_seed is not None else seed, 0)
    for _ in range(max_commands):
        outcome = game.outcome(table.state)
        if outcome is not None:
            return table, outcome
        waiting = game.to_act(table.state)
        if not waiting:
            raise BotGameStalled("the game is not finished but nobody is to act")
        seat = chooser.choice(waiting)
        options_now = game.legal(table.state, seat)
        if not options_now:
            raise BotGameStalled(f"seat {seat} is to act but has no legal command")
        table.submit(seat, chooser.choice(options_now))
    raise BotGameStalled(f"no result after {max_commands} commands")
