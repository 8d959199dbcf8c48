"""Issue 35: clocks count moves, not commands; a Fischer bank is capped; every game comes to
rest — on the platform's table with a fake clock (no waiting), folded from the events the
referee appends (``domain.platform``).

* A command whose events are all the game's ``cosmetic_events`` (Empire Builder's
  ``choose_face``) neither restarts, charges nor credits a clock, nor sets a seat's expiries in
  a row back, under every kind of clock; a seat the game is not waiting for can send nothing
  else in any game (so no other command of the four games is a way round the clock).
* A Fischer bank holds at most ``max_bank_seconds`` (the platform's longest term when absent).
* ``rest_after`` expiries in a row with no player's move stop every clock, until a player
  moves or comes back.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import msgspec
import pytest

from domain.empire_builder.events import FaceChosen
from domain.kernel import Rng, RuleError
from domain.kernel.grammar import OneOf
from domain.platform import referee
from domain.platform.clocks import (
    MAX_SECONDS,
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
    is_move,
    next_deadline,
)
from domain.platform.table import game_document
from domain.registry import get_game

from .test_clocks import GAMES, T0, FakeClock, Stream, _deadline

KINDS = {
    "turn": ClockTerms("turn", seconds=4, sit_in_after=2),
    "fischer": ClockTerms("fischer", bank_seconds=10, increment_seconds=60, sit_in_after=2),
    "correspondence": ClockTerms("correspondence", days=1, sit_in_after=2),
}
EB = "empire-builder"


def _face(i: int) -> Any:
    from domain.empire_builder.board import FACES
    from domain.empire_builder.commands import ChooseFace

    return ChooseFace(FACES[i % len(FACES)])


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_cosmetic_command_leaves_every_clock_alone(kind: str) -> None:
    """The seat to act changes its face ten times, 150 ms apart, and so does the other
    seat: only ``face_chosen`` is appended (no ``clock.set``), every clock is as it was — a
    per-move clock is not restarted, a Fischer bank earns no increment — and the seat's time
    runs out at the deadline it had before the first face."""
    clock = FakeClock()
    s = Stream(EB, 2, KINDS[kind], clock)
    seat = s.t.rules.to_act(s.t.state)[0]
    before = s.t.clock
    assert before is not None
    deadline = _deadline(s, seat)
    for i in range(10):
        for who in (seat, 1 - seat):
            clock.tick(milliseconds=150)
            appended = len(s.events)
            s.move(who, _face(i))
            assert [type(e) for e in s.events[appended:]] == [FaceChosen]
    after = s.t.clock
    assert after is not None
    assert after.seats == before.seats and after.idle == before.idle
    assert s.t.state.players[seat].face  # the face did change: the command was accepted
    clock.now = deadline
    assert due(s.t.clock, clock.now) == [seat]


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_seat_that_only_changes_face_still_gets_the_bot(kind: str) -> None:
    """A seat that never plays but changes its face between expiries: its expiries in a row
    are not set back, so the bot sits in after ``sit_in_after`` (2) of them."""
    clock = FakeClock()
    s = Stream(EB, 2, KINDS[kind], clock)
    rules = s.t.rules
    silent = rules.to_act(s.t.state)[0]
    other = 1 - silent
    timeout = get_game(EB)
    sat_in = False
    for _ in range(40):
        asked = rules.to_act(s.t.state)
        c = s.t.clock
        assert c is not None
        if silent in asked:
            clock.now = _deadline(s, silent)
            s.fire(silent)
            sat_in = any(isinstance(e, ClockSatIn) for e in s.events)
            if sat_in:
                break
            clock.tick(seconds=1)
            s.move(silent, _face(c.seats[silent].expiries))  # it is here, but never plays
        else:
            clock.tick(seconds=1)
            s.move(other, timeout.expiry_command(s.t.state, other))
    assert sat_in, "the silent seat's face changes kept the bot out"
    assert sum(isinstance(e, ClockExpired) for e in s.events) == 2


def _candidates(rules: Any, state: Any) -> list[Any]:
    """Commands to try for any seat: every seat's listed legal commands and the values of the
    grammar's ``one_of`` rules (commands any seat may send, not listed)."""
    out: list[Any] = []
    for seat in range(rules.seats(state)):
        listed = rules.legal(state, seat)
        out.extend(listed[:12])
        for rule in rules.grammar(state, seat, listed):
            if isinstance(rule, OneOf):
                out.extend(
                    rules.decode_command({"type": rule.type, rule.field: v}) for v in rule.values
                )
    return out


