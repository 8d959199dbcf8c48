"""What every part of :class:`service.eventstore.store.EventStore` stands on: the asyncpg pool,
an optional read replica's pool, and the clock that stamps events and commands. The parts
(games, reads, commands, refusals, kept documents, deadlines, signing keys) are mixins on it, so
the store is one object with one method per operation; players (issue 39) are one port beside
them, ``players``. Nothing outside :mod:`service.eventstore`
touches a pool (``tests/test_layers.py``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from service.eventstore import pgrows as db
from service.eventstore.batched import Appends
from service.eventstore.players import PlayerRows


class Pooled:
    """The pools and clock of an event store.

    ``clock`` (default: ``datetime.now(UTC)``) stamps events' ``recorded_at`` and commands'
    ``received_at``; ``append_batch`` is the most game commands appended in one statement
    (:mod:`service.eventstore.batched`).
    """

    def __init__(
        self,
        pool: Any,
        *,
        clock: Callable[[], datetime] | None = None,
        read_pool: Any = None,
        append_batch: int = 1,
    ) -> None:
        self._pool = pool
        #: Appends of one loop turn sent together (at most ``append_batch``; 1: each alone).
        self.appends = Appends(pool, append_batch)
        #: Players, their keys and the seats bound to them (:mod:`.players`).
        self.players = PlayerRows(pool)
        #: A read replica's pool (``PG_READ_DSN``) for history reads, or None.
        self.read_pool = read_pool
        #: How history reads were answered: replica, fallback_behind, fallback_error.
        self.history_reads: dict[str, int] = {}
        #: ``time.monotonic()`` before which the replica, having just failed, is not tried.
        self.replica_retry_at = 0.0
        self._clock: Callable[[], datetime] = clock if clock is not None else db.utc_now

    async def close_replica(self) -> None:
        if self.read_pool is not None:
            await self.read_pool.close()

    async def close(self) -> None:
        """Close the pools (the replica's first): the store is not used after."""
        await self.close_replica()
        await self._pool.close()

    async def ping(self) -> bool:
        return bool(await self._pool.fetchval("SELECT 1") == 1)
