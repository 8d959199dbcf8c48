"""History reads from a real streaming replica (``PG_READ_DSN``), started by the harness with
``pg_basebackup``: served by the replica when it has caught up, by the primary when it lags
(WAL replay paused) or cannot be reached — never staler than the primary's games row."""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import Iterator
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import httpx
import pytest

from service.eventstore.migrate import migrate
from service.eventstore.store import EventStore
from tests.support.servers import (
    ServerUnavailable,
    free_port,
    fresh_database,
    local_postgres,
    streaming_replica,
    with_database,
)

from .apihelp import auth, bot_step, create_started, tokens_of
from .serverproc import ServerProcess
from .test_store import append, new_game

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def primary_and_replica() -> Iterator[tuple[str, str]]:
    """(primary DSN, replica DSN) of one database: this module's own PostgreSQL (the shared one
    is never paused or replicated) and a hot standby of it."""
    try:
        with (
            local_postgres() as primary,
            streaming_replica(primary) as replica,
            fresh_database(primary) as db,
        ):
            asyncio.run(migrate(db))
            yield db, with_database(replica, db.rsplit("/", 1)[1])
    except ServerUnavailable as error:
        pytest.fail(f"a primary and a streaming replica are needed: {error}")


async def _caught_up(primary: str, replica: str) -> None:
    """Until the replica has replayed everything the primary had written when called."""
    p, r = await asyncpg.connect(primary), None
    try:
        # The insert position, not pg_current_wal_lsn() (the *write* position): with
        # synchronous_commit=off a commit record may be inserted but not yet written.
        target = await p.fetchval("SELECT pg_current_wal_insert_lsn()")
        for _ in range(600):
            try:
                r = r or await asyncpg.connect(replica)
            except asyncpg.InvalidCatalogNameError:  # the database is not replayed yet
                await asyncio.sleep(0.05)
                continue
            if await r.fetchval("SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn", target):
                return
            await asyncio.sleep(0.05)
        raise AssertionError("the replica did not catch up in 30 s")
    finally:
        await p.close()
        if r is not None:
            await r.close()


async def _replay(replica: str, paused: bool) -> None:
    conn = await asyncpg.connect(replica)
    try:
        await conn.execute(f"SELECT pg_wal_replay_{'pause' if paused else 'resume'}()")
        want = "paused" if paused else "not paused"
        for _ in range(600):
            if await conn.fetchval("SELECT pg_get_wal_replay_pause_state()") == want:
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"replay not {want}")
    finally:
        await conn.close()


async def _replica_has(replica: str, game_id: str) -> int:
    conn = await asyncpg.connect(replica)
    try:
        return int(await conn.fetchval("SELECT count(*) FROM events WHERE game_id = $1", game_id))
    finally:
        await conn.close()


def test_store_reads_the_replica_unless_it_lags(primary_and_replica: tuple[str, str]) -> None:
    primary, replica = primary_and_replica

    async def body() -> None:
        pool = await asyncpg.create_pool(primary, min_size=1, max_size=2)
        reads = await asyncpg.create_pool(replica, min_size=0, max_size=2)
        store = EventStore(pool, read_pool=reads)
        try:
            game = await new_game(store)
            await append(store, game.id, {"n": 1}, {"n": 2}, {"n": 3})
            await _caught_up(primary, replica)
            assert len(await store.read_history(game.id, through=3)) == 3
            assert store.history_reads == {"replica": 1}

            await _replay(replica, paused=True)
            try:
                await append(store, game.id, {"n": 4}, {"n": 5})
                assert await _replica_has(replica, game.id) == 3  # it really lags
                row = await store.get_game(game.id)
                assert row is not None and row.version == 5
                got = await store.read_history(game.id, through=row.version)
                assert got == await store.read(game.id) and len(got) == 5
                assert store.history_reads == {"replica": 1, "fallback_behind": 1}
                # What the replica does have is served by it, paused or not.
                assert len(await store.read_history(game.id, after=1, limit=2, through=5)) == 2
                page = await store.read_history(game.id, after=2, limit=10, through=5)
                assert [e.version for e in page] == [3, 4, 5]
                assert store.history_reads == {"replica": 2, "fallback_behind": 2}
            finally:
                await _replay(replica, paused=False)
            await _caught_up(primary, replica)
            assert len(await store.read_history(game.id, through=5)) == 5
            assert store.history_reads["replica"] == 3, store.history_reads
        finally:
            await reads.close()
            await pool.close()

    asyncio.run(body())


