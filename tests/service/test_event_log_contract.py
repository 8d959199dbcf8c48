"""One contract, two event logs (issue 36): the PostgreSQL store and the in-memory log keep the
same promises (:class:`service.eventstore.port.EventLog`), the way the ``eventsourcing``
library runs one suite against each of its backends. Dense versions on a verified chain,
exactly one of two concurrent appends at one version, an idempotent resend appending nothing,
refusals capped per seat and counted past the cap, deadlines claimed by one owner at a time,
kept documents by their stamp, a failed locked write leaving nothing behind."""

from __future__ import annotations

import asyncio
import hashlib
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import pytest

from ledger.chain import ZERO_HASH, chain_events, utc_micro, verify_chain
from ledger.records import NewEvent, StoredEvent
from service.eventstore.memory import MemoryLog
from service.eventstore.migrate import migrate
from service.eventstore.port import EventLog
from service.eventstore.records import AcceptedCommand, DuplicateCommand, GameRow
from service.eventstore.store import EventStore

Opener = Callable[[], Any]


@asynccontextmanager
async def _postgres(dsn: str) -> AsyncIterator[EventLog]:
    await migrate(dsn)
    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=4)
    try:
        yield EventStore(pool)
    finally:
        await pool.close()


@asynccontextmanager
async def _memory() -> AsyncIterator[EventLog]:
    yield MemoryLog()


@pytest.fixture(
    params=["memory", pytest.param("postgres", marks=pytest.mark.integration)],
)
def opened(request: pytest.FixtureRequest) -> Opener:
    """A function opening a fresh, empty log of the parametrized kind."""
    if request.param == "memory":
        return _memory
    dsn = request.getfixturevalue("fresh_database")
    return lambda: _postgres(dsn)


def run(opened: Opener, test: Callable[[EventLog], Awaitable[None]]) -> None:
    async def main() -> None:
        async with opened() as log:
            await test(log)

    asyncio.run(main())


async def new_game(log: EventLog, seats: int = 2) -> GameRow:
    return await log.create_game(
        game="jolly-cargo",
        seats=seats,
        options={"variant": "standard"},
        invite_code="INV-" + uuid.uuid4().hex[:6],
        seed=b"s" * 32,
        host_token_hash=hashlib.sha256(b"host").digest(),
        players=[None] * seats,
    )


def accepted(
    row: GameRow, version: int, head: bytes, *datas: Any, key: str | None = None
) -> AcceptedCommand:
    """A command's events chained after (``version``, ``head``) and its answer, as the
    application hands them to the log (:mod:`ledger` before the append)."""
    now = utc_micro(datetime.now(UTC))
    command_id = str(uuid.uuid4())
    events = [NewEvent("noted", d) for d in datas]
    stored = chain_events(row.id, version, head, events, 0, command_id, now)
    return AcceptedCommand(
        game_id=row.id,
        version=version,
        head=head,
        stored=stored,
        seat=0,
        command_id=command_id,
        status=None,
        result=None,
        idempotency_key=key,
        command_type="note",
        body={"command": {"type": "note"}},
        received_at=now,
        response=_answer(stored),
    )


def _answer(stored: list[StoredEvent]) -> dict[str, Any]:
    return {"version": stored[-1].version, "head": stored[-1].hash.hex()}


async def _lobby_append(log: EventLog, game_id: str, *datas: Any) -> None:
    async with log.lock(game_id) as locked:
        await locked.append(
            expected_version=locked.row.version,
            events=[NewEvent("noted", d) for d in datas],
            seat=None,
            command_id=None,
        )


