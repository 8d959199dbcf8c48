"""A decision's cost is bounded (issue 35): one command causes at most
``MANIFEST_MAX_EVENTS_PER_COMMAND`` game events; a decision past it is stopped at the first
event past the cap and refused (``command.too_many_events``), so nothing is appended and the
event loop is not held for a time the client chooses.

The attack: an Empire Builder position with every seat's ``skip`` at K made one ``end_turn``
emit K × seats ``turn_lost`` events (K = 150,000: 19 s, 656 MB). Positions now refuse such a
skip (``tests/domain/test_position_bounds.py``); a game recorded before (a legacy stream folds
unchecked) is what this file plays."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from domain.empire_builder import EMPIRE_BUILDER
from domain.empire_builder.board import MAP
from domain.empire_builder.position import state_from_position
from domain.kernel import RuleError, typed
from domain.platform.table import Table, encode_table
from ledger.ruling import chained, rule
from service.application.play import MAX_EVENTS_PER_COMMAND
from service.settings import Settings

SEED = bytes(32)


def _legacy(skip: int, seats: int = 6) -> Table:
    """An active Empire Builder table folded from a position recorded before skip's range:
    seat 0 to act, every seat losing ``skip`` turns (seat 0's count from its next turn)."""
    train = MAP.cities["Chicago"].mileposts[0]
    players = [
        {"cards": [3 * s, 3 * s + 1, 3 * s + 2], "skip": skip, "train": train} for s in range(seats)
    ]
    position = typed({"players": players, "turn_number": 3 * seats}, EMPIRE_BUILDER.position_type)
    return Table(
        game_id="legacy", game="empire-builder", seats=seats, options={}, version=1,
        status="active", names=[f"p{s}" for s in range(seats)], messages=[],
        state=state_from_position(position),
    )  # fmt: skip


def test_the_default_cap_is_the_settings_default() -> None:
    assert Settings().max_events_per_command == MAX_EVENTS_PER_COMMAND == 200
    assert Settings.from_env({"MANIFEST_MAX_EVENTS_PER_COMMAND": "5"}).max_events_per_command == 5


def test_a_turn_ending_within_the_cap_is_decided_as_before() -> None:
    table = _legacy(skip=3)  # the most a position may name now: 6 seats x 3 turns lost
    ruling = rule(
        table,
        0,
        EMPIRE_BUILDER.decode_command({"type": "end_turn"}),
        SEED,
        max_events=MAX_EVENTS_PER_COMMAND,
    )
    types = [p.type for p in ruling.pending]
    assert types == ["turn_ended", *["turn_lost"] * 18]
    assert [p.skip for p in ruling.table.state.players] == [0] * 6


def test_a_legacy_skip_of_150_000_is_refused_at_the_cap_and_quickly() -> None:
    table = _legacy(skip=150_000)
    command = EMPIRE_BUILDER.decode_command({"type": "end_turn"})
    started = time.perf_counter()
    with pytest.raises(RuleError) as refused:
        rule(table, 0, command, SEED, max_events=MAX_EVENTS_PER_COMMAND)
    took = time.perf_counter() - started
    assert refused.value.code == "command.too_many_events"
    assert refused.value.details == {"most": MAX_EVENTS_PER_COMMAND}
    # Stopped at the cap: 201 events' work, not 750,000 (which took 19 s on the server).
    assert took < 1.0, took
    assert table.state.players[1].skip == 150_000  # the table itself is untouched
    with pytest.raises(RuleError, match="more than 4 events"):
        rule(_legacy(skip=1), 0, command, SEED, max_events=4)


def test_a_game_that_would_hold_an_unencodable_value_is_refused_before_the_append() -> None:
    """The issue's second attack, on a legacy stream: money of 4,300 digits (the most JSON
    numbers may have) and a ``borrow`` of 1 make 4,301, which no encoder writes. The ruling
    encodes the table before the append, so the command is refused (422), nothing recorded."""
    table = _legacy(skip=0, seats=2)
    table.state.players[0].money = int("9" * 4300)
    borrow = EMPIRE_BUILDER.decode_command({"type": "borrow", "amount": 1})
    with pytest.raises(RuleError) as refused:
        rule(table, 0, borrow, SEED, max_events=MAX_EVENTS_PER_COMMAND)
    assert refused.value.code == "command.unencodable"
    # and an ordinary move carries the table encoded once, for the projection to store as is
    ruling = rule(_legacy(skip=0, seats=2), 0, borrow, SEED, max_events=MAX_EVENTS_PER_COMMAND)
    assert ruling.table_json == encode_table(ruling.table)


def test_an_event_that_cannot_be_encoded_is_refused_before_the_append() -> None:
    """The events themselves are hashed, and so encoded, before the append (``chained``): an
    event value no encoder writes (here a 4,301-digit amount the table does not keep) is
    ``command.unencodable``, a 422 with nothing recorded, not a 500 from inside the append."""
    borrow = EMPIRE_BUILDER.decode_command({"type": "borrow", "amount": 1})
    ruling = rule(_legacy(skip=0, seats=2), 0, borrow, SEED, max_events=MAX_EVENTS_PER_COMMAND)
    forged = ruling.pending[0]
    ruling.pending[0] = type(forged)(**{
        **{f: getattr(forged, f) for f in forged.__struct_fields__},
        "data": {"amount": 10**4301 - 1},
    })  # fmt: skip
    with pytest.raises(RuleError) as refused:
        chained(ruling, bytes(32), 0, "00000000-0000-0000-0000-000000000001", datetime.now(UTC))
    assert refused.value.code == "command.unencodable"
