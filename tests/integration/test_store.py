"""The event store against a real PostgreSQL: appends, the hash chain, locking, commands."""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import pytest

from ledger.chain import ZERO_HASH, canonical, canonical_uuid, format_at, verify_chain
from service.eventstore.migrate import migrate
from service.eventstore.store import (
    DuplicateCommand,
    EventStore,
    GameNotFound,
    GameRow,
    NewEvent,
    SeatTaken,
    VersionConflict,
)

pytestmark = pytest.mark.integration


@asynccontextmanager
async def opened(
    dsn: str, *, size: int = 4, clock: Callable[[], datetime] | None = None
) -> AsyncIterator[EventStore]:
    await migrate(dsn)
    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=size)
    try:
        yield EventStore(pool, clock=clock)
    finally:
        await pool.close()


async def new_game(store: EventStore, game: str = "jolly-cargo", seats: int = 2) -> GameRow:
    return await store.create_game(
        game=game,
        seats=seats,
        options={"variant": "standard", "turns": 3},
        invite_code="INV-" + uuid.uuid4().hex[:6],
        seed=b"s" * 32,
        host_token_hash=hashlib.sha256(b"host").digest(),
        players=[None] * seats,
    )


async def append(store: EventStore, game_id: str, *datas: Any, **kw: Any) -> None:
    async with store.lock(game_id) as locked:
        await locked.append(
            expected_version=locked.row.version,
            events=[NewEvent("noted", d) for d in datas],
            seat=kw.get("seat"),
            command_id=kw.get("command_id"),
        )