@pytest.mark.parametrize("game", GAMES)
def test_a_seat_not_asked_can_send_only_commands_that_change_no_progress(game: str) -> None:
    """Through a game's states, every command any seat could send, sent by a seat the game is
    not waiting for, is refused or cosmetic; and a cosmetic one leaves ``to_act``, every
    seat's ``legal`` and the outcome as they were. So the clocks' rule (a move is a command
    with an event that is not cosmetic) leaves no other command of any game round the clock."""
    clock = FakeClock()
    s = Stream(game, 3 if get_game(game).max_seats >= 3 else 2, KINDS["turn"], clock)
    rules = s.t.rules
    timeout = get_game(game)
    cosmetic_seen = 0
    for step in range(40):
        state = s.t.state
        if rules.outcome(state) is not None:
            break
        asked = rules.to_act(state)
        if step % 4 == 0:
            for command in _candidates(rules, state):
                for seat in range(rules.seats(state)):
                    if seat in asked:
                        continue
                    try:
                        events = rules.decide(state, seat, command, Rng(s.seed, s.version + 1))
                    except RuleError:
                        continue
                    assert not is_move(rules, events), (seat, command, events)
                    cosmetic_seen += 1
                    after = rules.fold(events, state)
                    assert rules.to_act(after) == asked
                    assert rules.outcome(after) is None
                    for any_seat in range(rules.seats(state)):
                        assert msgspec.to_builtins(
                            rules.legal(after, any_seat)
                        ) == msgspec.to_builtins(rules.legal(state, any_seat))
        seat = asked[0]
        clock.tick(seconds=1)
        s.move(seat, timeout.sitting_in(seat, s.version + 1).choose(state, seat))
    assert (cosmetic_seen > 0) == bool(rules.cosmetic_events)


def test_a_fischer_bank_is_capped() -> None:
    terms = ClockTerms("fischer", bank_seconds=10, increment_seconds=10, max_bank_seconds=25)
    clock = FakeClock()
    s = Stream("cargo-empire", 2, terms, clock)
    rules = s.t.rules
    timeout = get_game("cargo-empire")
    for _ in range(8):
        seat = rules.to_act(s.t.state)[0]
        clock.tick(milliseconds=100)
        s.move(seat, timeout.expiry_command(s.t.state, seat))
        c = s.t.clock
        assert c is not None
        assert max(x.bank_ms for x in c.seats) <= 25_000
    c = s.t.clock
    assert c is not None and max(x.bank_ms for x in c.seats) == 25_000


def test_a_bank_never_grows_past_the_longest_term_and_its_deadline_stays_a_time() -> None:
    """Terms without ``max_bank_seconds`` (a game created before caps) hold at most the
    platform's longest term: 600,000 increments of a week leave the bank at a week (before,
    it grew without bound and overflowed the deadline arithmetic after ~416,000)."""
    terms = ClockTerms("fischer", bank_seconds=MAX_SECONDS, increment_seconds=MAX_SECONDS)
    week = MAX_SECONDS * 1000
    seat = SeatClock(since=T0, deadline=T0 + timedelta(milliseconds=week), bank_ms=week)
    now = T0 + timedelta(seconds=1)
    after = advance(Clock(terms, [seat]), [0], now, moved=0)
    assert after[0].bank_ms == week
    assert after[0].deadline == now + timedelta(milliseconds=week)
    forged = SeatClock(bank_ms=600_000 * week)  # as if 600,000 increments had been credited
    after = advance(Clock(terms, [forged]), [0], now)
    assert after[0].deadline == now + timedelta(milliseconds=week)


@pytest.mark.parametrize(
    "terms",
    [
        ClockTerms("fischer", bank_seconds=30, max_bank_seconds=29),
        ClockTerms("fischer", bank_seconds=30, max_bank_seconds=MAX_SECONDS + 1),
        ClockTerms("turn", seconds=30, max_bank_seconds=60),
        ClockTerms("turn", seconds=30, rest_after=-1),
    ],
)
def test_a_cap_or_a_rest_out_of_range_is_refused(terms: ClockTerms) -> None:
    with pytest.raises(ClockTermsInvalid):
        check_terms(terms)


SILENT = ClockTerms("fischer", bank_seconds=2, increment_seconds=0, sit_in_after=0, rest_after=6)