def test_an_unreachable_replica_falls_back_to_the_primary(
    primary_and_replica: tuple[str, str],
) -> None:
    primary, _ = primary_and_replica

    async def body() -> None:
        pool = await asyncpg.create_pool(primary, min_size=1, max_size=2)
        nowhere = f"postgresql://postgres@127.0.0.1:{free_port()}/nothing"
        reads = await asyncpg.create_pool(nowhere, min_size=0, max_size=1)
        store = EventStore(pool, read_pool=reads)
        try:
            game = await new_game(store)
            await append(store, game.id, {"n": 1})
            assert len(await store.read_history(game.id, through=1)) == 1
            assert store.history_reads == {"fallback_error": 1}
            # For a few seconds the replica is not tried again: straight to the primary.
            assert store.replica_retry_at > time.monotonic()
            store.read_pool = _Untouchable()
            assert len(await store.read_history(game.id, through=1)) == 1
            assert store.history_reads == {"fallback_error": 2}
            store.read_pool, store.replica_retry_at = reads, 0.0  # the pause is over
            assert len(await store.read_history(game.id, through=1)) == 1
            assert store.history_reads == {"fallback_error": 3}  # tried, and failed again
        finally:
            await reads.close()
            await pool.close()

    asyncio.run(body())


class _Untouchable:
    """A read pool that fails the test if it is used at all."""

    def acquire(self) -> Any:
        raise AssertionError("the replica was tried while it was to be skipped")


def _metric(text: str, outcome: str) -> float:
    found = re.search(rf'manifest_history_reads_total{{outcome="{outcome}"}} (\S+)', text)
    return float(found.group(1)) if found else 0.0


def test_http_history_is_complete_while_the_replica_lags(
    primary_and_replica: tuple[str, str], redis_url: str
) -> None:
    primary, replica = primary_and_replica
    server = ServerProcess(primary, redis_url)
    server.env["PG_READ_DSN"] = replica
    server.start()
    rng = random.Random(16)

    async def body() -> None:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            created = await create_started(client)
            game_id, tokens = created["id"], tokens_of(created)
            for _ in range(6):
                r = await bot_step(client, game_id, tokens, rng)
                assert r is not None and r.status_code == 200, r and r.text
            await _caught_up(primary, replica)
            await _replay(replica, paused=True)
            try:
                for _ in range(4):
                    r = await bot_step(client, game_id, tokens, rng)
                    assert r is not None and r.status_code == 200, r and r.text
                version = r.json()["version"]
                assert await _replica_has(replica, game_id) < version
                await _check_history(client, game_id, tokens[0], version)
                metrics = (await client.get("/metrics")).text
                # the events page and the replay seek; the audit reads the primary in one
                # snapshot, never the replica (docs/scaling.md, issue 25)
                assert _metric(metrics, "fallback_behind") >= 2
            finally:
                await _replay(replica, paused=False)
            await _caught_up(primary, replica)
            before = _metric((await client.get("/metrics")).text, "replica")
            await _check_history(client, game_id, tokens[0], version)
            # events and replay read the caught-up replica; the audit of an unchanged game is
            # answered from the audit cache (service/application/auditcache.py) and reads nothing
            assert _metric((await client.get("/metrics")).text, "replica") >= before + 2

    try:
        asyncio.run(body())
    finally:
        server.close()


async def _check_history(client: httpx.AsyncClient, game_id: str, token: str, version: int) -> Any:
    """Every history answer reaches ``version``, the primary's."""
    r = await client.get(f"/v1/games/{game_id}/events?after=0&limit=1000", headers=auth(token))
    assert r.status_code == 200, r.text
    assert [e["version"] for e in r.json()["events"]] == list(range(1, version + 1))
    r = await client.get(f"/v1/games/{game_id}/replay/{version}", headers=auth(token))
    assert r.status_code == 200 and r.json()["version"] == version, r.text
    r = await client.get(f"/v1/games/{game_id}/audit")
    assert r.status_code == 200 and r.json()["ok"], r.text
