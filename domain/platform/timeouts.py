"""What a clock does in each game, registered here without touching the games' rules: the
command an expiry sends for a seat (``domain/<game>/timeout.py``, pure), the greedy bot that
sits in for a seat, and whether the game allows a forfeit (none of the four does: docs/rules).

:func:`minimal` is the shared way to "end the turn as the rules allow": the first command of the
game's preferred types (``end_turn``, a pass) that the rules accept, else the first legal
command, else — a position whose commands are too many to list — the greedy bot's."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from domain.kernel import Bot, Rng, RuleError
from domain.registry import get_game


@dataclass(frozen=True)
class Timeout:
    """A game's clock rules."""

    #: The command an expiry sends for ``seat`` in ``state`` (repeated until its turn ends).
    command: Callable[[Any, int], Any]
    #: The greedy bot that sits in for ``seat`` (a fresh one per move: its choice is a pure
    #: function of the state, the seat and the version it moves at).
    bot: Callable[[int, int], Bot]
    #: Whether the game's rules allow a seat to forfeit (none of the four games does).
    forfeit: bool = False

    @classmethod
    def ending_turns(
        cls, game_id: str, prefer: Sequence[str], bot: Callable[[int, int], Bot]
    ) -> Timeout:
        """The clock rules of a game whose expiry sends its :func:`minimal` command (the
        first accepted of the ``prefer`` types) and whose seat ``bot`` sits in."""
        return cls(command=lambda state, seat: minimal(game_id, state, seat, prefer, bot), bot=bot)


def minimal(
    game_id: str, state: Any, seat: int, prefer: Sequence[str], bot: Callable[[int, int], Bot]
) -> Any:
    """The game's own minimal legal command for ``seat``: the first listed legal command of
    the first type in ``prefer`` that ``decide`` accepts, else the first legal command, else
    the bot's choice."""
    rules = get_game(game_id)
    listed = rules.legal(state, seat)
    for kind in prefer:
        for command in listed:
            if command.__struct_config__.tag == kind:
                try:
                    rules.decide(state, seat, command, Rng(b"\0" * 32, 0))
                except RuleError:
                    continue
                return command
    if listed:
        return listed[0]
    return bot(seat, 0).choose(state, seat)


def _registry() -> dict[str, Timeout]:
    from domain.cargo_empire import timeout as cargo_empire
    from domain.curious_cargo import timeout as curious_cargo
    from domain.empire_builder import timeout as empire_builder
    from domain.jolly_cargo import timeout as jolly_cargo

    return {
        "jolly-cargo": jolly_cargo.TIMEOUT,
        "cargo-empire": cargo_empire.TIMEOUT,
        "empire-builder": empire_builder.TIMEOUT,
        "curious-cargo": curious_cargo.TIMEOUT,
    }


_TIMEOUTS: dict[str, Timeout] = {}


def timeout_of(game_id: str) -> Timeout:
    """The clock rules of a registered game."""
    if not _TIMEOUTS:
        _TIMEOUTS.update(_registry())
    return _TIMEOUTS[game_id]


def bot_rng(seat: int, version: int) -> Rng:
    """The sitting-in bot's own generator for a move at ``version`` (its guesses and ties; the
    game's draws stay the game's)."""
    return Rng(b"manifest/sitting-in".ljust(32, b"."), version * 8 + seat)