def _fire_until_rest(s: Stream, clock: FakeClock, limit: int = 100) -> int:
    """Fire every due deadline, the clock jumping to each, until none runs: the expiries."""
    fired = 0
    for _ in range(limit):
        deadline = next_deadline(s.t.clock)
        if deadline is None:
            return fired
        clock.now = max(clock.now, deadline)
        for seat in due(s.t.clock, clock.now)[:1]:
            s.fire(seat)
            fired += 1
    raise AssertionError(f"still expiring after {limit} firings")


@pytest.mark.parametrize("game", GAMES)
def test_a_game_whose_seats_are_all_silent_comes_to_rest(game: str) -> None:
    """The issue's terms (a 2 s bank, no increment, no bot ever), every seat silent: after
    ``rest_after`` expiries in a row nothing is due any more (before, an expiry at every tick
    for ever). A player's move starts the clocks again; so does a player's return."""
    clock = FakeClock()
    s = Stream(game, 2, SILENT, clock)
    rules = s.t.rules
    assert _fire_until_rest(s, clock) == SILENT.rest_after
    c = s.t.clock
    assert c is not None and c.resting and c.idle == SILENT.rest_after
    assert all(x.deadline is None for x in c.seats)
    clock.tick(days=30)
    assert due(s.t.clock, clock.now) == []
    document = game_document(s.t, "spectator").clock
    assert document is not None and document.resting and document.idle == SILENT.rest_after
    # a player's move: the game goes on, its clocks run again
    seat = rules.to_act(s.t.state)[0]
    s.move(seat, get_game(game).expiry_command(s.t.state, seat))
    c = s.t.clock
    assert c is not None and not c.resting and c.idle == 0
    assert isinstance(s.events[-1], ClockSet) and s.events[-1].idle == 0
    if rules.outcome(s.t.state) is None:
        assert next_deadline(c) is not None
        assert _fire_until_rest(s, clock) == SILENT.rest_after  # silent again: at rest again
        asked = rules.to_act(s.t.state)[0]
        s.append(referee.presence(s.t, asked, True, clock.now))  # a leave: still at rest
        assert next_deadline(s.t.clock) is None
        s.append(referee.presence(s.t, asked, False, clock.now))  # back: the clocks run
        assert next_deadline(s.t.clock) is not None


def test_the_sitting_in_bots_moves_neither_rest_a_game_nor_wake_it() -> None:
    """A player who left (the bot plays) against a seat that never answers: the bot's moves
    are no player's, so the silent seat's expiries still add up to the rest."""
    clock = FakeClock()
    s = Stream("cargo-empire", 2, SILENT, clock)
    first = s.t.rules.to_act(s.t.state)[0]
    s.append(referee.presence(s.t, first, True, clock.now))
    _fire_until_rest(s, clock, limit=400)
    c = s.t.clock
    assert c is not None and c.resting
    assert any(e for e in s.events if type(e).__name__ == "ClockBot")
    assert sum(isinstance(e, ClockExpired) for e in s.events) == SILENT.rest_after


def test_a_return_keeps_the_seats_expiries_in_a_row() -> None:
    """Only a move sets a seat's expiries back: a player back by ``presence`` who then lets
    its time run out again has the bot back after one more expiry, not ``sit_in_after``."""
    clock = FakeClock()
    terms = ClockTerms("turn", seconds=5, sit_in_after=2, rest_after=100)
    s = Stream("cargo-empire", 2, terms, clock)
    rules = s.t.rules
    silent = rules.to_act(s.t.state)[0]
    timeout = get_game("cargo-empire")

    def expire_silent() -> list[Any]:
        while silent not in rules.to_act(s.t.state):
            other = rules.to_act(s.t.state)[0]
            clock.tick(seconds=1)
            s.move(other, timeout.expiry_command(s.t.state, other))
        clock.now = _deadline(s, silent)
        before = len(s.events)
        s.fire(silent)
        return s.events[before:]

    expire_silent()
    expire_silent()
    c = s.t.clock
    assert c is not None and c.seats[silent].sitting_in and c.seats[silent].expiries == 2
    s.append(referee.presence(s.t, silent, False, clock.now))
    c = s.t.clock
    assert c is not None and not c.seats[silent].sitting_in and c.seats[silent].expiries == 2
    assert any(isinstance(e, ClockSatIn) for e in expire_silent())
