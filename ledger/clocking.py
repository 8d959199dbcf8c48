"""The clock's part of adjudication (docs/api.md, "Clocks"): in a game with a turn clock, every
clock event is re-derived by the platform's pure clock rules (``domain.platform.referee``) from
the table before it and the time it carries, and that time is checked against the recorded
times:

* a clock event's ``at`` is not after its own events were recorded (a move's and an expiry's are
  recorded at their ``at``; a clock started with the set-up is recorded just after, and dated
  not before the table was full). Otherwise not checked
  against the events before it: instances' clocks may differ by a little, and the order of the
  stream is the order of the compare-and-set appends;
* an expiry (``clock.expired``) was recorded at or after the deadline the table held for its
  seat, and re-running it (the game's timeout rules, the same generator) gives the same events;
* no player's move was recorded at or after its seat's deadline (the service refuses it), and a
  command that is no move (its events all cosmetic) has no clock event;
* the sitting-in bot's move is the greedy bot's own choice (asked again), recorded as the
  command, decided by the rules, with its clock set.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import msgspec

from domain.kernel import Rng
from domain.platform import clocks, referee
from domain.platform.clocks import ClockExpired, ClockSet
from domain.platform.events import is_platform
from domain.platform.table import Table
from ledger.evidence import canon
from ledger.records import CommandRecord, StoredEvent

#: The command types the platform records for a clock's own decisions.
EXPIRY = "clock.expired"
PRESENCE = ("clock.leave", "clock.return")

Finding = tuple[str, str] | None


def _compare(expected: Sequence[Any], stored: Sequence[StoredEvent]) -> Finding:
    want = [msgspec.to_builtins(e) for e in expected]
    have = [e for e in stored if e.type != "seed.revealed"]
    if len(want) != len(have):
        return (
            "adjudication.mismatch",
            f"the clock rules produce {len(want)} event(s) here, {len(have)} are stored",
        )
    for w, h in zip(want, have, strict=True):
        if w.get("type") != h.type or canon(w) != canon(h.data):
            return (
                "adjudication.mismatch",
                f"event {h.version} ({h.type}) is not what the clock rules produce",
            )
    return None


def _clock_time(
    group: Sequence[StoredEvent], before: datetime | None, exact: bool = False
) -> tuple[datetime | None, Finding]:
    """The decision's time (its ``clock.set``'s ``at``), checked against the recorded times:
    never after them; ``exact`` (a command's decision: a move, an expiry, a bot's move, whose
    events the service records at the time it decided them) not before them either — a
    backdated move would charge a Fischer bank less than the time used, a backdated expiry
    would start the next seat's clock before it was asked."""
    for event in group:
        if event.type == "clock.set":
            at = msgspec.convert(event.data, ClockSet).at
            if at > event.recorded_at:
                return at, ("clock.time", f"event {event.version} is dated after it was recorded")
            if exact and at != event.recorded_at:
                return at, (
                    "clock.time",
                    f"event {event.version} is dated {at.isoformat()}, before it was recorded "
                    f"at {event.recorded_at.isoformat()}",
                )
            return at, None
    return None, None


def check_setup(table: Table, group: Sequence[StoredEvent], before: datetime | None) -> Finding:
    """A ``clock.set`` appended with no command: the clock started with the set-up, so not
    before ``before``, when the lobby last changed (the seat that filled the table was taken;
    a clock dated earlier would put the first deadline before the game began)."""
    at, finding = _clock_time(group, before)
    if finding is not None or at is None:
        return finding or ("adjudication.orphan", "a platform event without a command")
    if before is not None and at < before:
        return (
            "clock.time",
            f"event {group[0].version}: the clock started at {at.isoformat()}, before the "
            f"table was full at {before.isoformat()}",
        )
    if table.clock is None:
        return "adjudication.orphan", "a clock event in a game without a clock"
    state = table.state
    if (
        state is None
        or table.rules.outcome(state) is not None
        or any(c.since is not None for c in table.clock.seats)
    ):
        return "adjudication.orphan", "a clock.set without a command, once the clock runs"
    return _compare(referee.started(table, at), group)


def check_move(
    table: Table,
    seat: int,
    produced: list[Any],
    group: Sequence[StoredEvent],
    before: datetime | None,
) -> Finding:
    """A player's move in a clocked game: recorded before its seat's deadline, with the clock
    events the clock rules append."""
    first = group[0]
    if clocks.overdue(table.clock, seat, first.recorded_at):
        return (
            "clock.late_move",
            f"seat {seat}'s move was recorded at {first.recorded_at.isoformat()}, after its "
            "time ran out",
        )
    if not clocks.is_move(table.rules, produced):
        # A command that moves nothing on (a cosmetic choice): no clock event at all.
        return _compare(produced, group)
    at, finding = _clock_time(group, before, exact=True)
    if finding is not None:
        return finding
    if at is None:
        return "clock.missing", "a move in a clocked game without its clock.set"
    return _compare(referee.with_clock(table, seat, produced, at), group)


