"""Turn clocks with a fake clock, in every game and for every kind of clock: the deadlines each
kind sets, expiries only once a deadline has passed, the timeout's moves ending the turn as the
rules allow, the bot sitting in after ``sit_in_after`` expiries and the player's return — all on
the platform's table, folded from the events the referee appends (``domain.platform``)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest

from domain.kernel import Rng, seed_commitment
from domain.platform import referee
from domain.platform.clocks import (
    MAX_TIMEOUT_COMMANDS,
    Clock,
    ClockExpired,
    ClockSatIn,
    ClockSet,
    ClockTerms,
    ClockTermsInvalid,
    SeatClock,
    advance,
    check_terms,
    due,
    overdue,
)
from domain.platform.events import LobbyCreated, LobbyJoined
from domain.platform.table import Table, fold_stream, game_document
from domain.registry import get_game

GAMES = ["jolly-cargo", "cargo-empire", "empire-builder", "curious-cargo"]
TERMS = {
    "turn": ClockTerms("turn", seconds=60, sit_in_after=2),
    "fischer": ClockTerms("fischer", bank_seconds=300, increment_seconds=10, sit_in_after=2),
    "correspondence": ClockTerms("correspondence", days=3, sit_in_after=2),
}
T0 = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


class _Event(msgspec.Struct):
    version: int
    type: str
    data: Any


class FakeClock:
    def __init__(self) -> None:
        self.now = T0

    def tick(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


class Stream:
    """A game's stream in memory: typed events appended, folded into the platform's table."""

    def __init__(self, game: str, seats: int, terms: ClockTerms, clock: FakeClock) -> None:
        self.seed = hashlib.sha256(f"clocks/{game}/{terms.kind}".encode()).digest()
        self.clock = clock
        self.table: Table | None = None
        self.events: list[Any] = []
        rules = get_game(game)
        options = rules.decode_options(rules.bot_options)
        self.append(
            [
                LobbyCreated(
                    game,
                    seats,
                    msgspec.to_builtins(options),
                    seed_commitment(self.seed),
                    clock=terms,
                ),
                *(LobbyJoined(i, f"p{i}") for i in range(seats)),
            ]
        )
        self.append(rules.start(options, seats, Rng(self.seed, self.version + 1)))
        self.append(referee.started(self.t, clock.now))

    @property
    def t(self) -> Table:
        assert self.table is not None
        return self.table

    @property
    def version(self) -> int:
        return 0 if self.table is None else self.table.version

    def append(self, typed: list[Any]) -> None:
        for event in typed:
            data = msgspec.to_builtins(event)
            stored = _Event(self.version + 1, data["type"], data)
            self.table = fold_stream(self.table, [stored], "g")
            self.events.append(event)

    def move(self, seat: int, command: Any) -> None:
        t = self.t
        assert not overdue(t.clock, seat, self.clock.now)
        produced = t.rules.decide(t.state, seat, command, Rng(self.seed, t.version + 1))
        self.append(referee.with_clock(t, seat, produced, self.clock.now))

    def fire(self, seat: int) -> referee.Fired:
        fired = referee.fire(self.t, seat, self.clock.now, self.seed)
        self.append(fired.events)
        return fired


def _deadline(stream: Stream, seat: int) -> datetime:
    clock = stream.t.clock
    assert clock is not None
    deadline = clock.seats[seat].deadline
    assert deadline is not None
    return deadline


@pytest.mark.parametrize("kind", list(TERMS))
@pytest.mark.parametrize("game", GAMES)
def test_a_silent_seat_expires_then_the_bot_sits_in_and_the_game_goes_on(
    game: str, kind: str
) -> None:
    clock = FakeClock()
    s = Stream(game, 2, TERMS[kind], clock)
    rules = s.t.rules
    timeout = get_game(game)
    expiries = 0
    bot_moves = 0
    for _ in range(25 if game == "empire-builder" else 120):
        if rules.outcome(s.t.state) is not None:
            break
        c = s.t.clock
        assert c is not None
        if 1 in rules.to_act(s.t.state):  # the seat that answers, in time
            clock.tick(seconds=1)
            s.move(1, timeout.sitting_in(1, s.version + 1).choose(s.t.state, 1))
            continue
        deadline = _deadline(s, 0)
        if c.seats[0].sitting_in:
            assert deadline == c.seats[0].since  # the bot is due at once
            fired = s.fire(0)
            assert fired.command["type"] != "clock.expired"
            bot_moves += 1
            continue
        # Seat 0 never answers: nothing is due until its deadline, then it is.
        clock.tick(seconds=1)
        assert due(s.t.clock, clock.now) == []
        with pytest.raises(ValueError):
            referee.fire(s.t, 0, clock.now, s.seed)
        clock.now = deadline
        assert due(s.t.clock, clock.now) == [0]
        assert overdue(s.t.clock, 0, clock.now)
        before = len(s.events)
        fired = s.fire(0)
        expiries += 1
        new = s.events[before:]
        assert isinstance(new[0], ClockExpired) and new[0].deadline == deadline
        assert isinstance(new[-1], ClockSet) and new[-1].at == clock.now
        assert [isinstance(e, ClockSatIn) for e in new].count(True) == (expiries == 2)
        # The timeout's moves ended the seat's turn, or the seat's clock started again.
        after = s.t.clock
        assert after is not None
        if 0 in rules.to_act(s.t.state) and not after.seats[0].sitting_in:
            assert after.seats[0].since == clock.now
    assert expiries == 2, "the bot sits in after two expiries in a row"
    assert bot_moves > 0
    clock = game_document(s.t, "spectator").clock
    assert clock is not None and clock.terms.kind == kind
    assert clock.seats[0].sitting_in is True


@pytest.mark.parametrize("game", GAMES)
def test_each_kind_sets_its_deadline(game: str) -> None:
    clock = FakeClock()
    for kind, terms in TERMS.items():
        s = Stream(game, 2, terms, clock)
        seat = s.t.rules.to_act(s.t.state)[0]
        c = s.t.clock
        assert c is not None
        since = c.seats[seat].since
        assert since == clock.now
        expected = {
            "turn": timedelta(seconds=60),
            "fischer": timedelta(seconds=300),
            "correspondence": timedelta(days=3),
        }[kind]
        assert _deadline(s, seat) == since + expected


def test_fischer_charges_the_bank_and_credits_the_increment() -> None:
    clock = FakeClock()
    s = Stream("jolly-cargo", 2, TERMS["fischer"], clock)
    rules = s.t.rules
    timeout = get_game("jolly-cargo")
    seat = rules.to_act(s.t.state)[0]
    clock.tick(seconds=42.5)
    s.move(seat, timeout.expiry_command(s.t.state, seat))
    c = s.t.clock
    assert c is not None
    # 300 s - 42.5 s + 10 s
    bank = 300_000 - 42_500 + 10_000
    if seat in rules.to_act(s.t.state):  # still to act: its clock runs again from its new bank
        assert c.seats[seat].bank_ms == bank and _deadline(s, seat) == clock.now + timedelta(
            milliseconds=bank
        )
    else:
        assert c.seats[seat].bank_ms == bank and c.seats[seat].deadline is None


def test_a_move_after_the_deadline_is_overdue_and_a_return_restores_the_player() -> None:
    clock = FakeClock()
    s = Stream("cargo-empire", 2, TERMS["turn"], clock)
    seat = s.t.rules.to_act(s.t.state)[0]
    clock.now = _deadline(s, seat) - timedelta(microseconds=1)
    assert not overdue(s.t.clock, seat, clock.now)
    clock.tick(microseconds=1)
    assert overdue(s.t.clock, seat, clock.now)
    # Out of time, a leave appends nothing: the expiry comes first (the timeout's move, not
    # the bot's; else leaving and coming back would make running out of time free).
    assert referee.presence(s.t, seat, True, clock.now) == []
    clock.now -= timedelta(microseconds=1)
    s.append(referee.presence(s.t, seat, True, clock.now))  # the player asks to leave in time
    c = s.t.clock
    assert c is not None and c.seats[seat].sitting_in
    assert referee.presence(s.t, seat, True, clock.now) == []  # already so
    s.append(referee.presence(s.t, seat, False, clock.now))  # back with its token
    c = s.t.clock
    assert c is not None and not c.seats[seat].sitting_in and c.seats[seat].expiries == 0
    # back in the middle of its move: the time it had left (1 µs, kept to the millisecond up)
    assert _deadline(s, seat) == clock.now + timedelta(milliseconds=1)


@pytest.mark.parametrize(
    "terms",
    [
        ClockTerms("turn"),
        ClockTerms("turn", seconds=10, days=2),
        ClockTerms("fischer", bank_seconds=0),
        ClockTerms("correspondence", days=61),
        ClockTerms("turn", seconds=10, sit_in_after=-1),
    ],
)
def test_terms_that_make_no_clock_are_refused(terms: ClockTerms) -> None:
    with pytest.raises(ClockTermsInvalid):
        check_terms(terms)


def test_a_game_without_a_clock_has_no_clock_part_and_no_clock_events() -> None:
    s = Stream("jolly-cargo", 2, ClockTerms(), FakeClock())
    assert s.t.clock is None
    document = game_document(s.t, "spectator")
    assert document.clock is None
    assert b'"clock"' not in msgspec.json.encode(document)  # absent, not null
    assert not any(isinstance(e, ClockSet) for e in s.events)


@pytest.mark.parametrize("game", GAMES)
def test_a_game_with_a_silent_seat_ends(game: str) -> None:
    """Seat 0 never answers: one expiry, then the bot plays it to the end of the game (Empire
    Builder's with the bots' turn limit)."""
    clock = FakeClock()
    s = Stream(game, 2, ClockTerms("correspondence", days=1, sit_in_after=1), clock)
    rules = s.t.rules
    timeout = get_game(game)
    for _ in range(5000):
        if rules.outcome(s.t.state) is not None:
            break
        c = s.t.clock
        assert c is not None
        if 1 in rules.to_act(s.t.state):
            clock.tick(minutes=5)
            s.move(1, timeout.sitting_in(1, s.version + 1).choose(s.t.state, 1))
            continue
        clock.now = max(clock.now, _deadline(s, 0))
        assert due(s.t.clock, clock.now) == [0]
        s.fire(0)
    assert rules.outcome(s.t.state) is not None, "the game did not end"
    assert sum(isinstance(e, ClockExpired) for e in s.events) == 1
    c = s.t.clock
    assert c is not None and all(seat.deadline is None for seat in c.seats)  # nothing runs


def test_in_a_simultaneous_draft_each_seat_has_its_own_deadline_and_bank() -> None:
    """Curious Cargo's draft asks both seats at once: both clocks run, one seat's move or
    expiry charges its own bank only, and the other's clock runs on untouched."""
    clock = FakeClock()
    s = Stream("curious-cargo", 2, TERMS["fischer"], clock)
    rules = s.t.rules
    assert sorted(rules.to_act(s.t.state)) == [0, 1]
    start = s.t.clock
    assert start is not None
    assert [c.deadline for c in start.seats] == [T0 + timedelta(seconds=300)] * 2
    clock.tick(seconds=40)
    s.move(0, get_game("curious-cargo").expiry_command(s.t.state, 0))
    after = s.t.clock
    assert after is not None
    assert after.seats[1] == start.seats[1]  # seat 1's clock runs on, as it was
    # seat 0: charged 40 s, credited 10 s (running again or stopped, the bank says so)
    assert after.seats[0].bank_ms == 300_000 - 40_000 + 10_000
    clock.now = _deadline(s, 1) + timedelta(minutes=10)  # found late: the bank empties, no less
    assert due(s.t.clock, clock.now)[0] == 1
    s.fire(1)
    expired = s.t.clock
    assert expired is not None
    assert expired.seats[1].bank_ms == 10_000  # 0 left, plus the increment: never negative
    assert expired.seats[1].expiries == 1
    assert expired.seats[0].expiries == 0


