"""Resign and abort (``domain.platform.referee.decide``), decided once for every game and
re-adjudicated by the audit: a two-seat resignation ends the game, the other seat winning; with
more seats the others play on and the resigned seat is never asked again (its minimal moves are
made for it, in the same decision); abort until every seat has moved, ``rule.abort_too_late``
after; and the audit finds a forged resignation — on evidence built without servers
(``check_adjudication``)."""

from __future__ import annotations

import hashlib
import random
import uuid
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest

from domain.kernel import CommandError, Outcome, Rng, RuleError, seed_commitment
from domain.platform import referee
from domain.platform.clocks import ClockTerms
from domain.platform.events import Abort, LobbyCreated, LobbyJoined, Resign, SeedRevealed
from domain.platform.table import (
    Table,
    fold_stream,
    game_document,
    legal_document,
    ranked_last,
    table_result,
    table_to_act,
)
from domain.registry import current_edition, get_game
from ledger.adjudication import check_adjudication
from ledger.evidence import Case, Evidence
from ledger.records import CommandRecord, StoredEvent

T0 = datetime(2026, 12, 2, 5, 0, tzinfo=UTC)
GAMES = ["jolly-cargo", "cargo-empire", "empire-builder", "curious-cargo"]
MULTI = ["jolly-cargo", "cargo-empire", "empire-builder"]  # more than two seats allowed


class Recorded:
    """A game recorded as the service records it (events with seats and command ids, and the
    accepted commands), decided through ``referee.decide`` as ``ledger.ruling``
    does."""

    def __init__(self, game: str, seats: int = 2, clock: ClockTerms | None = None) -> None:
        self.seed = hashlib.sha256(f"endings-{game}-{seats}".encode()).digest()
        self.table: Table | None = None
        self.events: list[StoredEvent] = []
        self.commands: list[CommandRecord] = []
        rules = get_game(game)
        options = rules.decode_options(rules.bot_options)
        created = LobbyCreated(
            game,
            seats,
            msgspec.to_builtins(options),
            seed_commitment(self.seed),
            edition=current_edition(game),
            clock=clock,
        )
        self.append([created])
        for s in range(seats):
            self.append([LobbyJoined(s, f"p{s}")], seat=s)
        self.append(rules.start(options, seats, Rng(self.seed, self.t.version + 1)))
        if clock is not None:
            self.append(referee.started(self.t, T0))

    @property
    def t(self) -> Table:
        assert self.table is not None
        return self.table

    def append(
        self, typed: list[Any], seat: int | None = None, command: dict[str, Any] | None = None
    ) -> None:
        cid = None if command is None else str(uuid.uuid4())
        first = self.t.version + 1 if self.table is not None else 1
        for event in typed:
            data = msgspec.to_builtins(event)
            version = 1 if self.table is None else self.t.version + 1
            stored = StoredEvent("g", version, data["type"], data, seat, cid, T0, b"", b"")
            self.table = fold_stream(self.table, [stored], "g")
            self.events.append(stored)
        if command is not None and cid is not None:
            self.commands.append(
                CommandRecord(
                    cid, "g", seat, None, str(command["type"]), {"command": command}, T0,
                    "accepted", None, None, first, self.t.version, None,
                )
            )  # fmt: skip

    def send(self, seat: int, command: Any) -> list[Any]:
        t = self.t
        events = referee.decide(t, seat, command, Rng(self.seed, t.version + 1))
        if t.clock is not None:
            events = referee.with_clock(t, seat, events, T0)
        was = t.status
        body = msgspec.to_builtins(command)
        self.append(events, seat, body)
        if was != "finished" and self.t.status == "finished":
            self.append_reveal(seat, body)
        return events

    def append_reveal(self, seat: int, body: dict[str, Any]) -> None:
        """``seed.revealed`` goes with the events that end the game (the same command)."""
        last = self.commands[-1]
        reveal = msgspec.to_builtins(SeedRevealed(self.seed.hex()))
        stored = StoredEvent(
            "g", self.t.version + 1, "seed.revealed", reveal, seat, last.id, T0, b"", b""
        )
        self.table = fold_stream(self.table, [stored], "g")
        self.events.append(stored)
        self.commands[-1] = msgspec.structs.replace(last, last_version=self.t.version)

    def play(self, rng: random.Random, moves: int) -> None:
        """Random legal game commands by the seats to act (the game's listed ones)."""
        for _ in range(moves):
            waiting = table_to_act(self.t)
            if self.t.status != "active" or not waiting:
                return
            seat = rng.choice(waiting)
            listed = self.t.rules.legal(self.t.state, seat)
            self.send(seat, rng.choice(listed))

    def audit(self) -> tuple[dict[str, Any], list[str]]:
        case = Case(Evidence("g", self.events, self.commands, self.seed))
        report = check_adjudication(case)
        return report, [p.code for p in case.problems]


