"""A transaction (inside one: a savepoint) that is not rolled back from the client when a
statement in it got no answer in time.

asyncpg's ``conn.transaction()`` rolls back on any exception. After a statement timed out,
that ROLLBACK first waits for the statement's cancellation, and on a PostgreSQL that does not
answer at all (a frozen host, a partition) it waits as long again: a lobby request would
answer after twice the bound, and asyncpg would have closed the connection under the pool's
feet. On ``TimeoutError`` :func:`atomic` leaves the transaction as it is: the pool connection
is closed (``infra.pool.BoundedPool``), and PostgreSQL rolls back what a
vanished connection left open. Any other exception rolls back, as before."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any


@asynccontextmanager
async def atomic(conn: Any, **options: Any) -> AsyncIterator[None]:
    """``options``: asyncpg's transaction options (``isolation``, ``readonly``)."""
    transaction = conn.transaction(**options)
    await transaction.start()
    try:
        yield
    except TimeoutError:
        raise  # no ROLLBACK on a connection that stopped answering: it is dropped
    except BaseException:
        await transaction.rollback()
        raise
    await transaction.commit()
