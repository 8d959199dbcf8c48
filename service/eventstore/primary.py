"""Connections that follow the PostgreSQL primary: a ``PG_DSN`` naming several servers
(``postgresql://user@h1:5432,h2:5432,h3:5432/manifest?target_session_attrs=read-write``, the
members of a Patroni cluster) gets every new pool connection from the one that takes writes.

asyncpg understands such a DSN itself, but it tries the hosts one after the other within one
connect timeout: a frozen server early in the list (a stopped host, a partition: TCP accepts,
nothing answers) would take the whole timeout of every new connection, so that the pool could
not reach the new primary until the frozen one came back. Here every host is tried at once,
each within the full timeout, and the first that answers as writable wins; the others are
closed. While no server takes writes (the seconds of a failover) a connect fails with
:class:`NoPrimary`, which the service answers 503 ``service.unavailable`` "nothing was
recorded" (``service.application.faults``).

Connections already in the pool when the primary changes are dropped by the pool's user
(``infra.pool.BoundedPool`` expires them all on the first sign of a lost or
demoted server), so the next statements go to the new primary.
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg  # type: ignore[import-untyped]


class NoPrimary(asyncpg.exceptions.TargetServerAttributeNotMatched):  # type: ignore[misc]
    """None of the servers of a multi-host ``PG_DSN`` answered as writable."""


def split_hosts(dsn: str) -> list[str]:
    """One DSN per server of a ``postgres[ql]://`` URL naming several (``h1:p1,h2:p2``), each
    keeping the user, database and options; ``[dsn]`` for any other DSN."""
    parts = urlsplit(dsn)
    if parts.scheme not in ("postgres", "postgresql") or "," not in parts.netloc:
        return [dsn]
    userinfo, at, hosts = parts.netloc.rpartition("@")
    return [
        urlunsplit(parts._replace(netloc=f"{userinfo}{at}{host}"))
        for host in hosts.split(",")
        if host
    ]


class PrimaryConnector:
    """The ``connect`` of an asyncpg pool over ``dsn``: with several hosts, every host at once
    and the first writable one; with one, plain ``asyncpg.connect``."""

    def __init__(self, dsn: str) -> None:
        self.hosts = split_hosts(dsn)

    async def __call__(self, dsn: str | None = None, **kwargs: Any) -> Any:
        if len(self.hosts) < 2:
            return await asyncpg.connect(dsn, **kwargs)
        return await self._first_writable(kwargs)

    async def _first_writable(self, kwargs: dict[str, Any]) -> Any:
        tasks = {
            asyncio.ensure_future(asyncpg.connect(host, **kwargs)): host for host in self.hosts
        }
        errors: list[str] = []
        chosen: Any = None
        pending = set(tasks)
        try:
            while pending and chosen is None:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    error = task.exception()
                    if error is not None:
                        errors.append(f"{urlsplit(tasks[task]).netloc}: {error!r}")
                    elif chosen is None:
                        chosen = task.result()
                    else:  # two writable servers answered in the same turn: keep one
                        task.result().terminate()
        finally:
            for task in pending:  # the slower ones are not waited for
                task.add_done_callback(_terminate)
                task.cancel()
        if chosen is None:
            raise NoPrimary("no server takes writes (" + "; ".join(sorted(errors)) + ")")
        return chosen


def _terminate(task: asyncio.Future[Any]) -> None:
    """Close the connection a cancelled connect made all the same."""
    if not task.cancelled() and task.exception() is None:
        task.result().terminate()