def test_versions_are_dense_and_the_chain_verifies(opened: Opener) -> None:
    async def test(log: EventLog) -> None:
        row = await new_game(log)
        assert await log.version_head(row.id) == (0, ZERO_HASH)
        await _lobby_append(log, row.id, {"n": 1}, {"n": 2})
        version, head = await log.version_head(row.id) or (0, b"")
        assert await log.append_command(accepted(row, version, head, {"n": 3}))
        await _lobby_append(log, row.id, {"b": 1, "a": {"z": 1, "yy": 2}})
        events = await log.read(row.id)
        assert [e.version for e in events] == [1, 2, 3, 4]
        assert [e.version for e in await log.read(row.id, after=2)] == [3, 4]
        assert [e.version for e in await log.read(row.id, after=1, limit=2)] == [2, 3]
        verify_chain(events)
        assert await log.version_head(row.id) == (4, events[-1].hash)
        # jsonb's key order (shortest first), whichever log: the bytes a reader is sent
        assert list(events[-1].data) == ["a", "b"] and list(events[-1].data["a"]) == ["z", "yy"]

    run(opened, test)


def test_exactly_one_of_two_concurrent_appends_wins(opened: Opener) -> None:
    async def test(log: EventLog) -> None:
        row = await new_game(log)
        first, second = (
            accepted(row, 0, ZERO_HASH, {"by": "a"}),
            accepted(row, 0, ZERO_HASH, {"by": "b"}),
        )
        results = await asyncio.gather(log.append_command(first), log.append_command(second))
        assert sorted(results) == [False, True]
        winner = first if results[0] else second
        assert await log.read(row.id) == winner.stored
        recorded = await log.commands(row.id)
        assert [c.id for c in recorded] == [winner.command_id]
        assert recorded[0].response == {"version": 1, "head": winner.stored[0].hash.hex()}
        # the loser, decided again on the new head, is appended after it
        again = accepted(row, 1, winner.stored[0].hash, {"by": "loser"})
        assert await log.append_command(again)
        assert [e.version for e in await log.read(row.id)] == [1, 2]

    run(opened, test)


def test_an_idempotent_resend_appends_nothing(opened: Opener) -> None:
    async def test(log: EventLog) -> None:
        row = await new_game(log)
        done = accepted(row, 0, ZERO_HASH, {"n": 1}, key="k1")
        assert await log.append_command(done)
        head = done.stored[-1].hash
        with pytest.raises(DuplicateCommand):
            await log.append_command(accepted(row, 1, head, {"n": 2}, key="k1"))
        assert await log.version_head(row.id) == (1, head)
        found = await log.find_command(row.id, 0, "k1")
        assert found is not None and found.outcome == "accepted"
        assert found.response == done.response
        assert (found.first_version, found.last_version) == (1, 1)
        assert await log.find_command(row.id, 1, "k1") is None  # keys are per seat
        # a refusal under a key taken is refused too: nothing recorded twice
        with pytest.raises(DuplicateCommand):
            await log.record_rejection(
                game_id=row.id, command_id=str(uuid.uuid4()), seat=0, idempotency_key="k1",
                type="note", body={}, error_code="x", error_detail="y",
            )  # fmt: skip
        assert len(await log.commands(row.id)) == 1

    run(opened, test)


def test_refusals_are_capped_per_seat_and_counted_past_the_cap(opened: Opener) -> None:
    async def test(log: EventLog) -> None:
        row = await new_game(log)
        for _ in range(3):
            if await log.admit_refusal(row.id, 0, cap=2):
                await log.record_rejection(
                    game_id=row.id, command_id=str(uuid.uuid4()), seat=0, idempotency_key=None,
                    type="note", body={"x": 1}, error_code="rule.x", error_detail="no",
                )  # fmt: skip
        assert await log.admit_refusal(row.id, 1, cap=2)  # another seat's cap is its own
        recorded = [c for c in await log.commands(row.id) if c.outcome == "rejected"]
        assert len(recorded) == 2
        log.refusal_over_budget(row.id, 1)
        deadline = time.monotonic() + 10  # PostgreSQL's tally is written within a second
        while True:
            unrecorded = await log.unrecorded_refusals(row.id)
            if unrecorded.by_seat.get("1") or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.05)
        assert unrecorded.by_seat == {"0": 1, "1": 1}
        assert unrecorded.over_budget == {"1": 1}

    run(opened, test)


