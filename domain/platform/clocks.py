"""Turn clocks: the terms a game is created with, each seat's clock, the clock events, and what
an expiry, a seat left to the bot and a player's return append — pure, with the time given.

Nothing here reads a clock. Every function that needs the time takes ``now``; the service
passes its clock's time (and records the events at that time), the audit re-derives every clock
event from the recorded times, and tests pass a fake clock's.

How the fold sees time (docs/api.md, "Clocks"): it never reads ``recorded_at``. The clock
events carry the times they rely on: ``clock.set`` holds every seat's clock after a decision
(when it started running, its deadline, its bank), computed at the decision's time ``at``, which
the service records as the events' ``recorded_at`` (the audit checks ``at`` against it). So a
table folds from event data alone, as every other part of the table does.

A seat's clock runs while the seat is asked for a command (it is in ``to_act``); every command
the seat's player sends that moves the game on is one *move* (:func:`is_move`: its events are
not all of the game's ``cosmetic_events``): it stops the clock (a Fischer bank is charged the
time used and credited the increment, up to the bank's cap) and, if the seat is still to act,
starts it again. A command that moves nothing on (a cosmetic choice; talk and queries are no
commands of the game at all) leaves every clock as it is. Kinds:

* ``none``: no clock (the default; the game behaves as before clocks existed);
* ``turn``: ``seconds`` per move;
* ``fischer``: a bank of ``bank_seconds``, charged per move, ``increment_seconds`` added after
  each move (not the sitting-in bot's: while it sits in, the bank stays as the player left it);
* ``correspondence``: ``days`` per move.

When a seat's deadline passes, ``clock.expired`` is appended with what the game's timeout rules
make of it (``Game.expiry_command``): the turn ends as the rules allow. After
``sit_in_after`` expiries in a row (0: never), or when the player asks to leave, the game's
greedy bot sits in for the seat (``clock.sat_in``) — its deadline is then the time it starts
running, so it is due at once — until the seat's player sends a command with the seat's token
(``clock.returned``).

Every game comes to rest: ``rest_after`` expiries in a row with no player's move in between
(``Clock.idle``, kept in ``clock.set``) stop every clock — nothing is due, nothing expires —
until a player moves or comes back (docs/api.md, "Clocks").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import msgspec

from domain.kernel import Rng

#: How long a term may be, so a deadline stays a sane timestamp (the platform's rule, not an
#: operator's limit: docs/api.md, "Clocks").
MAX_SECONDS = 7 * 24 * 3600
MAX_DAYS = 60
#: The most ``rest_after`` a game may be created with.
MAX_REST_AFTER = 10_000
#: Commands one expiry may send for a seat (the timeout's way to the turn's end).
MAX_TIMEOUT_COMMANDS = 16

Kind = Literal["none", "turn", "fischer", "correspondence"]


class ClockTerms(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """The clock a game is created with (``POST /v1/games`` ``clock``; kept in
    ``lobby.created``)."""

    kind: Kind = "none"
    #: ``turn``: seconds per move.
    seconds: int = 0
    #: ``fischer``: the starting bank and the increment per move, in seconds.
    bank_seconds: int = 0
    increment_seconds: int = 0
    #: ``correspondence``: days per move.
    days: int = 0
    #: Expiries in a row after which the greedy bot sits in for the seat (0: never).
    sit_in_after: int = 3
    #: ``fischer``: the most a bank may hold, in seconds (0: :data:`MAX_SECONDS`, the cap of a
    #: game created before caps were recorded). The service fills it in
    #: (``MANIFEST_CLOCK_MAX_BANK``).
    max_bank_seconds: int = 0
    #: Expiries in a row, of any seats, with no player's move between them, after which every
    #: clock stops until a player moves or comes back (0: never — a game created before the
    #: rule). The service fills it in (``MANIFEST_CLOCK_REST_AFTER``).
    rest_after: int = 0


class ClockTermsInvalid(ValueError):
    """Terms that make no clock (the service answers 422 ``clock.invalid``)."""


def check_terms(terms: ClockTerms) -> ClockTerms:
    """The terms, if they make a clock; else :class:`ClockTermsInvalid` saying why."""

    def within(name: str, value: int, low: int, high: int) -> None:
        if not low <= value <= high:
            raise ClockTermsInvalid(f"clock.{name} must be from {low} to {high}, not {value}")

    unused: dict[str, int] = {
        "seconds": terms.seconds,
        "bank_seconds": terms.bank_seconds,
        "increment_seconds": terms.increment_seconds,
        "days": terms.days,
        "max_bank_seconds": terms.max_bank_seconds,
    }
    used: tuple[str, ...] = ()
    if terms.kind == "turn":
        within("seconds", terms.seconds, 1, MAX_SECONDS)
        used = ("seconds",)
    elif terms.kind == "fischer":
        within("bank_seconds", terms.bank_seconds, 1, MAX_SECONDS)
        within("increment_seconds", terms.increment_seconds, 0, MAX_SECONDS)
        if terms.max_bank_seconds:
            within("max_bank_seconds", terms.max_bank_seconds, terms.bank_seconds, MAX_SECONDS)
        used = ("bank_seconds", "increment_seconds", "max_bank_seconds")
    elif terms.kind == "correspondence":
        within("days", terms.days, 1, MAX_DAYS)
        used = ("days",)
    for name, value in unused.items():
        if name not in used and value != 0:
            raise ClockTermsInvalid(f"clock.{name} has no meaning for a {terms.kind} clock")
    within("sit_in_after", terms.sit_in_after, 0, 1000)
    within("rest_after", terms.rest_after, 0, MAX_REST_AFTER)
    return terms


def max_bank_ms(terms: ClockTerms) -> int:
    """The most a Fischer bank holds, in milliseconds."""
    return (terms.max_bank_seconds or MAX_SECONDS) * 1000


class SeatClock(msgspec.Struct, frozen=True, omit_defaults=True):
    """One seat's clock. ``since``/``deadline``: when it started running and when it runs out
    (None: not running — the seat is not asked for anything)."""

    since: datetime | None = None
    deadline: datetime | None = None
    #: ``fischer``: milliseconds left in the bank when it started running (or now, stopped).
    #: ``turn``/``correspondence``: the milliseconds a player who left in the middle of a move
    #: had left, kept for its return while the bot has not moved (0: none kept).
    bank_ms: int = 0
    #: Expiries in a row (a move by the seat's player sets it back to 0).
    expiries: int = 0
    #: The greedy bot plays for the seat.
    sitting_in: bool = False


class Clock(msgspec.Struct):
    """Every seat's clock, in a table (None in a game without a clock)."""

    terms: ClockTerms
    seats: list[SeatClock]
    #: Expiries in a row with no player's move between them (``clock.set``'s ``idle``).
    idle: int = 0

    @property
    def resting(self) -> bool:
        """The game has come to rest: every clock is stopped until a player moves or comes
        back (``rest_after`` expiries in a row with no player's move)."""
        return resting(self.terms, self.idle)


