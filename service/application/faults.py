"""Dependency faults as honest answers (``docs/api.md``, "Faults").

A PostgreSQL or Redis failure — refused, stalled past its timeout, full, restarting — is never a
500 or a hang: it is :class:`~service.application.errors.Unavailable` ``service.unavailable``
with a retry hint (HTTP: 503 with ``Retry-After``). Whether the request may
have changed anything is said plainly:

- failures *before anything was sent* (no pool connection within
  ``MANIFEST_PG_ACQUIRE_TIMEOUT``, PostgreSQL refusing connections, too many writers waiting
  on one game) and statements PostgreSQL is known to have rolled back (``lock_timeout``,
  ``statement_timeout``): "nothing was recorded";
- anything else during a command (a connection lost mid-statement, a reply that did not come in
  time): "it may have been recorded; resend with the same Idempotency-Key" — the retry is
  answered from the ``commands`` table with the first outcome.

Also here: :class:`BoundedPool` (an acquire timeout on every use of the asyncpg pool) and
:class:`Admission` (at most ``MANIFEST_GAME_WRITERS`` writes to one game in flight per process;
the next is refused at once, so clients hammering one stuck game cannot take the pool).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import structlog
from prometheus_client import Counter
from redis.exceptions import RedisError

from projections.deadlines import Deadlines
from projections.store import StoreUnavailable
from service.application.errors import Unavailable
from service.settings import Settings

log = structlog.get_logger("manifest")

UNAVAILABLE = Counter(
    "manifest_unavailable_total",
    "Requests answered 503 service.unavailable, by failing dependency",
    ["dependency"],
)

SERVER_LOST = Counter(
    "manifest_pg_server_lost_total",
    "PostgreSQL statements that failed because the server was lost, frozen or demoted "
    "(each expires every pooled connection: the next ones go to the current primary)",
)

MAY_BE_RECORDED = "it may have been recorded; resend with the same Idempotency-Key"
MAY_HAVE_HAPPENED = "it may have taken effect: check before repeating it"
NOT_RECORDED = "nothing was recorded; try again"


class NotSent(Exception):
    """PostgreSQL was not reached: no connection could be had (pool exhausted, refused)."""


class Busy(Exception):
    """Too many writes to one game are already in flight in this process."""


#: PostgreSQL errors after which the statement is known to have rolled back.
_ROLLED_BACK = (
    asyncpg.exceptions.LockNotAvailableError,
    asyncpg.exceptions.QueryCanceledError,
    asyncpg.exceptions.TooManyConnectionsError,
    asyncpg.exceptions.CannotConnectNowError,
    # a demoted server (a failover) refused the write; the transaction is rolled back
    asyncpg.exceptions.ReadOnlySQLTransactionError,
)
#: Errors that say the server itself is gone, frozen or no longer the primary (SQLSTATE 25006:
#: a read-only transaction, what a demoted server answers a write).
_SERVER_LOST = (
    asyncpg.exceptions.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.exceptions.InterfaceError,
    asyncpg.exceptions.ReadOnlySQLTransactionError,
    ConnectionError,
    OSError,
    asyncio.TimeoutError,
)
#: PostgreSQL trouble of any kind (connection, server going away, timeouts).
_PG = (
    asyncpg.exceptions.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.exceptions.InsufficientResourcesError,
    asyncpg.exceptions.InterfaceError,
    asyncpg.exceptions.InternalClientError,
    *_ROLLED_BACK,
    ConnectionError,
    OSError,
    asyncio.TimeoutError,
)


def pg_session_settings(settings: Settings) -> dict[str, str]:
    """Every service connection's ``lock_timeout`` and ``statement_timeout``: a statement
    waiting on a locked row, or running long, is cancelled (and rolled back) by PostgreSQL."""
    return {
        "lock_timeout": f"{round(settings.pg_lock_timeout * 1000)}ms",
        "statement_timeout": f"{round(settings.pg_statement_timeout * 1000)}ms",
    }


class Faults:
    """Turns dependency failures into :class:`Unavailable` errors with a retry hint."""

    def __init__(self, retry_after: int = 1) -> None:
        self.retry_after = retry_after

    def unavailable(self, dependency: str, detail: str) -> Unavailable:
        UNAVAILABLE.labels(dependency=dependency).inc()
        return Unavailable("service.unavailable", detail, self.retry_after, dependency=dependency)

    def contention(self, tries: int) -> Unavailable:
        """The refusal of a command whose game moved on under each of its ``tries`` decisions."""
        return Unavailable(
            "version.contention",
            f"the game kept changing while this command was decided ({tries} tries); "
            "nothing was recorded: send it again",
            self.retry_after,
        )

    def unavailable_for(self, error: BaseException, kind: str) -> Unavailable | None:
        """The refusal for ``error`` if it is a dependency failure, else None. ``kind``:
        ``command`` (may have been recorded: resend with its key), ``write`` (another write,
        with no key: may have taken effect) or ``read``."""
        if isinstance(error, Busy):
            return self.unavailable("admission", f"{error}; {NOT_RECORDED}")
        if isinstance(error, NotSent):
            detail = f"PostgreSQL is unavailable ({error}); {NOT_RECORDED}"
            return self.unavailable("postgres", detail)
        if isinstance(error, StoreUnavailable | RedisError):
            return self.unavailable("redis", f"Redis is unavailable ({error}); try again")
        if isinstance(error, _ROLLED_BACK):
            if isinstance(error, asyncpg.exceptions.LockNotAvailableError):
                what = "the game is locked by another transaction"
            elif isinstance(error, asyncpg.exceptions.ReadOnlySQLTransactionError):
                what = "the PostgreSQL server no longer takes writes (a failover is under way)"
            else:
                what = "PostgreSQL did not answer in time"
            return self.unavailable("postgres", f"{what}; {NOT_RECORDED}")
        if isinstance(error, _PG):
            reason = f"PostgreSQL failed ({type(error).__name__})"
            tail = {"command": MAY_BE_RECORDED, "write": MAY_HAVE_HAPPENED}.get(kind, "try again")
            return self.unavailable("postgres", f"{reason}; {tail}")
        return None


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
            # not acquire(timeout=): asyncpg wraps that in asyncio.wait_for, a new task per
            # acquire (~2% of a worker's CPU under load); nor asyncio.timeout: a loop timer
            # armed and disarmed per acquire (projections.deadlines)
            with self._deadlines.within(self.acquire_timeout):
                return await self._pool.acquire()
        except TimeoutError:
            raise NotSent(f"no connection within {self.acquire_timeout:g} s") from None
        except _PG as error:
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
        if isinstance(error, _SERVER_LOST):
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


class Admission:
    """At most ``limit`` writes to one game in flight in this process; the next is refused at
    once (:class:`Busy`) instead of queueing for the game's row lock with a pool connection."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._inflight: dict[str, int] = {}

    @contextmanager
    def enter(self, game_id: str) -> Iterator[None]:
        n = self._inflight.get(game_id, 0)
        if n >= self.limit:
            raise Busy(f"{n} writes to this game are already waiting")
        self._inflight[game_id] = n + 1
        try:
            yield
        finally:
            left = self._inflight[game_id] - 1
            if left:
                self._inflight[game_id] = left
            else:
                del self._inflight[game_id]
