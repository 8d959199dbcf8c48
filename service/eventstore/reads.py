"""Reading a game's events: from the primary, or — for history reads — from a read replica
when it has every event asked for (events are immutable, so a replica can lag but never
differ); and a game's whole record as one snapshot (:meth:`EventReads.snapshot`), for the
documents that show commands beside their events (export, audit, dispute files)."""

from __future__ import annotations

import time
import uuid

import asyncpg  # type: ignore[import-untyped]

from ledger.records import StoredEvent
from service.eventstore import pgrows as db
from service.eventstore.atomic import atomic
from service.eventstore.pooled import Pooled
from service.eventstore.records import GameNotFound, Snapshot
from service.observability import HISTORY_READS

#: A game's commands, accepted ones only when their events are at most version $2 (in a
#: snapshot they all are: an accepted command is inserted by the statement that appends its
#: events; the bound says so again, in the query).
_SNAPSHOT_COMMANDS = (
    f"SELECT {db.COMMAND_COLS} FROM commands WHERE game_id = $1 "
    "AND (outcome <> 'accepted' OR last_version IS NULL OR last_version <= $2) "
    "ORDER BY received_at, id"
)

#: Seconds history reads skip a read replica that has just failed (go to the primary at once).
REPLICA_RETRY_S = 5.0


class EventReads(Pooled):
    async def read(
        self, game_id: str | uuid.UUID, *, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        """Events with version > ``after`` in version order (at most ``limit``); [] if none."""
        async with self._pool.acquire() as conn:
            return await db.read_events(conn, db.game_uuid(game_id), after, limit)

    async def read_history(
        self, game_id: str | uuid.UUID, *, through: int, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        """Like :meth:`read`, from the read replica when there is one and it is not behind.

        ``through`` is a version the caller knows the game has reached (from the primary, e.g.
        its ``games`` row): every event after ``after`` up to ``through`` (at most ``limit``)
        must be in the answer. Events are immutable, so an event the replica has is the very
        event the primary has: a replica's answer can be incomplete (it lags), never different.
        It is used only when complete; otherwise — or when the replica cannot be reached — the
        primary answers (after a failure, for :data:`REPLICA_RETRY_S` seconds without trying
        the replica). A history read is therefore never staler than the primary's row.
        """
        if self.read_pool is None:
            return await self.read(game_id, after=after, limit=limit)
        if time.monotonic() < self.replica_retry_at:  # it failed a moment ago: do not wait on it
            self._count("fallback_error")
            return await self.read(game_id, after=after, limit=limit)
        wanted = max(0, through - after if limit is None else min(limit, through - after))
        try:
            async with self.read_pool.acquire() as conn:
                events = await db.read_events(conn, db.game_uuid(game_id), after, limit)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError):
            outcome = "fallback_error"
            self.replica_retry_at = time.monotonic() + REPLICA_RETRY_S
        else:
            if len(events) >= wanted:
                self._count("replica")
                return events
            outcome = "fallback_behind"
        self._count(outcome)
        return await self.read(game_id, after=after, limit=limit)

    async def snapshot(self, game_id: str | uuid.UUID) -> Snapshot | None:
        """The game's row, its events through the row's version, its commands and its seed,
        read in one read-only REPEATABLE READ transaction on the primary: all four as of one
        moment, so a command accepted meanwhile is in none of them or (with its events) in all.
        Reading them one by one, an export could list an accepted command (whose body may name
        a hidden value, as Curious Cargo's ``keep_card`` does) without the events that mark it
        secret, and show its body to everyone. None: no such game."""
        try:
            gid = db.game_uuid(game_id)
        except GameNotFound:
            return None
        async with (
            self._pool.acquire() as conn,
            atomic(conn, isolation="repeatable_read", readonly=True),
        ):
            r = await conn.fetchrow(f"SELECT {db.GAME_COLS} FROM games WHERE id = $1", gid)
            if r is None:
                return None
            row = db.game_row(r)
            events = await db.read_events(conn, gid, 0, row.version)
            commands = await conn.fetch(_SNAPSHOT_COMMANDS, gid, row.version)
            seed = await conn.fetchval("SELECT seed FROM secrets WHERE game_id = $1", gid)
        if seed is None:
            raise GameNotFound(game_id)
        return Snapshot(row, events, [db.command_record(c) for c in commands], bytes(seed))

    def _count(self, outcome: str) -> None:
        self.history_reads[outcome] = self.history_reads.get(outcome, 0) + 1
        HISTORY_READS.labels(outcome).inc()