@pytest.mark.parametrize("game", GAMES)
def test_the_timeout_ends_the_turn_in_every_state_of_a_game(game: str) -> None:
    """In every state a bot game passes through, each seat asked to act has a timeout: its
    commands are accepted by the rules and end the seat's turn within the expiry's limit (a
    timeout the rules refused would leave its deadline firing, and failing, for ever)."""
    clock = FakeClock()
    s = Stream(game, 2, TERMS["turn"], clock)
    rules = s.t.rules
    timeout = get_game(game)
    for _ in range(150):
        state = s.t.state
        if rules.outcome(state) is not None:
            break
        for seat in rules.to_act(state):
            after = state
            for sent in range(MAX_TIMEOUT_COMMANDS + 1):
                if rules.outcome(after) is not None or seat not in rules.to_act(after):
                    break
                assert sent < MAX_TIMEOUT_COMMANDS, f"seat {seat}'s timeout did not end its turn"
                command = timeout.expiry_command(after, seat)
                produced = rules.decide(after, seat, command, Rng(s.seed, s.version + 1 + sent))
                after = rules.fold(produced, after)
        seat = rules.to_act(state)[0]
        clock.tick(seconds=1)
        s.move(seat, timeout.sitting_in(seat, s.version + 1).choose(state, seat))


