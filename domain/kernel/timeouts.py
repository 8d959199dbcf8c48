"""What a turn clock's expiry does in a game, given by the game's record (``Game.timeout``):
the command types that end a turn as the rules allow, in the order the game prefers them, the
greedy bot that sits in for a seat, and whether the rules allow a forfeit (none of the four
games does: docs/rules).

:func:`minimal` is the shared way to "end the turn as the rules allow": the first command of the
game's preferred types (``end_turn``, a pass) that the rules accept, else the first legal
command, else — a position whose commands are too many to list — the bot's."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .errors import RuleError
from .rng import Rng

if TYPE_CHECKING:
    from .game import Game


class Bot(Protocol):
    """A scripted player: the command it sends for ``seat`` in ``state`` (one that the rules
    accept). It may keep a plan between calls: use one per seat and game."""

    def choose(self, state: Any, seat: int) -> Any: ...


class FirstLegal:
    """The bot of a game that names none: the first listed legal command."""

    def __init__(self, legal: Callable[[Any, int], list[Any]]) -> None:
        self.legal = legal

    def choose(self, state: Any, seat: int) -> Any:
        return self.legal(state, seat)[0]


@dataclass(frozen=True)
class Timeout:
    """A game's clock rules."""

    #: The command types (their ``type`` tags) an expiry prefers, first the one the game
    #: prefers most (``end_turn``); none: the first legal command.
    prefer: tuple[str, ...] = ()
    #: The greedy bot that sits in for ``seat`` (a fresh one per move: its choice is a pure
    #: function of the state, the seat and the version it moves at); None: :class:`FirstLegal`.
    bot: Callable[[int, int], Bot] | None = None
    #: Whether the game's rules allow a seat to forfeit (none of the four games does).
    forfeit: bool = False
    #: The tags of the events that change nothing of the game's progress (a cosmetic choice:
    #: Empire Builder's ``face_chosen``): a command whose events are all of these (or none) is
    #: no *move* of a turn clock — it neither starts, stops, charges nor credits a clock
    #: (``domain.platform.clocks.is_move``). Such an event must leave ``to_act``, ``legal``
    #: and ``outcome`` as they were (``tests/domain/test_clock_moves.py`` checks every game).
    cosmetic_events: frozenset[str] = frozenset()


def minimal(game: Game[Any, Any, Any, Any, Any], state: Any, seat: int) -> Any:
    """The game's own minimal legal command for ``seat``: the first listed legal command of
    the first type the game's ``timeout`` prefers that the rules accept, else the first legal
    command, else the sitting-in bot's choice."""
    listed = game.legal(state, seat)
    for kind in game.presentation.timeout.prefer:
        for command in listed:
            if command.__struct_config__.tag == kind:
                try:
                    game.decide(state, seat, command, Rng(b"\0" * 32, 0))
                except RuleError:
                    continue
                return command
    if listed:
        return listed[0]
    return game.sitting_in(seat, 0).choose(state, seat)


def bot_rng(seat: int, version: int) -> Rng:
    """The sitting-in bot's own generator for a move at ``version`` (its guesses and ties; the
    game's draws stay the game's)."""
    return Rng(b"manifest/sitting-in".ljust(32, b"."), version * 8 + seat)
