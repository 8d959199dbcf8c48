"""Smoke test: the integration fixtures hand out a real PostgreSQL 15 and a real Redis."""

from __future__ import annotations

import asyncio
import uuid

import asyncpg  # type: ignore[import-untyped]
import pytest
import redis.asyncio as aioredis

pytestmark = pytest.mark.integration


def test_postgres_is_15(pg_dsn: str) -> None:
    async def version() -> str:
        conn = await asyncpg.connect(pg_dsn, timeout=10)
        try:
            return str(await conn.fetchval("SELECT version()"))
        finally:
            await conn.close()

    assert "PostgreSQL 15" in asyncio.run(version())


def test_fresh_database_is_empty_and_writable(fresh_database: str) -> None:
    async def roundtrip() -> tuple[str, int, int]:
        conn = await asyncpg.connect(fresh_database, timeout=10)
        try:
            name = str(await conn.fetchval("SELECT current_database()"))
            tables = int(
                await conn.fetchval(
                    "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
                )
            )
            await conn.execute("CREATE TABLE t (x int)")
            await conn.execute("INSERT INTO t VALUES (41), (1)")
            total = int(await conn.fetchval("SELECT sum(x) FROM t"))
            return name, tables, total
        finally:
            await conn.close()

    name, tables, total = asyncio.run(roundtrip())
    assert name.startswith("manifest_t_")
    assert tables == 0
    assert total == 42


def test_redis_set_get(redis_url: str) -> None:
    async def roundtrip() -> tuple[bytes | None, bytes | None]:
        client = aioredis.from_url(redis_url)  # type: ignore[no-untyped-call]
        key = f"manifest:test:{uuid.uuid4().hex}"
        try:
            await client.set(key, "héllo", ex=60)
            got: bytes | None = await client.get(key)
            await client.delete(key)
            gone: bytes | None = await client.get(key)
            return got, gone
        finally:
            await client.aclose()

    got, gone = asyncio.run(roundtrip())
    assert got == "héllo".encode()
    assert gone is None