def resting(terms: ClockTerms, idle: int) -> bool:
    return terms.rest_after > 0 and idle >= terms.rest_after


# --- events -----------------------------------------------------------------------------------
class ClockSet(msgspec.Struct, frozen=True, tag="clock.set", tag_field="type", omit_defaults=True):
    """Every seat's clock after a decision taken at ``at`` (appended last, before any
    ``seed.revealed``, whenever a decision changes a clock), and the game's expiries in a row
    with no player's move (``idle``; absent: 0)."""

    at: datetime
    seats: list[SeatClock]
    idle: int = 0


class ClockExpired(msgspec.Struct, frozen=True, tag="clock.expired", tag_field="type"):
    """``seat``'s time ran out at ``deadline``; found at ``at`` (≥ ``deadline``). Followed by
    what the game's timeout rules made of it."""

    seat: int
    deadline: datetime
    at: datetime


class ClockSatIn(msgspec.Struct, frozen=True, tag="clock.sat_in", tag_field="type"):
    """The greedy bot plays for ``seat`` from now on: after ``expiries`` in a row, or because
    its player ``left``."""

    seat: int
    reason: Literal["expiries", "left"]


class ClockReturned(msgspec.Struct, frozen=True, tag="clock.returned", tag_field="type"):
    """``seat``'s player is back (it sent a command with the seat's token)."""

    seat: int


class ClockBot(msgspec.Struct, frozen=True, tag="clock.bot", tag_field="type"):
    """The events after it are the sitting-in bot's move for ``seat``."""

    seat: int


