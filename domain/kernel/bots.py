"""Bots that play a game to its end: the uniform random bot for any registered game
(``play_random_game``, picking from ``legal``), and a table of per-seat bots of the
:class:`Bot` shape (``play_bot_game``: each game's scripted greedy player,
``domain/<game>/greedy.py``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from .errors import RuleError
from .game import Game, Outcome
from .localgame import LocalGame
from .rng import Rng
from .timeouts import Bot

S = TypeVar("S")
C = TypeVar("C")


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


def play_bot_game(
    game: Game[Any, Any, Any, Any, Any],
    seed: bytes,
    bots: Sequence[Bot],
    options: Any = None,
    *,
    max_commands: int = 1_000_000,
) -> tuple[LocalGame[Any, Any, Any, Any, Any], Outcome]:
    """Play a whole game, seat ``i`` by ``bots[i]``; return the table and outcome. The first
    seat of ``to_act`` moves (simultaneous steps are played one seat after the other). A command
    the rules refuse raises its :class:`RuleError`: a bot must only send accepted commands."""
    if options is None:
        options = game.decode_options(game.bot_options)
    table = LocalGame.new(game, seed, len(bots), options)
    for _ in range(max_commands):
        outcome = game.outcome(table.state)
        if outcome is not None:
            return table, outcome
        waiting = game.to_act(table.state)
        if not waiting:
            raise BotGameStalled("the game is not finished but nobody is to act")
        seat = waiting[0]
        table.submit(seat, bots[seat].choose(table.state, seat))
    raise BotGameStalled(f"no result after {max_commands} commands")


def best_by_trial(
    game: Game[S, C, Any, Any, Any],
    state: S,
    seat: int,
    commands: Sequence[C],
    value: Callable[[S], float],
    rng: Rng,
    trial: Rng,
) -> C:
    """The command of ``commands`` whose result scores best by ``value``: each is decided on
    ``state`` with the bot's own ``trial`` generator (its draws are guesses, not the game's next
    draws) and its events folded; a refused command is skipped. Ties are broken by ``rng``."""
    scored: list[tuple[float, C]] = []
    for command in commands:
        try:
            events = game.decide(state, seat, command, trial)
        except RuleError:
            continue
        scored.append((value(game.fold(events, state)), command))
    if not scored:
        raise BotGameStalled(f"seat {seat} has no command the rules accept")
    top = max(v for v, _ in scored)
    tied = [c for v, c in scored if v >= top - 1e-9]
    return tied[rng.below(len(tied))]
