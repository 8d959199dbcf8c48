"""The platform's part of a table's decisions, on a :class:`~domain.platform.table.Table` and
the time given (pure): resign and abort, decided here once for every game (:func:`decide`, which
every command goes through); what a move appends besides the game's events, and what firing a
seat's due deadline appends — an expiry, or the sitting-in bot's move. The service runs these; the
audit runs them again on the recorded times and compares (``ledger.adjudication``)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import msgspec

from domain.kernel import Rng, RuleError
from domain.platform import clocks
from domain.platform.events import ENDING_COMMANDS, Abort, Aborted, Ending, Resign, Resigned
from domain.platform.table import (
    Table,
    abortable,
    copy_table,
    live,
    remaining_seats,
    table_to_act,
)


def rng_at(seed: bytes) -> clocks.RngAt:
    return lambda version: Rng(seed, version)


def with_clock(table: Table, seat: int, game_events: list[Any], now: datetime) -> list[Any]:
    """A player's accepted move, as appended: ``clock.returned`` first if the bot sat in for
    the seat, the game's events, then ``clock.set`` (a game without a clock, or a command that
    is no move — :func:`~domain.platform.clocks.is_move`, a cosmetic choice: the game's
    events alone, every clock left as it is)."""
    clock = table.clock
    if clock is None or not clocks.is_move(table.rules, game_events):
        return game_events
    rules = table.rules
    own = [e for e in game_events if not isinstance(e, (Resigned, Aborted))]
    after = rules.fold(own, table.state) if own else table.state
    asked = None
    if len(own) < len(game_events):  # a resignation or an abort: who is asked now
        ending = copy_table(table)
        ending.state = after
        for e in game_events:
            if isinstance(e, Aborted):
                ending.ended = "aborted"
            elif isinstance(e, Resigned):
                ending.resigned = [*ending.resigned, e.seat]
                if len(remaining_seats(table.seats, ending.resigned)) <= 1:
                    ending.ended = "resigned"
        asked = table_to_act(ending) if rules.outcome(after) is None else []
    return [
        *clocks.returning(clock, seat),
        *game_events,
        clocks.after_move(clock, rules, after, seat, now, asked),
    ]


class Fired(msgspec.Struct):
    """What firing a seat's deadline appends: the events, and the command recorded for it
    (``{"type": "clock.expired", ...}`` or the sitting-in bot's command, as builtins)."""

    seat: int
    command: dict[str, Any]
    events: list[Any]


def fire(table: Table, seat: int, now: datetime, seed: bytes) -> Fired:
    """Fire ``seat``'s deadline at ``now`` (≥ the deadline): the bot's move if it sits in for
    the seat, else the expiry. ``seed``: the game's (the timeout's commands are decided like
    any command, ``Rng(seed, version)``)."""
    clock = table.clock
    if clock is None or table.state is None:
        raise ValueError("a game without a running clock has no deadline")
    rules = table.rules
    version = table.version + 1
    then = resigned_moves(table, rng_at(seed))
    if clock.seats[seat].sitting_in:
        bot = rules.sitting_in(seat, version)
        command, events = clocks.bot_move(
            clock, rules, table.state, seat, now, version, rng_at(seed), bot.choose, then
        )
        return Fired(seat, msgspec.to_builtins(command), events)
    deadline = clock.seats[seat].deadline
    events = clocks.expire(
        clock, rules, table.state, seat, now, version, rng_at(seed), rules.expiry_command, then
    )
    body = {"type": "clock.expired", "seat": seat, "deadline": msgspec.to_builtins(deadline)}
    return Fired(seat, body, events)


def presence(table: Table, seat: int, leave: bool, now: datetime) -> list[Any]:
    """A player asking to leave (the bot sits in) or to come back: the events (none if the
    seat is already so, the game has no clock, or it is over — nothing is asked of anyone
    then, so a leave or a return recorded after the end is not what the rules produce — and
    none for a leave asked after the seat's time ran out, before its expiry)."""
    if table.clock is None or table.state is None or table.status == "finished":
        return []
    if leave and clocks.overdue(table.clock, seat, now):
        # Out of time: the expiry comes first (the timeout's move, not the bot's better one;
        # else running out of time would cost nothing: leave, let the bot move, come back).
        return []
    return clocks.presence(table.clock, table.rules, table.state, seat, now, leave)


def started(table: Table, now: datetime) -> list[Any]:
    """The ``clock.set`` appended with a clocked game's set-up events (``table``: after
    them), or nothing."""
    if table.clock is None or table.state is None:
        return []
    return [clocks.start_clock(table.clock, table.rules, table.state, now)]


# --- resign and abort (docs/api.md "Ending a game") -----------------------------------------
#: How many minimal moves one decision may make for resigned seats (a guard: a game whose
#: minimal move never ends a turn would otherwise loop).
MINIMAL_MOVES_LIMIT = 10_000


def decode_command(rules: Any, raw: Mapping[str, Any] | bytes | str) -> Any:
    """A platform ending command, or the game's own command (``rules.decode_command``)."""
    kind = raw.get("type") if isinstance(raw, Mapping) else None
    if isinstance(kind, str) and kind in ENDING_COMMANDS:  # a list or dict is no tag
        return rules._decode(raw, Ending, "command.invalid")
    return rules.decode_command(raw)


def decide(table: Table, seat: int, command: Any, rng: Rng) -> list[Any]:
    """The events ``command`` by ``seat`` causes on the live ``table``: an ending command's,
    or the game's own (``rules.decide``), each followed by the minimal moves the resigned
    seats are due (docs/api.md "Ending a game").

    * ``resign``: any seat still in the game, at any time while it is live, on its turn or
      not: ``game.resigned``. At most one seat left: the game ends (``result.reason``
      ``resigned``). Else the others play on: the resigned seat keeps what it holds and is never
      asked again — whenever the rules wait for it, the game's minimal legal command (the clock
      expiry's, ``Game.expiry_command``) is sent for it in this same decision, so ``to_act``
      never names it; a result by the rules then ranks it last (``table.ranked_last``).
    * ``abort``: any seat, until every seat has moved (``Table.moved``): ``game.aborted``, the
      game ends with no result; afterwards ``rule.abort_too_late``.

    The audit re-runs this for every command (``ledger.adjudication``): a
    ``game.resigned`` the seat did not send is a mismatch."""
    rules = table.rules
    if isinstance(command, (Resign, Abort)):
        seats = table.seats
        if not 0 <= seat < seats:
            raise RuleError("rule.no_such_seat", f"this game has seats 0 to {seats - 1}")
        if not live(table):
            raise RuleError("rule.game_over", "the game is over")
        if seat in table.resigned:
            raise RuleError("rule.resigned", f"seat {seat} has resigned")
        if isinstance(command, Abort):
            if not abortable(table):
                raise RuleError(
                    "rule.abort_too_late", "every seat has moved: the game can no longer be aborted"
                )
            return [Aborted(seat)]
        resigned = [*table.resigned, seat]
        if len(remaining_seats(seats, resigned)) <= 1:
            return [Resigned(seat)]
        return [Resigned(seat), *minimal_moves(rules, table.state, resigned, rng)]
    if seat in table.resigned:
        raise RuleError("rule.resigned", f"seat {seat} has resigned")
    events: list[Any] = rules.decide(table.state, seat, command, rng)
    if not table.resigned:
        return events
    after = rules.fold(events, table.state) if events else table.state
    return [*events, *minimal_moves(rules, after, table.resigned, rng)]


def resigned_moves(table: Table, rng_at: clocks.RngAt) -> clocks.Then | None:
    """What a clock decision (an expiry, the sitting-in bot's move) appends for the resigned
    seats after its seat's events, as :func:`decide` does after a player's command: their
    minimal moves while the rules wait for one of them, decided with ``Rng(seed, version of
    the first of them)`` — so the clock never asks a resigned seat (its deadline never set).
    None when no seat has resigned."""
    if not table.resigned:
        return None
    rules, resigned = table.rules, list(table.resigned)

    def then(state: Any, version: int) -> tuple[list[Any], Any]:
        events = minimal_moves(rules, state, resigned, rng_at(version))
        return events, rules.fold(events, state) if events else state

    return then


def minimal_moves(rules: Any, state: Any, resigned: list[int], rng: Rng) -> list[Any]:
    """The game's minimal legal commands for the resigned seats, while the rules wait for one
    of them (and the game is not over): their events."""
    events: list[Any] = []
    for _ in range(MINIMAL_MOVES_LIMIT):
        if rules.outcome(state) is not None:
            return events
        due = [s for s in rules.to_act(state) if s in resigned]
        if not due:
            return events
        produced = rules.decide(state, due[0], rules.expiry_command(state, due[0]), rng)
        events.extend(produced)
        state = rules.fold(produced, state) if produced else state
    raise RuleError("rule.stalled", "the resigned seats' minimal moves do not end")
