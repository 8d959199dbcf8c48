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

The pool's acquire timeout and the classification of asyncpg's errors are
:mod:`infra.pool`'s (:class:`~infra.pool.BoundedPool`, :class:`~infra.pool.NotSent`). Also here:
:class:`Admission` (at most ``MANIFEST_GAME_WRITERS`` writes to one game in flight per process;
the next is refused at once, so clients hammering one stuck game cannot take the pool).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import asyncpg  # type: ignore[import-untyped]
import structlog
from prometheus_client import Counter
from redis.exceptions import RedisError

from infra.pool import PG_TROUBLE, ROLLED_BACK, NotSent
from service.application.errors import Unavailable
from service.application.projection import ProjectionDown
from service.settings import Settings

log = structlog.get_logger("manifest")

UNAVAILABLE = Counter(
    "manifest_unavailable_total",
    "Requests answered 503 service.unavailable, by failing dependency",
    ["dependency"],
)

MAY_BE_RECORDED = "it may have been recorded; resend with the same Idempotency-Key"
MAY_HAVE_HAPPENED = "it may have taken effect: check before repeating it"
NOT_RECORDED = "nothing was recorded; try again"


class Busy(Exception):
    """Too many writes to one game are already in flight in this process."""


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
        if isinstance(error, ProjectionDown | RedisError):
            return self.unavailable("redis", f"Redis is unavailable ({error}); try again")
        if isinstance(error, ROLLED_BACK):
            if isinstance(error, asyncpg.exceptions.LockNotAvailableError):
                what = "the game is locked by another transaction"
            elif isinstance(error, asyncpg.exceptions.ReadOnlySQLTransactionError):
                what = "the PostgreSQL server no longer takes writes (a failover is under way)"
            else:
                what = "PostgreSQL did not answer in time"
            return self.unavailable("postgres", f"{what}; {NOT_RECORDED}")
        if isinstance(error, PG_TROUBLE):
            reason = f"PostgreSQL failed ({type(error).__name__})"
            tail = {"command": MAY_BE_RECORDED, "write": MAY_HAVE_HAPPENED}.get(kind, "try again")
            return self.unavailable("postgres", f"{reason}; {tail}")
        return None


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