ClockEvent = ClockSet | ClockExpired | ClockSatIn | ClockReturned | ClockBot


# --- arithmetic -------------------------------------------------------------------------------
def utc(at: datetime) -> datetime:
    """``at`` in UTC with microseconds (as events' times are recorded)."""
    if at.tzinfo is None:
        raise ValueError("a clock's time must be timezone-aware")
    return at.astimezone(UTC)


def _allowance(terms: ClockTerms, bank_ms: int) -> timedelta:
    if terms.kind == "turn":
        return timedelta(seconds=terms.seconds)
    if terms.kind == "fischer":
        # A bank never holds more than its cap (a forged stored one included): the deadline
        # stays a timestamp.
        return timedelta(milliseconds=min(bank_ms, max_bank_ms(terms)))
    if terms.kind == "correspondence":
        return timedelta(days=terms.days)
    raise ValueError("a game without a clock has no deadlines")


def _elapsed_ms(since: datetime, now: datetime) -> int:
    return max(0, (now - since) // timedelta(milliseconds=1))


def _left_ms(deadline: datetime, now: datetime) -> int:
    """The time left until ``deadline``, in milliseconds rounded up, at least 1 (a leave is
    taken only before the seat's time runs out)."""
    return max(1, -((now - deadline) // timedelta(milliseconds=1)))


def new_clock(terms: ClockTerms | None, seats: int) -> Clock | None:
    """The clock of a game created with ``terms`` (None: no clock), before anyone is to act.
    Terms that make no clock raise :class:`ClockTermsInvalid` here too: a stored
    ``lobby.created`` is not trusted to hold terms the service would have refused (an empty
    bank, a term past any timestamp)."""
    if terms is None or terms.kind == "none":
        return None
    check_terms(terms)
    bank = terms.bank_seconds * 1000 if terms.kind == "fischer" else 0
    return Clock(terms, [SeatClock(bank_ms=bank) for _ in range(seats)])


def advance(
    clock: Clock,
    to_act: Sequence[int],
    now: datetime,
    *,
    moved: int | None = None,
    expired: int | None = None,
    sat_in: int | None = None,
    returned: int | None = None,
    rest: bool = False,
) -> list[SeatClock]:
    """Every seat's clock after a decision at ``now`` after which ``to_act`` are asked:
    ``moved``'s player sent a command (its clock stops, and starts again if it is still to
    act), ``expired``'s time ran out (its timeout moves were made for it), ``sat_in``'s seat
    is now played by the bot, ``returned``'s player is back (its expiries in a row stay: only
    a move sets them back). ``rest``: the game comes to (or stays at) rest — every clock
    stops and none starts."""
    now = utc(now)
    cap = max_bank_ms(clock.terms)
    out: list[SeatClock] = []
    for seat, c in enumerate(clock.seats):
        bank, expiries, sitting = c.bank_ms, c.expiries, c.sitting_in
        since, deadline = c.since, c.deadline
        if seat == sat_in:
            sitting = True
        if seat == returned:
            sitting = False
        if seat == moved and not sitting:
            expiries = 0
        if seat == expired:
            expiries += 1
        stop = since is not None and (
            rest or seat in (moved, expired, sat_in, returned) or seat not in to_act
        )
        fischer = clock.terms.kind == "fischer"
        if stop and since is not None:
            # A clock that ran for the bot (it sat in when the clock started) leaves the bank
            # alone: the bank is the player's time, neither charged nor credited by the bot.
            if fischer and not c.sitting_in:
                bank = max(0, bank - _elapsed_ms(since, now))
                if seat in (moved, expired):
                    bank = min(cap, bank + clock.terms.increment_seconds * 1000)
            elif not fischer and not c.sitting_in and seat == sat_in and seat != expired:
                # A player leaving in the middle of a move: the time it had left is kept for
                # its return (else leaving and coming back at once would be a fresh move).
                bank = _left_ms(deadline or now, now)
            elif not fischer and c.sitting_in and (seat != returned or seat == moved):
                bank = 0  # the bot or the player moved (or nothing is asked): that move is over
            since, deadline = None, None
        if since is None and seat in to_act and not rest:
            since = now
            if sitting:
                deadline = now
            elif not fischer and bank > 0:  # a player back in the middle of its move
                deadline, bank = now + timedelta(milliseconds=bank), 0
            else:
                deadline = now + _allowance(clock.terms, bank)
        out.append(SeatClock(since, deadline, bank, expiries, sitting))
    return out


def settle(
    clock: Clock,
    to_act: Sequence[int],
    now: datetime,
    *,
    moved: int | None = None,
    expired: int | None = None,
    sat_in: int | None = None,
    returned: int | None = None,
) -> ClockSet:
    """The ``clock.set`` of a decision at ``now`` (the arguments as :func:`advance`'s), with
    the game's expiries in a row with no player's move: a player's move (not the sitting-in
    bot's) or a return sets it to 0, an expiry adds one (in a game with a ``rest_after``); at
    ``rest_after`` the game rests (:attr:`Clock.resting`)."""
    idle = clock.idle
    player_moved = moved is not None and (moved == returned or not clock.seats[moved].sitting_in)
    if player_moved or returned is not None:
        idle = 0
    elif expired is not None and clock.terms.rest_after > 0:
        idle = min(idle + 1, clock.terms.rest_after)
    seats = advance(
        clock,
        to_act,
        now,
        moved=moved,
        expired=expired,
        sat_in=sat_in,
        returned=returned,
        rest=resting(clock.terms, idle),
    )
    return ClockSet(utc(now), seats, idle)


def is_move(rules: Any, events: Sequence[Any]) -> bool:
    """Whether a command's game ``events`` move the game on (a clock *move*): any of them is
    not one of the game's ``cosmetic_events`` (a command with no events, or only cosmetic
    ones — Empire Builder's ``choose_face`` — changes nothing of the game's progress and
    leaves every clock as it is)."""
    cosmetic: frozenset[str] = rules.cosmetic_events
    return any(str(e.__struct_config__.tag) not in cosmetic for e in events)


def overdue(clock: Clock | None, seat: int, now: datetime) -> bool:
    """Has ``seat``'s time run out at ``now``? (A move recorded then is refused.) Never for a
    seat the bot sits in for: its player may come back at any time (its deadline is the bot's
    turn, not the player's time)."""
    if clock is None or clock.seats[seat].sitting_in:
        return False
    deadline = clock.seats[seat].deadline
    return deadline is not None and utc(now) >= deadline


def due(clock: Clock | None, now: datetime) -> list[int]:
    """The seats whose deadline has passed at ``now``, earliest first."""
    if clock is None:
        return []
    now = utc(now)
    late = [(c.deadline, s) for s, c in enumerate(clock.seats) if c.deadline and c.deadline <= now]
    return [s for _, s in sorted(late)]


def next_deadline(clock: Clock | None) -> datetime | None:
    if clock is None:
        return None
    return min((c.deadline for c in clock.seats if c.deadline is not None), default=None)


# --- decisions --------------------------------------------------------------------------------
#: The generator for the decision whose first event gets version ``n`` (the service's
#: ``Rng(seed, n)``, as for any command).
RngAt = Callable[[int], Rng]

#: What a clock decision appends after its seat's events, before its ``clock.set``: given the
#: state and the version of the first event it would append, its events and the state after
#: them (``domain.platform.referee``: the resigned seats' minimal moves).
Then = Callable[[Any, int], tuple[list[Any], Any]]


def _then(then: Then | None, state: Any, version: int) -> tuple[list[Any], Any]:
    return ([], state) if then is None else then(state, version)


class Played(msgspec.Struct):
    """What a clock decision appends (typed events, in order) and the game state after them;
    ``steps``: each command sent, with the state it was decided on."""

    events: list[Any]
    state: Any
    steps: list[tuple[Any, Any]] = []


def timeout_moves(
    rules: Any,
    state: Any,
    seat: int,
    commands: Callable[[Any], Any],
    version: int,
    rng_at: RngAt,
    limit: int,
) -> Played:
    """Send ``commands(state)`` for ``seat`` until it is not to act (or the game ends, or
    ``limit`` commands were sent); the first event gets version ``version``."""
    events: list[Any] = []
    steps: list[tuple[Any, Any]] = []
    for _ in range(limit):
        if rules.outcome(state) is not None or seat not in rules.to_act(state):
            break
        command = commands(state)
        steps.append((state, command))
        produced = rules.decide(state, seat, command, rng_at(version + len(events)))
        events.extend(produced)
        state = rules.fold(produced, state)
    return Played(events, state, steps)


def after_move(
    clock: Clock,
    rules: Any,
    state_after: Any,
    seat: int,
    now: datetime,
    asked: list[int] | None = None,
) -> ClockSet:
    """The ``clock.set`` appended after ``seat``'s player's move, decided at ``now`` (a player
    whose seat the bot sat in for is back: ``clock.returned`` comes first, see
    :func:`returning`). ``asked``: the seats asked now when not the game's ``to_act`` (a
    resignation or an abort: ``domain.platform.referee.decide``)."""
    to_act = _asked(rules, state_after) if asked is None else asked
    returned = seat if clock.seats[seat].sitting_in else None
    return settle(clock, to_act, now, moved=seat, returned=returned)


def returning(clock: Clock | None, seat: int) -> list[Any]:
    """What comes before a move's events: ``clock.returned`` if the bot sat in for the seat."""
    if clock is not None and clock.seats[seat].sitting_in:
        return [ClockReturned(seat)]
    return []


def _asked(rules: Any, state: Any) -> list[int]:
    return [] if state is None or rules.outcome(state) is not None else list(rules.to_act(state))


def expire(
    clock: Clock,
    rules: Any,
    state: Any,
    seat: int,
    now: datetime,
    version: int,
    rng_at: RngAt,
    timeout: Callable[[Any, int], Any],
    then: Then | None = None,
) -> list[Any]:
    """The events of ``seat``'s expiry found at ``now`` (≥ its deadline), whose first event
    gets ``version``: ``clock.expired``, the timeout's game events (``timeout(state, seat)``
    sent until the seat's turn ends), ``then``'s events, ``clock.sat_in`` after
    ``sit_in_after`` expiries in a row, and ``clock.set``."""
    now = utc(now)
    deadline = clock.seats[seat].deadline
    if deadline is None or now < deadline:
        raise ValueError(f"seat {seat}'s time has not run out")
    played = timeout_moves(
        rules, state, seat, lambda s: timeout(s, seat), version + 1, rng_at, MAX_TIMEOUT_COMMANDS
    )
    extra, after = _then(then, played.state, version + 1 + len(played.events))
    events: list[Any] = [ClockExpired(seat, deadline, now), *played.events, *extra]
    k = clock.terms.sit_in_after
    sits = k > 0 and not clock.seats[seat].sitting_in and clock.seats[seat].expiries + 1 >= k
    if sits:
        events.append(ClockSatIn(seat, "expiries"))
    events.append(
        settle(clock, _asked(rules, after), now, expired=seat, sat_in=seat if sits else None)
    )
    return events


def bot_move(
    clock: Clock,
    rules: Any,
    state: Any,
    seat: int,
    now: datetime,
    version: int,
    rng_at: RngAt,
    choose: Callable[[Any, int], Any],
    then: Then | None = None,
) -> tuple[Any, list[Any]]:
    """The sitting-in bot's move for ``seat`` at ``now``: its command and the events
    (``clock.bot``, the command's events, ``then``'s events, ``clock.set``)."""
    if not clock.seats[seat].sitting_in:
        raise ValueError(f"no bot sits in for seat {seat}")
    command = choose(state, seat)
    # The generator is the decision's, ``Rng(seed, first version)``, as for any command.
    produced = rules.decide(state, seat, command, rng_at(version))
    extra, after = _then(then, rules.fold(produced, state), version + 1 + len(produced))
    return command, [
        ClockBot(seat),
        *produced,
        *extra,
        settle(clock, _asked(rules, after), now, moved=seat),
    ]


def presence(
    clock: Clock, rules: Any, state: Any, seat: int, now: datetime, leave: bool
) -> list[Any]:
    """A player leaving (the bot sits in) or returning: the events, or none if nothing
    changes."""
    sitting = clock.seats[seat].sitting_in
    if leave == sitting:
        return []
    to_act = _asked(rules, state)
    if leave:
        return [
            ClockSatIn(seat, "left"),
            settle(clock, to_act, now, sat_in=seat),
        ]
    return [ClockReturned(seat), settle(clock, to_act, now, returned=seat)]


def start_clock(clock: Clock, rules: Any, state: Any, now: datetime) -> ClockSet:
    """The ``clock.set`` appended with a game's set-up events: the clocks of the seats asked
    first start at ``now``."""
    return settle(clock, _asked(rules, state), now)