def test_a_player_gains_no_fischer_time_by_leaving_the_seat_to_the_bot() -> None:
    """The bank is the player's: while the bot sits in, its moves neither charge nor credit it
    (else a player short of time leaves, lets the bot collect increments, and comes back with
    a fuller bank than it left with — or, with no increment, comes back to an empty one)."""
    clock = FakeClock()
    s = Stream("cargo-empire", 2, TERMS["fischer"], clock)
    rules = s.t.rules
    timeout = get_game("cargo-empire")
    seat = rules.to_act(s.t.state)[0]
    clock.tick(seconds=100)  # the player thinks 100 s, then leaves
    s.append(referee.presence(s.t, seat, True, clock.now))
    c = s.t.clock
    assert c is not None
    left_with = c.seats[seat].bank_ms
    assert left_with == 300_000 - 100_000
    bot_moves = 0
    for _ in range(12):  # well before the game's end (the return is then still asked)
        asked = rules.to_act(s.t.state)[0]
        clock.tick(seconds=3)
        if asked == seat:
            s.fire(seat)
            bot_moves += 1
        else:
            s.move(asked, timeout.sitting_in(asked, s.version + 1).choose(s.t.state, asked))
    assert bot_moves >= 5
    assert rules.outcome(s.t.state) is None
    clock.tick(seconds=1)
    s.append(referee.presence(s.t, seat, False, clock.now))
    c = s.t.clock
    assert c is not None
    assert c.seats[seat].bank_ms == left_with


