"""A statement that gets no answer (its PostgreSQL backend frozen: SIGSTOP, as a frozen host
or a partition looks from the client) fails after one bound, inside a transaction and a
savepoint too — no ROLLBACK waits for the frozen backend as long again — and the pool goes on
with a new connection."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import asyncpg  # type: ignore[import-untyped]
import pytest

from service.application.faults import BoundedPool
from service.eventstore.atomic import atomic

BOUND = 1.0  # the pool's command_timeout here


def _can_signal(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (PermissionError, ProcessLookupError):
        return False
    return True


@pytest.mark.parametrize("savepoint", [False, True], ids=["transaction", "savepoint"])
def test_a_frozen_backend_fails_a_transaction_after_one_bound(
    fresh_database: str, savepoint: bool
) -> None:
    async def run() -> float:
        raw = await asyncpg.create_pool(
            fresh_database, min_size=1, max_size=2, command_timeout=BOUND
        )
        pool = BoundedPool(raw, acquire_timeout=2)
        frozen: int | None = None
        try:
            started = time.monotonic()
            with pytest.raises(TimeoutError):
                async with pool.acquire() as conn, atomic(conn):
                    pid = await conn.fetchval("SELECT pg_backend_pid()")
                    if not _can_signal(pid):
                        pytest.skip("the PostgreSQL backend is not this user's to signal")
                    if savepoint:
                        async with atomic(conn):
                            os.kill(pid, signal.SIGSTOP)
                            frozen = pid
                            await conn.execute("SELECT 1")
                    else:
                        os.kill(pid, signal.SIGSTOP)
                        frozen = pid
                        await conn.execute("SELECT 1")
            took = time.monotonic() - started
            assert await pool.fetchval("SELECT 2") == 2  # a new connection serves the next use
            return took
        finally:
            if frozen is not None:
                os.kill(frozen, signal.SIGCONT)
            await raw.close()

    took = asyncio.run(run())
    assert took < BOUND + 0.7, f"{took:.2f} s: the ROLLBACK waited for the frozen backend"