def first_move(g: Recorded) -> None:
    seat = table_to_act(g.t)[0]
    g.send(seat, g.t.rules.legal(g.t.state, seat)[0])


@pytest.mark.parametrize("game", GAMES)
def test_two_seats_a_resignation_out_of_turn_ends_the_game_the_other_wins(game: str) -> None:
    g = Recorded(game)
    waiting = table_to_act(g.t)
    idle = next(s for s in range(2) if s not in waiting) if len(waiting) < 2 else 1
    assert legal_document(g.t, idle).endings == [Resign(), Abort()]
    g.send(idle, referee.decode_command(g.t.rules, {"type": "resign"}))
    assert g.t.status == "finished" and g.t.ended == "resigned"
    result = table_result(g.t)
    assert result is not None and result.reason == "resigned"
    assert result.winners == [1 - idle] and result.scores[1 - idle] == 1
    assert msgspec.to_builtins(game_document(g.t, "spectator").result)["reason"] == "resigned"
    assert table_to_act(g.t) == [] and legal_document(g.t, 1 - idle).endings == []
    assert g.events[-1].type == "seed.revealed"
    report, problems = g.audit()
    assert report["ok"] is True, problems
    with pytest.raises(RuleError) as refused:
        referee.decide(g.t, 1 - idle, Resign(), Rng(g.seed, 0))
    assert refused.value.code == "rule.game_over"


@pytest.mark.parametrize("game", GAMES)
def test_abort_before_every_seat_moved_and_refused_after(game: str) -> None:
    g = Recorded(game)
    first_move(g)
    if len(set(g.t.moved)) < 2:  # one seat has moved: still abortable
        assert Abort() in legal_document(g.t, 0).endings
        aborted = Recorded(game)
        first_move(aborted)
        aborted.send(1, Abort())
        result = table_result(aborted.t)
        assert result is not None and result.reason == "aborted"
        assert result.winners == [] and result.scores == []
        assert aborted.audit()[0]["ok"] is True
    rng = random.Random(4)
    while len(set(g.t.moved)) < 2 and g.t.status == "active":
        g.play(rng, 1)
    assert g.t.status == "active"
    assert legal_document(g.t, 0).endings == [Resign()]
    with pytest.raises(RuleError) as refused:
        referee.decide(g.t, 0, Abort(), Rng(g.seed, 0))
    assert refused.value.code == "rule.abort_too_late"