async def superuser(dsn: str, *sql: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        for statement in sql:
            await conn.execute(statement)
    finally:
        await conn.close()


# --------------------------------------------------------------------------- canonical bytes


def test_canonical_bytes_are_exactly_specified() -> None:
    at = datetime(2026, 11, 21, 5, 30, 0, 123456, tzinfo=UTC)
    gid = "0B3E5C1A-1111-4222-8333-444455556666"
    got = canonical(gid, 7, "moved", 1, None, at, {"z": [1, {"b": 2, "a": 1}], "a": "é"})
    assert got == (
        b'{"at":"2026-11-21T05:30:00.123456Z","command":null,'
        b'"data":{"a":"\xc3\xa9","z":[1,{"a":1,"b":2}]},'
        b'"game":"0b3e5c1a-1111-4222-8333-444455556666","seat":1,"type":"moved","version":7}'
    )
    # Any spelling of a UUID hashes as its one canonical form.
    for spelling in (gid, gid.lower(), gid.replace("-", ""), f"{{{gid}}}", uuid.UUID(gid)):
        assert canonical_uuid(spelling) == "0b3e5c1a-1111-4222-8333-444455556666"
    # Exactly six fractional digits, also for a whole second, and always in UTC.
    assert format_at(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == "2026-01-02T03:04:05.000000Z"
    plus2 = timezone(timedelta(hours=2))
    assert format_at(datetime(2026, 1, 2, 5, 4, 5, 7, tzinfo=plus2)) == (
        "2026-01-02T03:04:05.000007Z"
    )


# --------------------------------------------------------------------------- games and seats


def test_create_get_and_secrets(fresh_database: str) -> None:
    async def body() -> None:
        async with opened(fresh_database) as store:
            row = await new_game(store, seats=3)
            assert uuid.UUID(row.id).version == 4
            assert (row.status, row.version, row.head, row.seats) == ("open", 0, ZERO_HASH, 3)
            assert row.options == {"variant": "standard", "turns": 3}
            assert row.players == [None, None, None]
            assert row.result is None
            assert await store.get_game(row.id) == row
            assert await store.get_game(uuid.UUID(row.id)) == row
            assert await store.get_game(str(uuid.uuid4())) is None
            assert await store.get_game("not-a-uuid") is None
            assert await store.seed(row.id) == b"s" * 32
            assert await store.host_token_hash(row.id) == hashlib.sha256(b"host").digest()
            with pytest.raises(GameNotFound):
                await store.seed(str(uuid.uuid4()))
            assert await store.read(row.id) == []

    asyncio.run(body())


def test_seats_and_tokens(fresh_database: str) -> None:
    async def body() -> None:
        async with opened(fresh_database) as store:
            row = await new_game(store, seats=3)
            t0, t2 = hashlib.sha256(b"t0").digest(), hashlib.sha256(b"t2").digest()
            await store.set_seat(row.id, 0, "Ada", t0)
            updated = await store.set_seat(row.id, 2, "Cy", t2)
            assert updated.players == ["Ada", None, "Cy"]
            assert (await store.get_game(row.id)).players == ["Ada", None, "Cy"]  # type: ignore[union-attr]
            assert await store.seats(row.id) == [(0, "Ada"), (2, "Cy")]
            assert await store.seat_for_token(t2) == (row.id, 2)
            assert await store.seat_for_token(b"x" * 32) is None
            with pytest.raises(SeatTaken):
                await store.set_seat(row.id, 0, "Eve", hashlib.sha256(b"eve").digest())
            new0 = hashlib.sha256(b"t0-new").digest()
            await store.set_seat(row.id, 0, "Ada", new0, replace=True)
            assert await store.seat_for_token(t0) is None
            assert await store.seat_for_token(new0) == (row.id, 0)
            with pytest.raises(ValueError):
                await store.set_seat(row.id, 3, "Out", b"o" * 32)
            with pytest.raises(GameNotFound):
                await store.set_seat(str(uuid.uuid4()), 0, "Nobody", b"n" * 32)

    asyncio.run(body())


def test_set_seat_inside_the_lock(fresh_database: str) -> None:
    async def body() -> None:
        async with opened(fresh_database) as store:
            row = await new_game(store, seats=2)
            async with store.lock(row.id) as locked:
                got = await locked.set_seat(1, "Bo", b"b" * 32)
                assert got.players == [None, "Bo"] and locked.row.players == [None, "Bo"]
                with pytest.raises(SeatTaken):
                    await locked.set_seat(1, "Eve", b"e" * 32)
                with pytest.raises(ValueError):
                    await locked.set_seat(2, "Out", b"o" * 32)
                # Still usable after the refusals (savepoints), and the version is unchanged.
                await locked.append(
                    expected_version=0,
                    events=[NewEvent("joined", {"seat": 1})],
                    seat=1,
                    command_id=None,
                )
                assert locked.row.players == [None, "Bo"]
            assert await store.seat_for_token(b"b" * 32) == (row.id, 1)
            assert await store.seat_for_token(b"e" * 32) is None
            game = await store.get_game(row.id)
            assert game is not None and game.players == [None, "Bo"] and game.version == 1

    asyncio.run(body())


def test_list_games_keyset_pagination(fresh_database: str) -> None:
    async def body() -> None:
        async with opened(fresh_database) as store:
            created = [await new_game(store, game="jolly-cargo") for _ in range(5)]
            created += [await new_game(store, game="cargo-empire") for _ in range(3)]
            for row in created[1:6:2]:  # three of them become active
                async with store.lock(row.id) as locked:
                    await locked.append(
                        expected_version=0,
                        events=[NewEvent("started", {})],
                        seat=None,
                        command_id=None,
                        status="active",
                    )
            newest_first = [r.id for r in reversed(created)]

            pages: list[list[str]] = []
            cursor = None
            while True:
                page = await store.list_games(limit=3, before=cursor)
                if not page:
                    break
                pages.append([r.id for r in page])
                cursor = page[-1].cursor
            assert [len(p) for p in pages] == [3, 3, 2]
            assert [i for p in pages for i in p] == newest_first

            active = await store.list_games(status="active")
            assert [r.id for r in active] == [created[5].id, created[3].id, created[1].id]
            open_jolly = await store.list_games(status="open", game="jolly-cargo", limit=2)
            assert [r.id for r in open_jolly] == [created[4].id, created[2].id]
            rest = await store.list_games(
                status="open", game="jolly-cargo", before=open_jolly[-1].cursor
            )
            assert [r.id for r in rest] == [created[0].id]
            assert await store.list_games(game="empire-builder") == []

    asyncio.run(body())


# --------------------------------------------------------------------------- appends and chain


def test_append_dense_versions_and_valid_chain(fresh_database: str) -> None:
    async def body() -> None:
        async with opened(fresh_database) as store:
            row = await new_game(store)
            cmd = str(uuid.uuid4())
            async with store.lock(row.id) as locked:
                assert locked.row == row
                first = await locked.append(
                    expected_version=0,
                    events=[NewEvent("started", {"seed_hash": "ab"}), NewEvent("dealt", [1, 2])],
                    seat=None,
                    command_id=None,
                    status="active",
                    players=["Ada", "Bo"],
                )
                assert (first.first_version, first.last_version) == (1, 2)
                assert locked.row.version == 2 and locked.row.head == first.head
                # A second append in the same lock continues the chain.
                second = await locked.append(
                    expected_version=2,
                    events=[NewEvent("moved", {"to": "harbour", "n": 3})],
                    seat=1,
                    command_id=cmd.upper(),
                )
            assert (second.first_version, second.last_version) == (3, 3)

            # Floats that jsonb re-spells still hash to the stored link.
            await append(store, row.id, {"big": 1e20, "half": 0.5, "tiny": 1e-7, "s": "\u2603"})
            events = await store.read(row.id)
            assert [e.version for e in events] == [1, 2, 3, 4]
            assert events[:3] == [*first.events, *second.events]
            assert events[0].prev_hash == ZERO_HASH
            assert all(a.hash == b.prev_hash for a, b in itertools.pairwise(events))
            assert events[2].seat == 1 and events[2].command_id == cmd
            assert events[0].recorded_at == events[1].recorded_at  # one stamp per append

            game = await store.get_game(row.id)
            assert game is not None
            assert (game.version, game.status, game.players) == (4, "active", ["Ada", "Bo"])
            assert game.head == events[-1].hash
            assert verify_chain(events) is None
            assert verify_chain(events, head=game.head) is None
            assert verify_chain(events[:3], head=game.head) == 4  # last event missing
            assert verify_chain([events[0], events[2]]) == 2  # gap
            assert verify_chain(events[2:], prev_hash=events[1].hash, first_version=3) is None

            assert [e.version for e in await store.read(row.id, after=1, limit=2)] == [2, 3]
            assert await store.read(row.id, after=4) == []

            async with store.lock(row.id) as locked:
                await locked.append(
                    expected_version=4,
                    events=[NewEvent("ended", {})],
                    seat=None,
                    command_id=None,
                    status="finished",
                    result={"scores": [3, 5], "winners": [1]},
                )
            game = await store.get_game(row.id)
            assert game is not None and game.status == "finished"
            assert game.result == {"scores": [3, 5], "winners": [1]}

    asyncio.run(body())


def test_recorded_at_round_trips_to_the_microsecond(fresh_database: str) -> None:
    stamps = iter(
        [
            datetime(2026, 11, 21, 5, 30, 0, 123456, tzinfo=UTC),
            datetime(2026, 11, 21, 7, 30, 0, 999999, tzinfo=timezone(timedelta(hours=2))),
            datetime(2030, 1, 1, 0, 0, 0, 1),  # naive: taken as UTC
        ]
    )

    async def body() -> None:
        async with opened(fresh_database, clock=lambda: next(stamps)) as store:
            row = await new_game(store)
            for i in range(3):
                await append(store, row.id, {"i": i})
            events = await store.read(row.id)
            assert [e.recorded_at for e in events] == [
                datetime(2026, 11, 21, 5, 30, 0, 123456, tzinfo=UTC),
                datetime(2026, 11, 21, 5, 30, 0, 999999, tzinfo=UTC),
                datetime(2030, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
            ]
            assert format_at(events[0].recorded_at) == "2026-11-21T05:30:00.123456Z"
            assert verify_chain(events) is None

        async with opened(fresh_database) as store:  # the real clock
            row = await new_game(store)
            async with store.lock(row.id) as locked:
                result = await locked.append(
                    expected_version=0, events=[NewEvent("e", 1)], seat=None, command_id=None
                )
            (stored,) = await store.read(row.id)
            assert stored.recorded_at == result.events[0].recorded_at
            assert stored.recorded_at.tzinfo is not None
            assert stored == result.events[0]

    asyncio.run(body())


def test_events_are_immutable(fresh_database: str) -> None:
    async def body() -> None:
        async with opened(fresh_database) as store:
            row = await new_game(store)
            await append(store, row.id, {"a": 1}, {"a": 2})
            before = await store.read(row.id)
            conn = await asyncpg.connect(fresh_database)
            try:
                for sql in (
                    "UPDATE events SET data = '{\"a\": 9}'",
                    "UPDATE events SET hash = prev_hash WHERE version = 2",
                    "DELETE FROM events WHERE version = 2",
                    "TRUNCATE events",
                    "TRUNCATE events, games, commands, secrets, seat_tokens, deadlines",
                ):
                    with pytest.raises(asyncpg.PostgresError, match="events are immutable"):
                        await conn.execute(sql)
            finally:
                await conn.close()
            assert await store.read(row.id) == before

    asyncio.run(body())


def test_tampering_is_found_by_verify_chain(fresh_database: str) -> None:
    async def body() -> None:
        async with opened(fresh_database) as store:
            row = await new_game(store)
            for i in range(5):
                await append(store, row.id, {"i": i}, seat=i % 2, command_id=str(uuid.uuid4()))
            assert verify_chain(await store.read(row.id)) is None
            await superuser(
                fresh_database,
                "ALTER TABLE events DISABLE TRIGGER USER",
                f"UPDATE events SET data = '{{\"i\": 99}}' WHERE game_id = '{row.id}' "
                "AND version = 3",
                "ALTER TABLE events ENABLE TRIGGER USER",
            )
            tampered = await store.read(row.id)
            assert tampered[2].data == {"i": 99}
            assert verify_chain(tampered) == 3

            # Re-hashing the tampered row does not help: the next link breaks instead.
            good = tampered[2]
            fixed = canonical(
                good.game_id,
                3,
                good.type,
                good.seat,
                good.command_id,
                good.recorded_at,
                good.data,
            )
            new_hash = hashlib.sha256(good.prev_hash + fixed).digest()
            await superuser(
                fresh_database,
                "ALTER TABLE events DISABLE TRIGGER USER",
                f"UPDATE events SET hash = '\\x{new_hash.hex()}' WHERE game_id = '{row.id}' "
                "AND version = 3",
                "ALTER TABLE events ENABLE TRIGGER USER",
            )
            assert verify_chain(await store.read(row.id)) == 4

    asyncio.run(body())


# --------------------------------------------------------------------------- conflicts


def test_stale_expected_version_conflicts_and_appends_nothing(fresh_database: str) -> None:
    async def body() -> None:
        async with opened(fresh_database) as store:
            row = await new_game(store)
            await append(store, row.id, {"n": 1})
            with pytest.raises(VersionConflict) as info:
                async with store.lock(row.id) as locked:
                    await locked.append(
                        expected_version=0, events=[NewEvent("x", {})], seat=0, command_id=None
                    )
            assert info.value.current_version == 1
            assert info.value.expected_version == 0
            events = await store.read(row.id)
            assert [e.version for e in events] == [1]
            game = await store.get_game(row.id)
            assert game is not None and game.version == 1 and game.head == events[0].hash

            with pytest.raises(GameNotFound):
                async with store.lock(str(uuid.uuid4())):
                    pass
            with pytest.raises(GameNotFound):
                async with store.lock("not-a-uuid"):
                    pass
            async with store.lock(row.id) as locked:
                pass
            with pytest.raises(RuntimeError):
                await locked.read()

    asyncio.run(body())


def test_unique_violation_surfaces_as_version_conflict(fresh_database: str) -> None:
    async def body() -> None:
        async with opened(fresh_database) as store:
            row = await new_game(store)
            # An event written behind the store's back: games.version still says 0.
            await superuser(
                fresh_database,
                "INSERT INTO events (game_id, version, type, data, recorded_at, prev_hash, hash) "
                f"VALUES ('{row.id}', 1, 'rogue', '{{}}', now(), '\\x{'00' * 32}', "
                f"'\\x{'11' * 32}')",
            )
            async with store.lock(row.id) as locked:
                with pytest.raises(VersionConflict) as info:
                    await locked.append(
                        expected_version=0, events=[NewEvent("x", {})], seat=0, command_id=None
                    )
                assert info.value.current_version == 1
                # The lock's transaction is still usable after the conflict.
                await locked.record_command(
                    command_id=str(uuid.uuid4()),
                    seat=0,
                    idempotency_key="k",
                    type="x",
                    body={"type": "x"},
                    outcome="conflict",
                    error_code="version.conflict",
                )
            assert (await store.find_command(row.id, 0, "k")) is not None
            assert [e.type for e in await store.read(row.id)] == ["rogue"]

    asyncio.run(body())


WRITERS = 32
ATTEMPTS = 8


def test_32_concurrent_writers_on_one_game(fresh_database: str) -> None:
    async def body() -> None:
        async with opened(fresh_database) as setup:
            row = await new_game(setup, seats=4)
        pools = [
            await asyncpg.create_pool(fresh_database, min_size=1, max_size=1)
            for _ in range(WRITERS)
        ]
        barrier = asyncio.Barrier(WRITERS)
        successes: list[tuple[int, int]] = []
        conflicts: list[tuple[int, int, bool]] = []
        stale_successes: list[tuple[int, int]] = []

        async def writer(w: int, store: EventStore) -> None:
            await barrier.wait()
            for attempt in range(ATTEMPTS):
                game = await store.get_game(row.id)
                assert game is not None
                stale = attempt % 3 == 2 and game.version > 0
                expected = game.version - 1 if stale else game.version
                try:
                    async with store.lock(row.id) as locked:
                        await locked.append(
                            expected_version=expected,
                            events=[NewEvent("tick", {"writer": w, "attempt": attempt})],
                            seat=w % 4,
                            command_id=str(uuid.uuid4()),
                        )
                except VersionConflict as exc:
                    assert exc.current_version > expected
                    conflicts.append((w, attempt, stale))
                else:
                    successes.append((w, attempt))
                    if stale:
                        stale_successes.append((w, attempt))
                await asyncio.sleep(0)

        try:
            await asyncio.gather(*(writer(w, EventStore(p)) for w, p in enumerate(pools)))
        finally:
            for p in pools:
                await p.close()

        async with opened(fresh_database) as store:
            events = await store.read(row.id)
            game = await store.get_game(row.id)
        n = len(events)
        assert [e.version for e in events] == list(range(1, n + 1))
        assert n == len(successes) > 0
        assert len(successes) + len(conflicts) == WRITERS * ATTEMPTS
        assert stale_successes == []
        assert any(stale for *_, stale in conflicts) and any(not s for *_, s in conflicts)
        assert sorted((e.data["writer"], e.data["attempt"]) for e in events) == sorted(successes)
        assert game is not None and game.version == n and game.head == events[-1].hash
        assert verify_chain(events, head=game.head) is None

    asyncio.run(body())


# --------------------------------------------------------------------------- commands


def test_idempotency_keys_and_command_records(fresh_database: str) -> None:
    async def body() -> None:
        async with opened(fresh_database) as store:
            row = await new_game(store)
            other = await new_game(store)
            cmd = str(uuid.uuid4())
            received = datetime(2026, 11, 21, 5, 30, 1, 654321, tzinfo=UTC)
            async with store.lock(row.id) as locked:
                assert await locked.prior_command(1, "k1") is None
                result = await locked.append(
                    expected_version=0, events=[NewEvent("moved", {})], seat=1, command_id=cmd
                )
                await locked.record_command(
                    command_id=cmd,
                    seat=1,
                    idempotency_key="k1",
                    type="move",
                    body={"type": "move", "to": 3},
                    outcome="accepted",
                    first_version=result.first_version,
                    last_version=result.last_version,
                    response={"version": 1, "head": result.head.hex()},
                    received_at=received,
                )
                prior = await locked.prior_command(1, "k1")
            assert prior is not None
            assert (prior.id, prior.game_id, prior.seat, prior.idempotency_key) == (
                cmd,
                row.id,
                1,
                "k1",
            )
            assert (prior.outcome, prior.first_version, prior.last_version) == ("accepted", 1, 1)
            assert prior.body == {"type": "move", "to": 3}
            assert prior.response == {"version": 1, "head": result.head.hex()}
            assert prior.received_at == received
            assert await store.get_command(cmd) == prior
            assert await store.find_command(row.id, 1, "k1") == prior

            # The same key again is refused; the lock stays usable (savepoint) and appends.
            async with store.lock(row.id) as locked:
                assert await locked.prior_command(1, "k1") == prior
                with pytest.raises(DuplicateCommand):
                    await locked.record_command(
                        command_id=str(uuid.uuid4()),
                        seat=1,
                        idempotency_key="k1",
                        type="move",
                        body={},
                        outcome="accepted",
                    )
                await locked.append(
                    expected_version=1, events=[NewEvent("moved", {})], seat=1, command_id=None
                )
            assert [e.version for e in await store.read(row.id)] == [1, 2]

            # The unique index itself rejects a raw duplicate.
            conn = await asyncpg.connect(fresh_database)
            try:
                with pytest.raises(asyncpg.UniqueViolationError):
                    await conn.execute(
                        "INSERT INTO commands (id, game_id, seat, idempotency_key, type, body, "
                        "received_at, outcome) VALUES ($1, $2, 1, 'k1', 'move', '{}', now(), "
                        "'accepted')",
                        uuid.uuid4(),
                        uuid.UUID(row.id),
                    )
            finally:
                await conn.close()

            # Keys are per seat: seat 0 may use "k1" in the same game, and each seat finds
            # only its own command under it.
            async with store.lock(row.id) as locked:
                assert await locked.prior_command(0, "k1") is None
                seat0 = str(uuid.uuid4())
                await locked.record_command(
                    command_id=seat0,
                    seat=0,
                    idempotency_key="k1",
                    type="move",
                    body={"type": "move", "to": 4},
                    outcome="rejected",
                    error_code="rule.not_your_turn",
                )
                assert (await locked.prior_command(0, "k1") or prior).id == seat0
            assert await store.find_command(row.id, 1, "k1") == prior
            found = await store.find_command(row.id, 0, "k1")
            assert found is not None and found.id == seat0
            assert await store.find_command(row.id, 2, "k1") is None

            # Keys are per game; commands without a key never collide.
            async with store.lock(other.id) as locked:
                await locked.record_command(
                    command_id=str(uuid.uuid4()),
                    seat=0,
                    idempotency_key="k1",
                    type="move",
                    body={},
                    outcome="accepted",
                )
            for _ in range(2):
                await store.record_rejection(
                    game_id=row.id,
                    command_id=str(uuid.uuid4()),
                    seat=0,
                    idempotency_key=None,
                    type="move",
                    body={"type": "move"},
                    error_code="rule.not_your_turn",
                    error_detail="it is seat 1's turn",
                )

            # A rejected command is recorded (on its own) and appends nothing.
            rej = str(uuid.uuid4())
            await store.record_rejection(
                game_id=row.id,
                command_id=rej,
                seat=0,
                idempotency_key="k2",
                type="move",
                body={"type": "move", "to": 9},
                error_code="rule.route_not_shortest",
                error_detail="a shorter route exists",
                response={"status": 422},
            )
            rejected = await store.find_command(row.id, 0, "k2")
            assert rejected is not None and rejected.id == rej
            assert (rejected.outcome, rejected.error_code) == (
                "rejected",
                "rule.route_not_shortest",
            )
            assert rejected.first_version is None and rejected.response == {"status": 422}
            with pytest.raises(DuplicateCommand):
                await store.record_rejection(
                    game_id=row.id,
                    command_id=str(uuid.uuid4()),
                    seat=0,
                    idempotency_key="k2",
                    type="move",
                    body={},
                    error_code="rule.x",
                )
            with pytest.raises(GameNotFound):
                await store.record_rejection(
                    game_id=str(uuid.uuid4()),
                    command_id=str(uuid.uuid4()),
                    seat=0,
                    idempotency_key=None,
                    type="move",
                    body={},
                    error_code="rule.x",
                )
            assert [e.version for e in await store.read(row.id)] == [1, 2]
            recorded = await store.commands(row.id)
            assert len(recorded) == 5  # with seat 0's "k1"
            assert [c.outcome for c in recorded].count("rejected") == 4

    asyncio.run(body())
