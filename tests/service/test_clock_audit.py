"""The audit re-adjudicates a clocked game's times (``service.audit.clocking``): a game played
with expiries, a bot sitting in and a return passes; an expiry recorded before its deadline
and a move recorded after its seat's time ran out are each found — on evidence built without
servers (the chain is not checked here: ``check_adjudication`` alone)."""

from __future__ import annotations

import hashlib
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from domain.kernel import Rng, seed_commitment
from domain.platform import referee
from domain.platform.clocks import ClockTerms
from domain.platform.events import LobbyCreated, LobbyJoined
from domain.platform.table import Table, fold_stream
from domain.platform.timeouts import timeout_of
from domain.registry import get_game
from service.audit.adjudication import check_adjudication
from service.audit.evidence import Case, Evidence
from service.eventstore.records import CommandRecord, StoredEvent

T0 = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
GAME = "cargo-empire"
TERMS = ClockTerms("turn", seconds=60, sit_in_after=2)


class Game:
    """A clocked game recorded as the service records it: events with their times and
    command ids, and the commands."""

    def __init__(self) -> None:
        self.seed = hashlib.sha256(b"clock-audit").digest()
        self.now = T0
        self.table: Table | None = None
        self.events: list[StoredEvent] = []
        self.commands: list[CommandRecord] = []
        rules = get_game(GAME)
        options = rules.decode_options(None)
        created = LobbyCreated(
            GAME, 2, msgspec.to_builtins(options), seed_commitment(self.seed), clock=TERMS
        )
        self.append([created])
        self.append([LobbyJoined(0, "ann")], seat=0)
        self.append([LobbyJoined(1, "bob")], seat=1)
        self.append(rules.start(options, 2, Rng(self.seed, self.t.version + 1)))
        self.append(referee.started(self.t, self.now))

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
            stored = StoredEvent("g", version, data["type"], data, seat, cid, self.now, b"", b"")
            self.table = fold_stream(self.table, [stored], "g")
            self.events.append(stored)
        if command is not None and cid is not None:
            self.commands.append(
                CommandRecord(
                    cid,
                    "g",
                    seat,
                    None,
                    str(command["type"]),
                    {"command": command},
                    self.now,
                    "accepted",
                    None,
                    None,
                    first,
                    self.t.version,
                    None,
                )
            )

    def move(self, seat: int, command: Any) -> None:
        t = self.t
        produced = t.rules.decide(t.state, seat, command, Rng(self.seed, t.version + 1))
        events = referee.with_clock(t, seat, produced, self.now)
        self.append(events, seat, msgspec.to_builtins(command))

    def fire(self, seat: int) -> None:
        fired = referee.fire(self.t, seat, self.now, self.seed)
        self.append(fired.events, seat, fired.command)

    def deadline(self, seat: int) -> datetime:
        clock = self.t.clock
        assert clock is not None
        deadline = clock.seats[seat].deadline
        assert deadline is not None
        return deadline

    def audit(self) -> tuple[dict[str, Any], list[str]]:
        case = Case(Evidence("g", self.events, self.commands, self.seed))
        report = check_adjudication(case)
        return report, [p.code for p in case.problems]


def played() -> Game:
    """Seat 0 stops answering: two expiries, then the bot sits in; seat 0 comes back."""
    g = Game()
    rules = g.t.rules
    timeout = timeout_of(GAME)
    for _ in range(12):
        seat = rules.to_act(g.t.state)[0]
        clock = g.t.clock
        assert clock is not None
        if seat == 1:
            g.now += timedelta(seconds=5)
            g.move(1, timeout.command(g.t.state, 1))
        elif clock.seats[0].sitting_in:
            g.fire(0)
        else:
            g.now = g.deadline(0) + timedelta(milliseconds=3)
            g.fire(0)
    assert sum(e.type == "clock.expired" for e in g.events) == 2
    assert any(e.type == "clock.bot" for e in g.events)
    seat = rules.to_act(g.t.state)[0]
    if seat == 1:
        g.now += timedelta(seconds=1)
        g.move(1, timeout.command(g.t.state, 1))
    g.now += timedelta(seconds=1)
    g.move(0, timeout.command(g.t.state, 0))  # back, with its token
    assert any(e.type == "clock.returned" for e in g.events)
    return g


def test_an_honest_clocked_game_passes() -> None:
    report, problems = played().audit()
    assert problems == []
    assert report["ok"] is True


def test_an_expiry_recorded_before_its_deadline_is_found() -> None:
    g = Game()
    seat = g.t.rules.to_act(g.t.state)[0]
    deadline = g.deadline(seat)
    # A server that fires early: the referee refuses, so forge what such a server would store.
    g.now = deadline
    fired = referee.fire(g.t, seat, g.now, g.seed)
    early = deadline - timedelta(seconds=30)
    g.now = early
    forged = [msgspec.structs.replace(e, at=early) if hasattr(e, "at") else e for e in fired.events]
    g.append(forged, seat, fired.command)
    report, problems = g.audit()
    assert report["ok"] is False
    assert problems == ["clock.early_expiry"]


def test_a_move_recorded_after_its_seats_time_ran_out_is_found() -> None:
    g = Game()
    seat = g.t.rules.to_act(g.t.state)[0]
    g.now = g.deadline(seat)  # the deadline itself is too late: the time has run out
    g.move(seat, timeout_of(GAME).command(g.t.state, seat))
    report, problems = g.audit()
    assert report["ok"] is False
    assert problems == ["clock.late_move"]


def test_a_move_just_before_the_deadline_passes() -> None:
    g = Game()
    seat = g.t.rules.to_act(g.t.state)[0]
    g.now = g.deadline(seat) - timedelta(microseconds=1)
    g.move(seat, timeout_of(GAME).command(g.t.state, seat))
    assert g.audit()[1] == []


def test_a_clock_set_dated_after_it_was_recorded_is_found() -> None:
    g = Game()
    seat = g.t.rules.to_act(g.t.state)[0]
    g.now += timedelta(seconds=10)
    t = g.t
    command = timeout_of(GAME).command(t.state, seat)
    produced = t.rules.decide(t.state, seat, command, Rng(g.seed, t.version + 1))
    events = referee.with_clock(t, seat, produced, g.now + timedelta(seconds=50))
    g.append(events, seat, msgspec.to_builtins(command))
    assert g.audit()[1] == ["clock.time"]


def test_a_bot_move_for_a_seat_nobody_left_is_found() -> None:
    g = Game()
    seat = g.t.rules.to_act(g.t.state)[0]
    g.now += timedelta(seconds=1)
    t = g.t
    command = timeout_of(GAME).command(t.state, seat)
    produced = t.rules.decide(t.state, seat, command, Rng(g.seed, t.version + 1))
    events = referee.with_clock(t, seat, produced, g.now)
    from domain.platform.clocks import ClockBot

    g.append([ClockBot(seat), *events], seat, msgspec.to_builtins(command))
    assert g.audit()[1] == ["clock.no_bot"]