def _clock_set(version: int, due: datetime | None) -> NewEvent:
    seats = [{"seat": 0, "deadline": due.isoformat()}] if due is not None else [{"seat": 0}]
    return NewEvent("clock.set", {"seats": seats, "version": version})


def test_deadlines_are_claimed_once(opened: Opener) -> None:
    async def test(log: EventLog) -> None:
        row = await new_game(log)
        now = datetime.now(UTC).replace(microsecond=0)
        async with log.lock(row.id) as locked:
            await locked.append(
                expected_version=0, events=[_clock_set(1, now - timedelta(seconds=1))],
                seat=None, command_id=None,
            )  # fmt: skip
        pending = await log.pending_deadline(row.id)
        assert pending is not None and pending.version == 1
        lease = now + timedelta(seconds=30)
        claims = await asyncio.gather(
            log.claim_deadlines(now, lease, "A", 8), log.claim_deadlines(now, lease, "B", 8)
        )
        assert sorted(len(c) for c in claims) == [0, 1]
        owner = "A" if claims[0] else "B"
        assert await log.claim_deadlines(now, lease, "C", 8) == []  # held for the lease
        later = lease + timedelta(seconds=1)
        longer = later + timedelta(seconds=30)
        assert len(await log.claim_deadlines(later, longer, "C", 8)) == 1  # the lease lapsed
        await log.release_deadline(row.id, owner)  # not the holder: nothing given back
        assert await log.claim_deadlines(later, longer, owner, 8) == []
        await log.release_deadline(row.id, "C")
        assert len(await log.claim_deadlines(later, longer, owner, 8)) == 1
        # a clock.set with no running clock clears it
        await _clock_append(log, row.id, _clock_set(2, None))
        assert await log.pending_deadline(row.id) is None

    run(opened, test)


async def _clock_append(log: EventLog, game_id: str, event: NewEvent) -> None:
    async with log.lock(game_id) as locked:
        await locked.append(
            expected_version=locked.row.version, events=[event], seat=None, command_id=None
        )


def test_a_failed_locked_write_leaves_nothing(opened: Opener) -> None:
    async def test(log: EventLog) -> None:
        row = await new_game(log)
        with pytest.raises(RuntimeError):
            async with log.lock(row.id) as locked:
                await locked.append(
                    expected_version=0, events=[NewEvent("noted", {})], seat=None,
                    command_id=None,
                )  # fmt: skip
                await locked.set_seat(0, "ada", b"t" * 32)
                raise RuntimeError("rolled back")
        assert await log.version_head(row.id) == (0, ZERO_HASH)
        assert await log.read(row.id) == [] and await log.seat_for_token(b"t" * 32) is None
        async with log.lock(row.id) as locked:
            await locked.set_seat(0, "ada", b"t" * 32)
        assert await log.seat_for_token(b"t" * 32) == (row.id, 0)
        assert (await log.get_game(row.id) or row).players == ["ada", None]

    run(opened, test)


def test_kept_documents_and_signing_keys(opened: Opener) -> None:
    async def test(log: EventLog) -> None:
        row = await new_game(log)
        assert await log.keep_document(row.id, "export", "all", b"stamp1", b"body1")
        assert await log.kept_document(row.id, "export", ["seat:0", "all"], b"stamp1") == b"body1"
        assert await log.kept_document(row.id, "export", ["all"], b"stamp2") is None
        a, b = b"a" * 32, b"b" * 32
        assert await log.server_key("primary", b"pem-a", a) == b"pem-a"
        assert await log.server_key("primary", b"pem-b", b) == b"pem-a"  # first wins
        await log.record_key_used("ka", a)
        await log.record_key_used("ka", a)  # its first use is kept
        assert [raw for raw, _ in await log.keys_used()] == [a]

    run(opened, test)
