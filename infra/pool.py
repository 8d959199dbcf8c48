"""The PostgreSQL pool every part of the service uses: an asyncpg pool whose every use waits a
bounded time for a connection (:class:`BoundedPool`), and the classification of asyncpg's
errors that both the pool and the service's fault answers (``service.application.faults``)
stand on.

A connection that cannot be had within the bound raises :class:`NotSent`: nothing reached
PostgreSQL, so the caller may say "nothing was recorded". The bound is a coarse deadline
(:mod:`infra.deadlines`), not ``acquire(timeout=)`` (asyncpg wraps that in
``asyncio.wait_for``, a new task per acquire: ~2 % of a worker's CPU under load) nor
``asyncio.timeout`` (a loop timer armed and disarmed per acquire).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import structlog
from prometheus_client import Counter

from infra.deadlines import Deadlines

log = structlog.get_logger("manifest")

SERVER_LOST = Counter(
    "manifest_pg_server_lost_total",
    "PostgreSQL statements that failed because the server was lost, frozen or demoted "
    "(each expires every pooled connection: the next ones go to the current primary)",
)


class NotSent(Exception):
    """PostgreSQL was not reached: no connection could be had (pool exhausted, refused)."""


#: PostgreSQL errors after which the statement is known to have rolled back.
ROLLED_BACK = (
    asyncpg.exceptions.LockNotAvailableError,
    asyncpg.exceptions.QueryCanceledError,
    asyncpg.exceptions.TooManyConnectionsError,
    asyncpg.exceptions.CannotConnectNowError,
    # a demoted server (a failover) refused the write; the transaction is rolled back
    asyncpg.exceptions.ReadOnlySQLTransactionError,
)
#: Errors that say the server itself is gone, frozen or no longer the primary (SQLSTATE 25006:
#: a read-only transaction, what a demoted server answers a write).
SERVER_GONE = (
    asyncpg.exceptions.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.exceptions.InterfaceError,
    asyncpg.exceptions.ReadOnlySQLTransactionError,
    ConnectionError,
    OSError,
    asyncio.TimeoutError,
)
#: PostgreSQL trouble of any kind (connection, server going away, timeouts).
PG_TROUBLE = (
    asyncpg.exceptions.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.exceptions.InsufficientResourcesError,
    asyncpg.exceptions.InterfaceError,
    asyncpg.exceptions.InternalClientError,
    *ROLLED_BACK,
    ConnectionError,
    OSError,
    asyncio.TimeoutError,
)


class BoundedPool:
    """An asyncpg pool whose every use waits at most ``acquire_timeout`` for a connection; a
    connection that cannot be had raises :class:`NotSent` (nothing reached PostgreSQL)."""

    def __init__(self, pool: Any, acquire_timeout: float) -> None:
        self._pool = pool
        self.acquire_timeout = acquire_timeout
        self._deadlines = Deadlines()
        #: Statements after which every pooled connection was expired (server lost or demoted).
        self.lost = 0
        self._next_lost_log = 0.0

    async def _take(self) -> Any:
        """A connection, within ``acquire_timeout``, or :class:`NotSent`."""
        try:
            with self._deadlines.within(self.acquire_timeout):
                return await self._pool.acquire()
        except TimeoutError:
            raise NotSent(f"no connection within {self.acquire_timeout:g} s") from None
        except PG_TROUBLE as error:
            raise NotSent(f"{type(error).__name__}: {error}") from None

    @asynccontextmanager
    async def acquire(self) -> AsyncIterator[Any]:
        conn = await self._take()
        try:
            yield conn
        except BaseException as error:
            await self._failed(conn, error)
            raise
        finally:
            await self._pool.release(conn, timeout=self.acquire_timeout)

    async def _one(self, statement: Callable[[Any], Awaitable[Any]]) -> Any:
        """Run one statement on a connection of its own (without a context-manager generator
        around it: ~1 % of a worker's CPU under load)."""
        conn = await self._take()
        try:
            return await statement(conn)
        except BaseException as error:
            await self._failed(conn, error)
            raise
        finally:
            await self._pool.release(conn, timeout=self.acquire_timeout)

    async def _failed(self, conn: Any, error: BaseException) -> None:
        """After a statement failed: a connection that got no answer is dropped; when the
        server is lost or no longer takes writes (killed, frozen, demoted by a failover), every
        connection of the pool is expired, so that the next uses connect again, to the server
        that is primary now (``service.eventstore.primary``), instead of each failing in turn
        on the old one. The release of an expired connection is bounded (a frozen server does
        not answer its goodbye)."""
        if isinstance(error, TimeoutError):
            _drop(conn)
        if isinstance(error, SERVER_GONE):
            SERVER_LOST.inc()
            self.lost += 1
            now = time.monotonic()
            if now >= self._next_lost_log:  # a failover fails many statements at once
                self._next_lost_log = now + 1.0
                log.warning("postgres connections expired", error=type(error).__name__)
            await self._pool.expire_connections()

    async def fetch(self, query: str, *args: Any, timeout: float | None = None) -> Any:
        return await self._one(lambda conn: conn.fetch(query, *args, timeout=timeout))

    async def fetchrow(self, query: str, *args: Any, timeout: float | None = None) -> Any:
        return await self._one(lambda conn: conn.fetchrow(query, *args, timeout=timeout))

    async def fetchval(self, query: str, *args: Any, timeout: float | None = None) -> Any:
        return await self._one(lambda conn: conn.fetchval(query, *args, timeout=timeout))

    async def execute(self, query: str, *args: Any, timeout: float | None = None) -> Any:
        return await self._one(lambda conn: conn.execute(query, *args, timeout=timeout))

    async def close(self) -> None:
        await self._pool.close()


def _drop(conn: Any) -> None:
    """Close a connection whose statement got no answer in time, instead of releasing it as
    it is: asyncpg would first ask PostgreSQL to cancel the statement and wait for that (on a
    PostgreSQL that does not answer at all, a frozen host, another statement timeout), so the
    request's 503 would come after twice the bound. The pool opens a new connection when one
    is needed; the statement may still run when PostgreSQL wakes (the 503 says so)."""
    with contextlib.suppress(asyncpg.InterfaceError):  # asyncpg closed and released it first
        conn.terminate()