@pytest.mark.parametrize("game", MULTI)
def test_three_seats_the_others_play_on_and_the_resigned_seat_is_never_asked(game: str) -> None:
    g = Recorded(game, seats=3)
    rng = random.Random(7)
    g.play(rng, 6)
    g.send(1, Resign())
    assert g.t.status == "active" and g.t.resigned == [1] and g.t.ended is None
    for _ in range(400):
        if g.t.status != "active":
            break
        assert 1 not in table_to_act(g.t), "a resigned seat is asked to act"
        assert legal_document(g.t, 1).commands == [] and legal_document(g.t, 1).endings == []
        with pytest.raises(RuleError) as refused:
            referee.decide(g.t, 1, Resign(), Rng(g.seed, 0))
        assert refused.value.code == "rule.resigned"
        g.play(rng, 1)
    report, problems = g.audit()
    assert report["ok"] is True, problems
    if g.t.status == "finished":  # ended by the rules: the resigned seat is no winner
        result = table_result(g.t)
        assert result is not None and 1 not in result.winners
        assert result.details["resigned"] == [1]
    # a second resignation leaves one seat: the game ends, that seat wins
    if g.t.status == "active":
        g.send(2, Resign())
        result = table_result(g.t)
        assert result is not None and result.winners == [0] and result.reason == "resigned"
        assert result.details["resigned"] == [1, 2]
        assert g.audit()[0]["ok"] is True


def test_a_resignation_ranks_the_seat_last_when_it_led() -> None:
    won = Outcome(scores=[5, 9, 7], winners=[1], details={"x": 1})
    ranked = ranked_last(won, [1])
    assert ranked.winners == [2] and ranked.scores == [5, 9, 7]
    assert ranked.details == {"x": 1, "resigned": [1]}


@pytest.mark.parametrize("game", GAMES)
def test_the_audit_finds_a_forged_resignation(game: str) -> None:
    """Seat 0 moved; a ``game.resigned`` naming seat 1 is stored under seat 0's command."""
    g = Recorded(game)
    first_move(g)
    mover = g.events[-1].seat
    assert mover is not None
    g.send(mover, Resign())
    at = next(i for i, e in enumerate(g.events) if e.type == "game.resigned")
    real = g.events[at]
    g.events[at] = msgspec.structs.replace(real, data={**real.data, "seat": 1 - mover})
    report, problems = g.audit()
    assert report["ok"] is False and report["first_bad"] == real.version
    assert "adjudication.mismatch" in problems
    # and a resignation appended to a game command no seat sent as one
    h = Recorded(game)
    seat = table_to_act(h.t)[0]
    h.send(seat, h.t.rules.legal(h.t.state, seat)[0])
    last = h.commands[-1]
    extra = StoredEvent(
        "g", h.t.version + 1, "game.resigned", {"type": "game.resigned", "seat": 1 - seat},
        seat, last.id, T0, b"", b"",
    )  # fmt: skip
    h.events.append(extra)
    h.commands[-1] = msgspec.structs.replace(last, last_version=extra.version)
    report, problems = h.audit()
    assert report["ok"] is False and "adjudication.mismatch" in problems, problems


@pytest.mark.parametrize("seats", [2, 3])
def test_a_resigned_seats_clock_stops(seats: int) -> None:
    g = Recorded("cargo-empire", seats, ClockTerms("turn", seconds=60))
    clock = g.t.clock
    assert clock is not None and any(c.since is not None for c in clock.seats)
    g.send(1, Resign())
    clock = g.t.clock
    assert clock is not None and clock.seats[1].since is None
    running = [i for i, c in enumerate(clock.seats) if c.since is not None]
    assert running == ([] if seats == 2 else table_to_act(g.t)), running
    rng = random.Random(3)
    for _ in range(30):
        g.play(rng, 1)
        clock = g.t.clock
        assert clock is not None and clock.seats[1].since is None
    report, problems = g.audit()
    assert report["ok"] is True, problems


@pytest.mark.parametrize(
    "body",
    [{"type": "resign", "seat": 0}, {"type": "abort", "x": 1}, {"type": ["resign"]}, {"type": {}}],
)
def test_an_ending_command_with_an_unknown_field_is_invalid(body: dict[str, Any]) -> None:
    rules = get_game("cargo-empire")
    with pytest.raises(CommandError) as refused:
        referee.decode_command(rules, body)
    assert refused.value.code == "command.invalid"