@pytest.mark.parametrize("kind", ["turn", "correspondence"])
def test_leaving_and_returning_at_once_gives_no_fresh_time(kind: str) -> None:
    """A player about to run out leaves and comes back before the bot has moved (two requests
    a millisecond apart beat any firer): it gets back the time it had left, not a fresh
    allowance — else a turn or correspondence clock never runs out."""
    clock = FakeClock()
    s = Stream("cargo-empire", 2, TERMS[kind], clock)
    seat = s.t.rules.to_act(s.t.state)[0]
    deadline = _deadline(s, seat)
    clock.now = deadline - timedelta(seconds=2)
    s.append(referee.presence(s.t, seat, True, clock.now))
    clock.tick(milliseconds=1)
    s.append(referee.presence(s.t, seat, False, clock.now))
    assert _deadline(s, seat) == deadline + timedelta(milliseconds=1)  # the 2 s it had left
    c = s.t.clock
    assert c is not None and c.seats[seat].bank_ms == 0  # nothing kept once resumed


def test_after_the_bots_move_a_returning_player_gets_a_whole_move() -> None:
    """The time kept for a player who left mid-move is spent by the bot's move: a player who
    comes back after it has its whole allowance for its next move."""
    clock = FakeClock()
    s = Stream("curious-cargo", 2, TERMS["turn"], clock)  # the draft: both seats asked
    clock.now = _deadline(s, 0) - timedelta(seconds=5)
    s.append(referee.presence(s.t, 0, True, clock.now))
    c = s.t.clock
    assert c is not None and c.seats[0].bank_ms == 5_000
    clock.tick(seconds=1)
    s.fire(0)  # the bot keeps a card for seat 0
    c = s.t.clock
    assert c is not None and c.seats[0].bank_ms == 0
    for _ in range(30):
        if 0 in s.t.rules.to_act(s.t.state):
            break
        clock.tick(seconds=1)
        s.move(1, get_game("curious-cargo").expiry_command(s.t.state, 1))
    assert 0 in s.t.rules.to_act(s.t.state)
    if s.t.clock is not None and s.t.clock.seats[0].sitting_in:
        clock.tick(seconds=1)
        s.append(referee.presence(s.t, 0, False, clock.now))
    assert _deadline(s, 0) == clock.now + timedelta(seconds=60)


def test_a_player_back_by_a_move_has_a_whole_allowance_for_its_next_move() -> None:
    """A player who left mid-move and comes back by moving has made its move: the time kept
    for it is spent, and its next move (still its turn) has the whole allowance."""
    terms = TERMS["turn"]
    left = SeatClock(since=T0, deadline=T0, bank_ms=5_000, sitting_in=True)
    clock = Clock(terms, [left, SeatClock()])
    now = T0 + timedelta(seconds=1)
    after = advance(clock, [0], now, moved=0, returned=0)
    assert after[0].deadline == now + timedelta(seconds=60)
    assert after[0].bank_ms == 0
    resumed = advance(clock, [0], now, returned=0)  # by presence: the move goes on
    assert resumed[0].deadline == now + timedelta(seconds=5)
