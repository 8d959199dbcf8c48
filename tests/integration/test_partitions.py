"""migrations/0006: the events table partitioned by HASH (game_id), migrated in place — games
stored before the migration keep every event byte for byte, and keep playing after it; the
constraints, the append statement and immutability mean what they meant."""

from __future__ import annotations

import asyncio
import re
import shutil
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import pytest

from ledger.chain import chain_events, utc_micro, verify_chain
from service.eventstore.migrate import DEFAULT_DIR, migrate
from service.eventstore.store import AcceptedCommand, EventStore, NewEvent

from .test_store import append, new_game

pytestmark = pytest.mark.integration

PARTITIONS = 16
PARTITIONING = "0006_events_partitioned.sql"
KIND = "SELECT relkind::text FROM pg_class WHERE relname = 'events'"
ROWS = "SELECT game_id, version, type, data::text, seat, command_id, recorded_at, prev_hash, hash"


def _before_partitioning(tmp_path: Path) -> Path:
    """The migrations directory as it was before the partitioning."""
    old = tmp_path / "migrations"
    old.mkdir()
    for path in sorted(DEFAULT_DIR.glob("*.sql")):
        if path.name < PARTITIONING:
            shutil.copy(path, old / path.name)
    return old


async def _rows(conn: Any) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in await conn.fetch(f"{ROWS} FROM events ORDER BY game_id, version")]


def test_existing_games_survive_the_migration_and_keep_playing(
    fresh_database: str, tmp_path: Path
) -> None:
    async def body() -> None:
        applied = await migrate(fresh_database, _before_partitioning(tmp_path))
        assert PARTITIONING not in applied
        pool = await asyncpg.create_pool(fresh_database, min_size=1, max_size=4)
        conn = await asyncpg.connect(fresh_database)
        try:
            store = EventStore(pool)
            games = [await new_game(store) for _ in range(12)]
            for i, game in enumerate(games):
                await append(store, game.id, *({"n": n, "f": 0.1 * n} for n in range(i + 1)))
            before = await _rows(conn)
            assert await conn.fetchval(KIND) == "r"

            assert (await migrate(fresh_database))[0] == PARTITIONING

            assert await conn.fetchval(KIND) == "p"
            strategy = await conn.fetchval(
                "SELECT partstrat::text FROM pg_partitioned_table "
                "WHERE partrelid = 'events'::regclass"
            )
            assert strategy == "h"
            parts = await conn.fetch(
                "SELECT c.relname, (SELECT count(*) FROM events WHERE tableoid = c.oid) AS n "
                "FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
                "WHERE i.inhparent = 'events'::regclass ORDER BY c.relname"
            )
            assert [p["relname"] for p in parts] == [f"events_p{r:02d}" for r in range(PARTITIONS)]
            assert sum(p["n"] for p in parts) == len(before) == sum(range(1, 13))
            assert sum(1 for p in parts if p["n"]) > 1  # the games are spread, not in one
            assert await conn.fetchval("SELECT to_regclass('events_unpartitioned')") is None

            # Every event is the same bytes as before, and every chain still verifies.
            assert await _rows(conn) == before
            for game in games:
                row = await store.get_game(game.id)
                assert row is not None
                assert verify_chain(await store.read(game.id), head=row.head) is None

            # The old games keep playing: the locked append and the optimistic one.
            await append(store, games[0].id, {"after": True})
            stored = await store.read(games[0].id)
            assert [e.version for e in stored] == [1, 2]
            row = await store.get_game(games[0].id)
            assert row is not None
            assert verify_chain(stored, head=row.head) is None
            row = await store.get_game(games[1].id)
            assert row is not None
            for version, head, expect in ((1, row.head, False), (2, row.head, True)):
                at, command_id = utc_micro(datetime.now(UTC)), str(uuid.uuid4())
                events = [NewEvent("moved", {"to": "c3", "big": 10**20, "tiny": [1, -7]})]
                chained = chain_events(row.id, version, head, events, 0, command_id, at)
                done = await store.append_command(
                    AcceptedCommand(
                        game_id=row.id,
                        version=version,
                        head=head,
                        stored=chained,
                        seat=0,
                        command_id=command_id,
                        status=None,
                        result=None,
                        idempotency_key=None,
                        command_type="move",
                        body={"type": "move"},
                        received_at=at,
                        response={"version": chained[-1].version},
                    )
                )
                assert done is expect  # a stale version writes nothing
            row = await store.get_game(games[1].id)
            assert row is not None and row.version == 3
            assert verify_chain(await store.read(row.id), head=row.head) is None

            # A game's reads touch one partition only.
            plan = "\n".join(
                r[0]
                for r in await conn.fetch(
                    f"EXPLAIN SELECT * FROM events WHERE game_id = '{games[3].id}' AND version > 0"
                )
            )
            assert len(set(re.findall(r" on (events_p\d\d)", plan))) == 1, plan
        finally:
            await conn.close()
            await pool.close()

    asyncio.run(body())


def test_constraints_and_immutability_hold_on_every_partition(fresh_database: str) -> None:
    async def body() -> None:
        await migrate(fresh_database)
        pool = await asyncpg.create_pool(fresh_database, min_size=1, max_size=2)
        conn = await asyncpg.connect(fresh_database)
        try:
            store = EventStore(pool)
            game = await new_game(store)
            await append(store, game.id, {"a": 1}, {"a": 2})
            before = await store.read(game.id)
            part = await conn.fetchval(
                "SELECT tableoid::regclass::text FROM events WHERE game_id = $1 LIMIT 1",
                uuid.UUID(game.id),
            )
            assert part.startswith("events_p")
            for sql in (
                "UPDATE events SET data = '{\"a\": 9}'",
                f"UPDATE {part} SET hash = prev_hash WHERE version = 2",
                f"DELETE FROM {part} WHERE version = 2",
                "DELETE FROM events",
                "TRUNCATE events",
                f"TRUNCATE {part}",
                "TRUNCATE events_p00",
                "TRUNCATE events, games, commands, secrets, seat_tokens, deadlines",
            ):
                with pytest.raises(asyncpg.PostgresError, match="events are immutable"):
                    await conn.execute(sql)
            insert = (
                "INSERT INTO events (game_id, version, type, data, recorded_at, prev_hash, hash) "
                "VALUES ($1, $2, 't', '{}', now(), $3, $4)"
            )
            h = b"\x01" * 32
            with pytest.raises(asyncpg.UniqueViolationError):
                await conn.execute(insert, game.id, 2, h, h)
            with pytest.raises(asyncpg.CheckViolationError):
                await conn.execute(insert, game.id, 0, h, h)
            with pytest.raises(asyncpg.CheckViolationError):
                await conn.execute(insert, game.id, 9, b"short", h)
            with pytest.raises(asyncpg.ForeignKeyViolationError):
                await conn.execute(insert, "00000000-0000-4000-8000-000000000000", 1, h, h)
            assert await store.read(game.id) == before
        finally:
            await conn.close()
            await pool.close()

    asyncio.run(body())
