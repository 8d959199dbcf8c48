"""The clock's part of a table's decisions, on a :class:`~domain.platform.table.Table` and the
time given (pure): what a move appends besides the game's events, and what firing a seat's
due deadline appends — an expiry, or the sitting-in bot's move. The service runs these; the
audit runs them again on the recorded times and compares (``service.audit.adjudication``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from domain.kernel import Rng
from domain.platform import clocks
from domain.platform.table import Table


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
    after = rules.fold(game_events, table.state) if game_events else table.state
    return [
        *clocks.returning(clock, seat),
        *game_events,
        clocks.after_move(clock, rules, after, seat, now),
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
    if clock.seats[seat].sitting_in:
        bot = rules.sitting_in(seat, version)
        command, events = clocks.bot_move(
            clock, rules, table.state, seat, now, version, rng_at(seed), bot.choose
        )
        return Fired(seat, msgspec.to_builtins(command), events)
    deadline = clock.seats[seat].deadline
    events = clocks.expire(
        clock, rules, table.state, seat, now, version, rng_at(seed), rules.expiry_command
    )
    body = {"type": "clock.expired", "seat": seat, "deadline": msgspec.to_builtins(deadline)}
    return Fired(seat, body, events)


def presence(table: Table, seat: int, leave: bool, now: datetime) -> list[Any]:
    """A player asking to leave (the bot sits in) or to come back: the events (none if the
    seat is already so, the game has no clock, or it is over — nothing is asked of anyone
    then, so a leave or a return recorded after the end is not what the rules produce — and
    none for a leave asked after the seat's time ran out, before its expiry)."""
    if table.clock is None or table.state is None or table.rules.outcome(table.state) is not None:
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
