"""Migrations against a real PostgreSQL: once, idempotent, concurrency-safe, checksummed."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import asyncpg  # type: ignore[import-untyped]
import pytest

from service.eventstore.migrate import DEFAULT_DIR, LOCK_KEY, MigrationError, load, migrate

pytestmark = pytest.mark.integration

TABLES = {"schema_migrations", "games", "events", "commands", "secrets", "seat_tokens"}


async def _tables(dsn: str) -> set[str]:
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        )
        return {r["table_name"] for r in rows}
    finally:
        await conn.close()


async def _recorded(dsn: str) -> list[tuple[str, str]]:
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch("SELECT name, checksum FROM schema_migrations ORDER BY name")
        return [(r["name"], r["checksum"]) for r in rows]
    finally:
        await conn.close()


def test_migrations_directory_is_found_and_ordered() -> None:
    migrations = load()
    names = [m.name for m in migrations]
    assert DEFAULT_DIR.name == "migrations"
    assert names[0] == "0001_init.sql"
    assert names == sorted(names)
    assert all(len(m.checksum) == 64 for m in migrations)


def test_applies_once_and_rerun_is_noop(fresh_database: str) -> None:
    async def body() -> None:
        first = await migrate(fresh_database)
        assert first == [m.name for m in load()]
        assert first[0] == "0001_init.sql"
        assert TABLES | {"server_keys"} <= await _tables(fresh_database)
        recorded = await _recorded(fresh_database)
        assert recorded == [(m.name, m.checksum) for m in load()]

        assert await migrate(fresh_database) == []
        assert await _recorded(fresh_database) == recorded

        # A connection and a pool work as well as a DSN.
        conn = await asyncpg.connect(fresh_database)
        try:
            assert await migrate(conn) == []
            # The advisory lock is released after the run (by this session: other tests may be
            # migrating other databases of the same server at this moment, under the same key).
            held = await conn.fetchval(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = $1"
                " AND pid = pg_backend_pid()",
                LOCK_KEY & 0xFFFFFFFF,
            )
            assert held == 0
        finally:
            await conn.close()
        pool = await asyncpg.create_pool(fresh_database, min_size=1, max_size=1)
        try:
            assert await migrate(pool) == []
        finally:
            await pool.close()

    asyncio.run(body())


def test_concurrent_migrate_applies_exactly_once(fresh_database: str) -> None:
    async def body() -> None:
        conns = [await asyncpg.connect(fresh_database) for _ in range(4)]
        try:
            results = await asyncio.gather(*(migrate(c) for c in conns))
        finally:
            for c in conns:
                await c.close()
        applied = [r for r in results if r]
        assert len(applied) == 1, results
        assert applied[0] == [m.name for m in load()]
        assert sum(len(r) for r in results) == len(load())
        assert [name for name, _ in await _recorded(fresh_database)] == applied[0]

    asyncio.run(body())


def test_changed_checksum_raises_and_new_files_apply(fresh_database: str, tmp_path: Path) -> None:
    directory = tmp_path / "migrations"
    shutil.copytree(DEFAULT_DIR, directory)

    async def body() -> None:
        assert await migrate(fresh_database, directory) == [m.name for m in load()]

        (directory / "9000_extra.sql").write_text("CREATE TABLE extra (x int);\n")
        assert await migrate(fresh_database, directory) == ["9000_extra.sql"]
        assert "extra" in await _tables(fresh_database)

        init = directory / "0001_init.sql"
        init.write_text(init.read_text() + "\n-- edited after being applied\n")
        (directory / "9001_more.sql").write_text("CREATE TABLE more (x int);\n")
        with pytest.raises(MigrationError, match=r"0001_init\.sql"):
            await migrate(fresh_database, directory)
        # Nothing was applied or re-applied.
        assert "more" not in await _tables(fresh_database)
        assert [n for n, _ in await _recorded(fresh_database)] == [
            *[m.name for m in load()],
            "9000_extra.sql",
        ]

    asyncio.run(body())


def test_failing_migration_rolls_back(fresh_database: str, tmp_path: Path) -> None:
    directory = tmp_path / "migrations"
    shutil.copytree(DEFAULT_DIR, directory)
    (directory / "9000_broken.sql").write_text(
        "CREATE TABLE half (x int);\nSELECT * FROM no_such_table;\n"
    )

    async def body() -> None:
        with pytest.raises(MigrationError, match=r"9000_broken\.sql"):
            await migrate(fresh_database, directory)
        tables = await _tables(fresh_database)
        assert "half" not in tables
        assert "games" in tables  # the earlier files were applied and kept
        assert "9000_broken.sql" not in [n for n, _ in await _recorded(fresh_database)]

    asyncio.run(body())


def test_missing_directory_raises(tmp_path: Path) -> None:
    with pytest.raises(MigrationError, match="not found"):
        load(tmp_path / "nope")
