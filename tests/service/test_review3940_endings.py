"""Attacks on resign and abort (issue 40) kept as tests (review3940): the clock's own decisions
(an expiry, the sitting-in bot's move) after a resignation must treat the resigned seat as the
players' commands do — never asked, its clock never started."""

from __future__ import annotations

import msgspec
import pytest

from domain.kernel import Rng, RuleError
from domain.platform import referee
from domain.platform.clocks import ClockTerms
from domain.platform.events import Abort, Aborted, Resign
from domain.platform.table import copy_table, table_to_act
from ledger import clocking
from ledger.records import StoredEvent

from .test_endings_audit import T0, Recorded, first_move


def _expire_the_seat_to_act(g: Recorded) -> int:
    """Fire the deadline of the one seat whose clock runs; that seat."""
    clock = g.t.clock
    assert clock is not None
    running = [i for i, c in enumerate(clock.seats) if c.deadline is not None]
    assert running, "no seat's clock runs in a live game"
    seat = running[0]
    deadline = clock.seats[seat].deadline
    assert deadline is not None
    table = copy_table(g.t)
    fired = referee.fire(table, seat, deadline, g.seed)
    before = len(g.events)
    g.append(fired.events, seat, fired.command)
    # recorded when decided, at the deadline (the audit checks a clock decision's time)
    g.events[before:] = [
        msgspec.structs.replace(e, recorded_at=deadline) for e in g.events[before:]
    ]
    if fired.command["type"] == "clock.expired":  # the dispute file's checks of the expiry
        checks = clocking.expiry_checks(table, g.commands[-1], g.events[before:], g.seed, False)
        assert checks and all(ok for _, ok, _ in checks), checks
    return seat


@pytest.mark.parametrize("game", ["cargo-empire", "jolly-cargo", "empire-builder"])
def test_an_expiry_after_a_resignation_never_starts_the_resigned_seats_clock(game: str) -> None:
    g = Recorded(game, 3, ClockTerms("turn", seconds=60))
    g.send(1, Resign())
    assert g.t.resigned == [1]
    for _ in range(40):
        if g.t.status != "active":
            break
        _expire_the_seat_to_act(g)
        clock = g.t.clock
        assert clock is not None
        assert clock.seats[1].deadline is None and clock.seats[1].since is None, (
            "the resigned seat's clock was started by another seat's expiry"
        )
        waiting = table_to_act(g.t)
        running = [i for i, c in enumerate(clock.seats) if c.deadline is not None]
        assert g.t.status != "active" or waiting, "a live game waits for nobody"
        assert set(running) <= set(waiting), (running, waiting)
    report, problems = g.audit()
    assert report["ok"] is True, problems


@pytest.mark.parametrize("game", ["cargo-empire", "jolly-cargo", "empire-builder"])
def test_the_sitting_in_bots_moves_after_a_resignation_never_ask_the_resigned_seat(
    game: str,
) -> None:
    g = Recorded(game, 3, ClockTerms("turn", seconds=60))
    g.send(1, Resign())
    for seat in (0, 2):  # both players left: the bot sits in for each, at its deadline
        left = referee.presence(g.t, seat, True, T0)
        assert left, "a leave changes nothing"
        g.append(left, seat, {"type": "clock.leave"})
    for _ in range(40):
        if g.t.status != "active":
            break
        _expire_the_seat_to_act(g)
        clock = g.t.clock
        assert clock is not None
        assert clock.seats[1].deadline is None, "the resigned seat's clock was started"
        assert g.t.status != "active" or table_to_act(g.t), "a live game waits for nobody"
    assert any(e.type == "clock.bot" for e in g.events)
    report, problems = g.audit()
    assert report["ok"] is True, problems


def _forge_abort(g: Recorded) -> int:
    """Append a ``game.aborted`` to the last command's events (as the operator might); its
    version."""
    last = g.commands[-1]
    seat = last.seat
    extra = StoredEvent(
        "g", g.t.version + 1, "game.aborted", {"type": "game.aborted", "seat": seat},
        seat, last.id, T0, b"", b"",
    )  # fmt: skip
    g.events.append(extra)
    g.commands[-1] = msgspec.structs.replace(last, last_version=extra.version)
    return extra.version


@pytest.mark.parametrize("clock", [None, ClockTerms("turn", seconds=60)])
def test_the_audit_finds_a_forged_abort(clock: ClockTerms | None) -> None:
    # appended to a move, before every seat moved (an abort would have been allowed)
    g = Recorded("cargo-empire", 2, clock)
    first_move(g)
    forged = _forge_abort(g)
    report, problems = g.audit()
    assert report["ok"] is False and report["first_bad"] is not None, problems
    assert report["first_bad"] <= forged
    assert "adjudication.mismatch" in problems, problems
    # an abort command after every seat moved (by an expiry, for the one that never did)
    h = Recorded("cargo-empire", 2, ClockTerms("turn", seconds=60))
    first_move(h)
    _expire_the_seat_to_act(h)
    assert sorted(set(h.t.moved)) == [0, 1], h.t.moved
    with pytest.raises(RuleError) as refused:
        referee.decide(h.t, 0, Abort(), Rng(h.seed, h.t.version + 1))
    assert refused.value.code == "rule.abort_too_late"
    assert h.audit()[0]["ok"] is True
    h.append([Aborted(0)], 0, {"type": "abort"})
    report, problems = h.audit()
    assert report["ok"] is False and report["first_bad"] == h.t.version, problems
    assert problems == ["adjudication.error"], problems
