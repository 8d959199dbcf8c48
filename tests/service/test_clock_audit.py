"""The audit re-adjudicates a clocked game's times (``ledger.clocking``): a game played
with expiries, a bot sitting in and a return passes; an expiry recorded before its deadline
and a move recorded after its seat's time ran out are each found — on evidence built without
servers (the chain is not checked here: ``check_adjudication`` alone)."""

from __future__ import annotations

import hashlib
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest

from domain.kernel import Rng, seed_commitment
from domain.platform import clocks, referee
from domain.platform.clocks import Clock, ClockTerms
from domain.platform.events import LobbyCreated, LobbyJoined
from domain.platform.table import Table, copy_table, fold_stream
from domain.registry import current_edition, get_game
from ledger.adjudication import check_adjudication
from ledger.evidence import Case, Evidence
from ledger.records import CommandRecord, StoredEvent

T0 = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
GAME = "cargo-empire"
TERMS = ClockTerms("turn", seconds=60, sit_in_after=2)


class Game:
    """A clocked game recorded as the service records it: events with their times and
    command ids, and the commands."""

    def __init__(self, terms: ClockTerms = TERMS, game: str = GAME) -> None:
        self.seed = hashlib.sha256(b"clock-audit").digest()
        self.now = T0
        self.table: Table | None = None
        self.events: list[StoredEvent] = []
        self.commands: list[CommandRecord] = []
        rules = get_game(game)
        options = rules.decode_options(rules.bot_options if game != GAME else None)
        created = LobbyCreated(
            game,
            2,
            msgspec.to_builtins(options),
            seed_commitment(self.seed),
            clock=terms,
            edition=current_edition(game),
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
    timeout = get_game(GAME)
    for _ in range(12):
        seat = rules.to_act(g.t.state)[0]
        clock = g.t.clock
        assert clock is not None
        if seat == 1:
            g.now += timedelta(seconds=5)
            g.move(1, timeout.expiry_command(g.t.state, 1))
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
        g.move(1, timeout.expiry_command(g.t.state, 1))
    g.now += timedelta(seconds=1)
    g.move(0, timeout.expiry_command(g.t.state, 0))  # back, with its token
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
    g.move(seat, get_game(GAME).expiry_command(g.t.state, seat))
    report, problems = g.audit()
    assert report["ok"] is False
    assert problems == ["clock.late_move"]


def test_a_move_just_before_the_deadline_passes() -> None:
    g = Game()
    seat = g.t.rules.to_act(g.t.state)[0]
    g.now = g.deadline(seat) - timedelta(microseconds=1)
    g.move(seat, get_game(GAME).expiry_command(g.t.state, seat))
    assert g.audit()[1] == []


def test_a_clock_set_dated_after_it_was_recorded_is_found() -> None:
    g = Game()
    seat = g.t.rules.to_act(g.t.state)[0]
    g.now += timedelta(seconds=10)
    t = g.t
    command = get_game(GAME).expiry_command(t.state, seat)
    produced = t.rules.decide(t.state, seat, command, Rng(g.seed, t.version + 1))
    events = referee.with_clock(t, seat, produced, g.now + timedelta(seconds=50))
    g.append(events, seat, msgspec.to_builtins(command))
    assert g.audit()[1] == ["clock.time"]


def test_a_bot_move_for_a_seat_nobody_left_is_found() -> None:
    g = Game()
    seat = g.t.rules.to_act(g.t.state)[0]
    g.now += timedelta(seconds=1)
    t = g.t
    command = get_game(GAME).expiry_command(t.state, seat)
    produced = t.rules.decide(t.state, seat, command, Rng(g.seed, t.version + 1))
    events = referee.with_clock(t, seat, produced, g.now)
    from domain.platform.clocks import ClockBot

    g.append([ClockBot(seat), *events], seat, msgspec.to_builtins(command))
    assert g.audit()[1] == ["clock.no_bot"]


def _forge_terms(g: Game, terms: dict[str, Any]) -> None:
    """A hostile operator's export: ``lobby.created`` rewritten with other clock terms."""
    created = g.events[0]
    g.events[0] = msgspec.structs.replace(created, data={**created.data, "clock": terms})


def test_terms_out_of_range_in_the_stored_lobby_created_are_found_not_trusted() -> None:
    # A Fischer bank of 0 makes every deadline the moment the clock starts: refused at
    # creation (422 clock.invalid), so the fold may not take it from a stored event either.
    g = Game(ClockTerms("fischer", bank_seconds=60, sit_in_after=2))
    _forge_terms(g, {"kind": "fischer", "bank_seconds": 0, "sit_in_after": 2})
    # ...and the set-up's clock.set made to agree with those terms (every bank empty).
    started = g.events[-1]
    seats = [
        {
            **{k: v for k, v in c.items() if k != "bank_ms"},  # 0: omitted, as encoded
            **({"deadline": c["since"]} if "since" in c else {}),
        }
        for c in started.data["seats"]
    ]
    g.events[-1] = msgspec.structs.replace(started, data={**started.data, "seats": seats})
    report, problems = g.audit()
    assert report["ok"] is False
    assert problems == ["adjudication.unfoldable"]


def test_terms_too_long_for_a_timestamp_are_found_without_crashing_the_audit() -> None:
    g = Game()
    _forge_terms(g, {"kind": "turn", "seconds": 10**12, "sit_in_after": 2})
    report, problems = g.audit()  # no OverflowError out of the audit
    assert report["ok"] is False
    assert problems == ["adjudication.unfoldable"]


def test_a_forged_bank_too_big_for_a_timestamp_is_found_without_crashing_the_audit() -> None:
    g = Game(ClockTerms("fischer", bank_seconds=60, increment_seconds=5, sit_in_after=2))
    seat = g.t.rules.to_act(g.t.state)[0]
    g.now += timedelta(seconds=1)
    t = g.t
    command = get_game(GAME).expiry_command(t.state, seat)
    produced = t.rules.decide(t.state, seat, command, Rng(g.seed, t.version + 1))
    events = referee.with_clock(t, seat, produced, g.now)
    clock_set = events[-1]
    seats = [msgspec.structs.replace(c, bank_ms=10**17) for c in clock_set.seats]
    # The fold takes the forged bank (the audit flags it); the next decision's arithmetic
    # would overflow a timestamp, but a bank never counts for more than its cap (issue 35).
    g.append(
        [*events[:-1], msgspec.structs.replace(clock_set, seats=seats)],
        seat,
        {**msgspec.to_builtins(command)},
    )
    g.now += timedelta(seconds=1)
    nxt = g.t.rules.to_act(g.t.state)[0]
    t = g.t
    command = get_game(GAME).expiry_command(t.state, nxt)
    produced = t.rules.decide(t.state, nxt, command, Rng(g.seed, t.version + 1))
    g.append(
        [*produced, msgspec.structs.replace(clock_set, at=g.now)],
        nxt,
        {**msgspec.to_builtins(command)},
    )
    report, problems = g.audit()
    assert report["ok"] is False
    assert problems == ["adjudication.mismatch", "adjudication.mismatch"]


def test_a_move_whose_clock_is_dated_before_it_was_recorded_is_found() -> None:
    # A move's clock.set is decided at the time its events are recorded (docs/api.md,
    # "Time"): backdating it would charge a Fischer bank less, or start the next seat's clock
    # earlier than it was asked.
    g = Game(ClockTerms("fischer", bank_seconds=60, increment_seconds=5, sit_in_after=2))
    seat = g.t.rules.to_act(g.t.state)[0]
    g.now += timedelta(seconds=50)
    t = g.t
    command = get_game(GAME).expiry_command(t.state, seat)
    produced = t.rules.decide(t.state, seat, command, Rng(g.seed, t.version + 1))
    events = referee.with_clock(t, seat, produced, g.now - timedelta(seconds=49))
    g.append(events, seat, msgspec.to_builtins(command))
    assert g.audit()[1] == ["clock.time"]


def test_an_expiry_dated_before_it_was_recorded_is_found() -> None:
    g = Game()
    seat = g.t.rules.to_act(g.t.state)[0]
    deadline = g.deadline(seat)
    fired = referee.fire(g.t, seat, deadline, g.seed)  # dated at the deadline...
    g.now = deadline + timedelta(hours=5)  # ...recorded five hours later
    g.append(fired.events, seat, fired.command)
    assert g.audit()[1] == ["clock.time"]


def _leave(g: Game, seat: int) -> None:
    g.now += timedelta(seconds=1)
    g.append(referee.presence(g.t, seat, True, g.now), seat, {"type": "clock.leave"})
    g.now += timedelta(seconds=1)


def test_a_bot_move_that_is_not_the_bots_choice_is_found() -> None:
    # The operator plays a move of its own choosing for an absent player and labels it the
    # bot's: the greedy bot is pure (state, seat, version), so the audit asks it again.
    g = Game()
    seat = g.t.rules.to_act(g.t.state)[0]
    _leave(g, seat)
    t = g.t
    version = t.version + 1
    choice = get_game(GAME).sitting_in(seat, version).choose(t.state, seat)
    other = next(c for c in reversed(t.rules.legal(t.state, seat)) if c != choice)
    command, events = clocks.bot_move(
        t.clock,
        t.rules,
        t.state,
        seat,
        g.now,
        version,
        referee.rng_at(g.seed),
        lambda s, x: other,
    )
    g.append(events, seat, msgspec.to_builtins(command))
    report, problems = g.audit()
    assert report["ok"] is False
    assert problems == ["clock.bot_choice"]


def test_the_bots_own_choice_passes() -> None:
    g = Game()
    seat = g.t.rules.to_act(g.t.state)[0]
    _leave(g, seat)
    g.fire(seat)
    assert any(e.type == "clock.bot" for e in g.events)
    assert g.audit()[1] == []


def test_a_second_expiry_of_one_deadline_is_found() -> None:
    g = Game()
    seat = g.t.rules.to_act(g.t.state)[0]
    g.now = g.deadline(seat)
    before = copy_table(g.t)
    g.fire(seat)
    again = referee.fire(before, seat, g.now, g.seed)
    g.append(again.events, seat, again.command)
    assert g.audit()[1] == ["clock.deadline"]


def test_an_expiry_for_a_seat_not_to_act_is_found() -> None:
    g = Game()
    seat = g.t.rules.to_act(g.t.state)[0]
    idle = 1 - seat
    g.now = g.deadline(seat)
    forged = copy_table(g.t)
    assert forged.clock is not None
    seats = list(forged.clock.seats)
    seats[idle] = seats[seat]  # as if the idle seat had the running deadline
    forged.clock = Clock(forged.clock.terms, seats)
    fired = referee.fire(forged, idle, g.now, g.seed)
    g.append(fired.events, idle, fired.command)
    assert g.audit()[1] == ["clock.deadline"]


def test_an_expiry_whose_moves_are_not_the_timeouts_is_found() -> None:
    g = Game()
    seat = g.t.rules.to_act(g.t.state)[0]
    g.now = g.deadline(seat)
    t = g.t
    minimal = get_game(GAME).expiry_command(t.state, seat)
    other = next(c for c in reversed(t.rules.legal(t.state, seat)) if c != minimal)
    events = clocks.expire(
        t.clock,
        t.rules,
        t.state,
        seat,
        g.now,
        t.version + 1,
        referee.rng_at(g.seed),
        lambda s, x: other,
    )
    fired = referee.fire(t, seat, g.now, g.seed)
    g.append(events, seat, fired.command)
    assert g.audit()[1] == ["adjudication.mismatch"]


def test_a_leave_recorded_after_the_game_ended_is_found() -> None:
    g = Game()
    rules = g.t.rules
    for _ in range(500):
        if rules.outcome(g.t.state) is not None:
            break
        seat = rules.to_act(g.t.state)[0]
        g.now += timedelta(seconds=1)
        g.move(seat, get_game(GAME).sitting_in(seat, g.t.version + 1).choose(g.t.state, seat))
    assert rules.outcome(g.t.state) is not None
    assert g.audit()[1] == []
    g.now += timedelta(seconds=1)
    assert referee.presence(g.t, 0, True, g.now) == []  # the referee appends nothing...
    clock = g.t.clock
    assert clock is not None
    forged = clocks.presence(clock, rules, g.t.state, 0, g.now, True)
    g.append(forged, 0, {"type": "clock.leave"})  # ...so a stored one is found
    assert g.audit()[1] == ["adjudication.mismatch"]


def test_a_clock_started_before_the_game_was_set_up_is_found() -> None:
    # The operator dates the set-up's clock.set an hour before the set-up was recorded: the
    # first seat's deadline then lies before the start, and an expiry one second after the
    # start looks due.
    g = Game()
    started = g.events[-1]
    setup_recorded = g.events[-2].recorded_at
    backdated = g.now - timedelta(hours=1)
    g.table = None
    g.events = g.events[:-1]
    for e in g.events:  # fold again up to the set-up
        g.table = fold_stream(g.table, [e], "g")
    g.append(referee.started(g.t, backdated))
    assert g.events[-1].version == started.version
    seat = g.t.rules.to_act(g.t.state)[0]
    g.now = setup_recorded + timedelta(seconds=1)
    assert g.deadline(seat) < g.now
    g.fire(seat)
    report, problems = g.audit()
    assert report["ok"] is False
    assert problems == ["clock.time"]


def test_a_leave_recorded_after_the_seats_time_ran_out_is_found() -> None:
    # A player out of time leaves before the expiry is recorded: the bot's greedy move would
    # replace the timeout's minimal one, and the player could return with a fresh clock — time
    # running out would cost nothing. The expiry comes first; such a leave appends nothing.
    g = Game()
    seat = g.t.rules.to_act(g.t.state)[0]
    g.now = g.deadline(seat) + timedelta(milliseconds=500)
    assert referee.presence(g.t, seat, True, g.now) == []
    clock = g.t.clock
    assert clock is not None
    forged = clocks.presence(clock, g.t.rules, g.t.state, seat, g.now, True)
    g.append(forged, seat, {"type": "clock.leave"})
    assert g.audit()[1] == ["adjudication.mismatch"]


def test_a_leave_before_the_deadline_passes_and_the_bot_plays_at_once() -> None:
    g = Game()
    seat = g.t.rules.to_act(g.t.state)[0]
    g.now = g.deadline(seat) - timedelta(milliseconds=1001)
    _leave(g, seat)  # a second later: one millisecond before the deadline
    g.fire(seat)
    assert g.events[-1].type == "clock.set" and any(e.type == "clock.bot" for e in g.events)
    assert g.audit()[1] == []


def test_a_second_clock_start_in_the_middle_of_the_game_is_found() -> None:
    # A clock.set with no command after the clock started is no set-up: an orphan, even when
    # it repeats the clocks as they run.
    g = Game()
    seat = g.t.rules.to_act(g.t.state)[0]
    g.now += timedelta(seconds=5)
    g.move(seat, get_game(GAME).expiry_command(g.t.state, seat))
    g.now += timedelta(seconds=5)
    g.append(referee.started(g.t, g.now))
    report, problems = g.audit()
    assert report["ok"] is False
    assert problems == ["adjudication.orphan"]


@pytest.mark.parametrize("game", ["jolly-cargo", "cargo-empire", "empire-builder", "curious-cargo"])
def test_the_bots_moves_pass_the_audit_in_every_game(game: str) -> None:
    """The audit asks the greedy bot again for each of its moves: in every game it chooses
    the recorded command (the bot is pure; a bot that kept state between moves or changed the
    state it was given would fail here)."""
    g = Game(ClockTerms("turn", seconds=60, sit_in_after=2), game)
    rules = g.t.rules
    timeout = get_game(game)
    _leave(g, 0)
    bot_moves = 0
    for _ in range(40):
        if rules.outcome(g.t.state) is not None:
            break
        asked = rules.to_act(g.t.state)
        g.now += timedelta(seconds=1)
        if 0 in asked:
            g.fire(0)
            bot_moves += 1
        else:
            g.move(asked[0], timeout.expiry_command(g.t.state, asked[0]))
    assert bot_moves >= 5
    assert g.audit()[1] == []


# --- issue 35 ---------------------------------------------------------------------------------
def test_a_cosmetic_command_has_no_clock_event_and_a_forged_one_is_found() -> None:
    """Empire Builder's ``choose_face`` is no move: the audit expects no ``clock.set`` after
    it (a game that has none passes; one that appended a clock.set restarting the seat's
    clock is a mismatch)."""
    from domain.empire_builder.commands import ChooseFace

    terms = ClockTerms("fischer", bank_seconds=10, increment_seconds=60, sit_in_after=2)
    g = Game(terms, game="empire-builder")
    seat = g.t.rules.to_act(g.t.state)[0]
    g.now += timedelta(seconds=1)
    g.move(seat, ChooseFace("banker"))
    assert g.events[-1].type == "face_chosen"
    report, problems = g.audit()
    assert report["ok"] is True and problems == []
    forged = Game(terms, game="empire-builder")
    forged.now += timedelta(seconds=1)
    t = forged.t
    face = ChooseFace("banker")
    produced = t.rules.decide(t.state, seat, face, Rng(forged.seed, t.version + 1))
    assert t.clock is not None
    restarted = clocks.settle(t.clock, t.rules.to_act(t.state), forged.now, moved=seat)
    forged.append([*produced, restarted], seat, {"type": "choose_face", "face": "banker"})
    report, problems = forged.audit()
    assert report["ok"] is False and problems == ["adjudication.mismatch"]


def test_an_expirys_dispute_file_re_runs_its_game_events() -> None:
    """The dispute file of a ``clock.expired`` checks what any command's does: ``to_act``,
    ``rules`` (the timeout rules re-run with the same generator) and ``listed_as_legal``; an
    expiry whose game events were altered fails ``rules``."""
    from service.application.disputes import checks

    g = Game()
    seat = g.t.rules.to_act(g.t.state)[0]
    before = copy_table(g.t)
    g.now = g.deadline(seat)
    g.fire(seat)
    command = g.commands[-1]
    decision = [e for e in g.events if e.command_id == command.id]
    first = decision[0].version
    found = {c.check: c for c in checks(before, command, decision, g.seed, first, live=True)}
    assert set(found) == {"version", "clock", "to_act", "rules", "listed_as_legal"}
    assert all(c.ok for c in found.values()), found
    game_event = next(i for i, e in enumerate(decision) if not e.type.startswith("clock."))
    altered = list(decision)
    altered[game_event] = msgspec.structs.replace(
        decision[game_event], data={**decision[game_event].data, "seat": 1 - seat}
    )
    found = {c.check: c for c in checks(before, command, altered, g.seed, first, live=True)}
    assert found["rules"].ok is False