def check_clock_command(
    table: Table,
    command: CommandRecord,
    decoded: Any,
    group: Sequence[StoredEvent],
    seed: bytes,
    before: datetime | None,
) -> Finding:
    """A decision the clock took: an expiry, the sitting-in bot's move, a leave or a return."""
    if table.clock is None or table.state is None or command.seat is None:
        return "adjudication.orphan", "a clock decision in a game without a running clock"
    seat = command.seat
    first = group[0]
    # A leave or a return is decided under the game's lock just before its append.
    at, finding = _clock_time(group, before, exact=command.type not in PRESENCE)
    if finding is not None:
        return finding
    if at is None:
        return "clock.missing", "a clock decision without its clock.set"
    if command.type == EXPIRY:
        if first.type != "clock.expired":
            return "adjudication.mismatch", "an expiry that does not start with clock.expired"
        expired = msgspec.convert(first.data, ClockExpired)
        deadline = table.clock.seats[seat].deadline
        if deadline is None or expired.deadline != deadline:
            return "clock.deadline", f"seat {seat} had no deadline {expired.deadline.isoformat()}"
        if first.recorded_at < deadline or expired.at < deadline:
            return (
                "clock.early_expiry",
                f"seat {seat}'s expiry was recorded at {first.recorded_at.isoformat()}, before "
                f"its deadline {deadline.isoformat()}",
            )
        return _compare(referee.fire(table, seat, expired.at, seed).events, group)
    if command.type in PRESENCE:
        return _compare(referee.presence(table, seat, command.type == PRESENCE[0], at), group)
    # The sitting-in bot's move: the recorded command, decided as any command.
    clock = table.clock
    if not clock.seats[seat].sitting_in:
        return "clock.no_bot", f"a bot move for seat {seat}, which no bot sat in for"
    # The greedy bot is pure (the state, the seat, the version it moves at): asked again, it
    # must choose the recorded command — not a move of the operator's choosing for an absent
    # player.
    choice = table.rules.sitting_in(seat, first.version).choose(table.state, seat)
    if canon(msgspec.to_builtins(choice)) != canon(msgspec.to_builtins(decoded)):
        return (
            "clock.bot_choice",
            f"the bot sitting in for seat {seat} chooses {msgspec.to_builtins(choice)}, not the "
            "recorded command",
        )
    _, events = clocks.bot_move(
        clock,
        table.rules,
        table.state,
        seat,
        at,
        first.version,
        lambda version: Rng(seed, version),
        lambda state, s: decoded,
        referee.resigned_moves(table, lambda version: Rng(seed, version)),
    )
    return _compare(events, group)


def expiry_checks(
    table: Table, command: CommandRecord, decision: Sequence[StoredEvent], seed: bytes, live: bool
) -> list[tuple[str, bool, str]]:
    """A dispute file's checks of an expiry's game events, as of any command's (docs/api.md,
    "Clocks"): the seat was asked (``to_act``); the game's timeout rules re-run on the state
    before, each command with ``Rng(seed, its first version)``, give exactly the stored game
    events (``rules``); each command they sent was listed as legal for the seat at its point
    (``listed_as_legal``)."""
    state = table.state
    seat = command.seat
    if state is None or seat is None or not decision:
        return []
    rules = table.rules
    to_act = rules.to_act(state)
    found = [
        (
            "to_act",
            seat in to_act,
            f"seat {seat}'s time ran out; the game waited for {to_act}",
        )
    ]
    first = decision[0].version + 1  # the timeout's first event follows clock.expired
    try:
        played = clocks.timeout_moves(
            rules,
            state,
            seat,
            lambda s: rules.expiry_command(s, seat),
            first,
            lambda version: Rng(seed, version),
            clocks.MAX_TIMEOUT_COMMANDS,
        )
        # then the resigned seats' minimal moves, as the expiry appends them (``referee.fire``)
        then = referee.resigned_moves(table, lambda version: Rng(seed, version))
        extra = [] if then is None else then(played.state, first + len(played.events))[0]
    except Exception as error:  # a forged state may not even re-run
        return [*found, ("rules", False, f"could not re-run the timeout rules: {error}")]
    want = [canon(msgspec.to_builtins(e)) for e in [*played.events, *extra]]
    have = [canon(e.data) for e in decision if not is_platform(e.type)]
    same = want == have
    sent = [str(c.__struct_config__.tag) for _, c in played.steps]
    found.append(
        (
            "rules",
            same,
            f"the game's timeout rules re-run on the state before ({len(sent)} command(s): "
            f"{', '.join(sent) or 'none'}), each with Rng(seed, its first version) from "
            f"{first}, {'produce exactly' if same else 'do NOT produce'} these events",
        )
    )
    listed = all(
        msgspec.to_builtins(c) in [msgspec.to_builtins(x) for x in rules.legal(s, seat)]
        for s, c in played.steps
    )
    counted = "" if live else f" ({len(played.steps)} command(s))"
    found.append(
        (
            "listed_as_legal",
            listed,
            f"each command the timeout sent{counted} was one of the seat's legal commands "
            "at its point",
        )
    )
    return found


def dispute_check(
    table: Table, command: CommandRecord, decision: Sequence[StoredEvent], seed: bytes
) -> tuple[str, bool, str] | None:
    """A dispute file's ``clock`` check of a decision in a clocked game (None: no clock): the
    clock events re-derived and the times checked, as the audit does."""
    if table.clock is None or table.state is None or command.seat is None or not decision:
        return None
    first = decision[0]
    deadline = table.clock.seats[command.seat].deadline
    when = f"recorded at {first.recorded_at.isoformat()}; seat {command.seat}'s deadline was " + (
        "none" if deadline is None else deadline.isoformat()
    )
    try:
        if command.type == EXPIRY or command.type in PRESENCE:
            finding = check_clock_command(table, command, None, decision, seed, None)
        else:
            body = command.body.get("command") if isinstance(command.body, dict) else None
            decoded = table.rules.decode_command(body or {})
            if first.type == "clock.bot":
                finding = check_clock_command(table, command, decoded, decision, seed, None)
            else:
                produced = table.rules.decide(
                    table.state, command.seat, decoded, Rng(seed, first.version)
                )
                finding = check_move(table, command.seat, produced, decision, None)
    except Exception as error:  # a forged decision may not even re-run
        finding = ("adjudication.error", f"could not re-run: {error}")
    if finding is None:
        return "clock", True, f"the clock rules produce these clock events; {when}"
    return "clock", False, f"{finding[0]}: {finding[1]}; {when}"
