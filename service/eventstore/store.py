"""The event store: games as event streams in PostgreSQL, on an asyncpg pool.

Writes to one game are serialized by a row lock: :meth:`EventStore.lock` opens a transaction and
takes ``SELECT ... FOR UPDATE`` on the game's ``games`` row; inside it :meth:`Locked.append`
checks the expected version, inserts the events with dense versions (``version + 1 ...``) and
their hash-chain links, and moves ``games.version``/``head``. A writer whose expected version is
stale gets :class:`VersionConflict`; the primary key ``(game_id, version)`` backs this up (a
unique violation is reported as :class:`VersionConflict` too), so an event is never lost or
duplicated silently. Events are immutable (a trigger rejects UPDATE/DELETE/TRUNCATE).

Hash chain (see :mod:`service.eventstore.chain` for the exact construction)::

    canonical(event) = msgspec.json.encode(
        {"at": "YYYY-MM-DDTHH:MM:SS.ffffffZ", "command": uuid|null, "data": ...,
         "game": uuid, "seat": int|null, "type": str, "version": int},
        order="sorted")
    hash_0 = 32 zero bytes;  hash_n = SHA-256(hash_{n-1} || canonical(event n))

In canonical form 2 the ``data`` hashed is the event's public form, stored in ``events.public``
(hidden values replaced by commitments; NULL when the event has none), ``data`` holding the
clear event for folding.

``recorded_at`` comes from the application clock (one timestamp per append), in UTC with
microsecond precision, which ``timestamptz`` stores exactly. Event data is normalized through
PostgreSQL's ``jsonb`` before hashing, so the data read back hashes to the stored link.

Modules: :mod:`service.eventstore.records` (Structs, errors), :mod:`service.eventstore.chain`
(hashing),
:mod:`service.eventstore.pgrows` (SQL and row decoding), :mod:`service.eventstore.locked`
(:class:`Locked`).

JSON columns are sent and read as text (``$n::text::jsonb`` / ``col::text``) and coded with
msgspec, so the store works whatever JSON codecs the pool's connections have.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import asyncpg  # type: ignore[import-untyped]

from service.eventstore import pgrows as db
from service.eventstore.chain import ZERO_HASH, canonical, verify_chain
from service.eventstore.locked import Locked
from service.eventstore.records import (
    AppendResult,
    CommandRecord,
    DuplicateCommand,
    GameNotFound,
    GameRow,
    NewEvent,
    SeatTaken,
    StoredEvent,
    VersionConflict,
)
from service.observability import HISTORY_READS

__all__ = [
    "ZERO_HASH",
    "AppendResult",
    "CommandRecord",
    "DuplicateCommand",
    "EventStore",
    "GameNotFound",
    "GameRow",
    "Locked",
    "NewEvent",
    "SeatTaken",
    "StoredEvent",
    "VersionConflict",
    "canonical",
    "verify_chain",
]


#: Seconds history reads skip a read replica that has just failed (go to the primary at once).
REPLICA_RETRY_S = 5.0


class EventStore:
    """Games, their events, commands, secrets and seat tokens, on an ``asyncpg.Pool``.

    ``clock`` (default: ``datetime.now(UTC)``) stamps events' ``recorded_at`` and commands'
    ``received_at``.
    """

    def __init__(
        self,
        pool: Any,
        *,
        clock: Callable[[], datetime] | None = None,
        read_pool: Any = None,
    ) -> None:
        self._pool = pool
        #: The pool, for statements the store does not wrap (``service.eventstore.optimistic``).
        self.pool = pool
        #: A read replica's pool (``PG_READ_DSN``) for :meth:`read_history`, or None.
        self.read_pool = read_pool
        #: How :meth:`read_history` was answered: replica, fallback_behind, fallback_error.
        self.history_reads: dict[str, int] = {}
        #: ``time.monotonic()`` before which the replica, having just failed, is not tried.
        self.replica_retry_at = 0.0
        self._clock: Callable[[], datetime] = clock if clock is not None else db.utc_now

    async def close_replica(self) -> None:
        if self.read_pool is not None:
            await self.read_pool.close()

    # ------------------------------------------------------------------ games

    @asynccontextmanager
    async def creating(
        self,
        *,
        game: str,
        seats: int,
        options: Any,
        invite_code: str,
        seed: bytes,
        host_token_hash: bytes,
        message_key: bytes | None = None,
    ) -> AsyncIterator[Locked]:
        """A new game, held like :meth:`lock` inside the transaction that inserts it: seats,
        events and the start happen in that one transaction, so a failure anywhere leaves no
        game behind (committed on normal exit)."""
        if seats < 1:
            raise ValueError("seats must be at least 1")
        async with self._pool.acquire() as conn, conn.transaction():
            row = await _insert_game(
                conn, game, seats, options, invite_code, seed, host_token_hash, message_key,
                players=[None] * seats,
            )
            locked = Locked(conn, row, self._clock)
            try:
                yield locked
            finally:
                locked._open = False

    async def create_game(
        self,
        *,
        game: str,
        seats: int,
        options: Any,
        invite_code: str,
        seed: bytes,
        host_token_hash: bytes,
        players: list[str | None],
        message_key: bytes | None = None,
    ) -> GameRow:
        """A new game: status 'open', version 0, head 32 zero bytes, id a fresh uuid4."""
        if seats < 1:
            raise ValueError("seats must be at least 1")
        if len(players) > seats:
            raise ValueError(f"{len(players)} players for {seats} seats")
        async with self._pool.acquire() as conn, conn.transaction():
            return await _insert_game(
                conn, game, seats, options, invite_code, seed, host_token_hash, message_key,
                players=players,
            )

    async def get_game(self, game_id: str | uuid.UUID) -> GameRow | None:
        try:
            gid = db.game_uuid(game_id)
        except GameNotFound:
            return None
        r = await self._pool.fetchrow(f"SELECT {db.GAME_COLS} FROM games WHERE id = $1", gid)
        return None if r is None else db.game_row(r)

    async def version_head(self, game_id: str | uuid.UUID) -> tuple[int, bytes] | None:
        """The game's stored ``(version, head)`` (one primary-key read; no lock taken)."""
        try:
            gid = db.game_uuid(game_id)
        except GameNotFound:
            return None
        r = await self._pool.fetchrow("SELECT version, head FROM games WHERE id = $1", gid)
        return None if r is None else (int(r["version"]), bytes(r["head"]))

    async def list_games(
        self,
        *,
        status: str | None = None,
        game: str | None = None,
        limit: int = 50,
        before: tuple[datetime, str] | None = None,
    ) -> list[GameRow]:
        """Games newest first. Keyset pagination: pass the last row's ``cursor`` as ``before``."""
        if limit < 1:
            raise ValueError("limit must be positive")
        where: list[str] = []
        args: list[Any] = []
        if status is not None:
            args.append(status)
            where.append(f"status = ${len(args)}")
        if game is not None:
            args.append(game)
            where.append(f"game = ${len(args)}")
        if before is not None:
            args += [before[0], uuid.UUID(str(before[1]))]
            where.append(f"(created_at, id) < (${len(args) - 1}, ${len(args)})")
        args.append(limit)
        sql = (
            f"SELECT {db.GAME_COLS} FROM games"
            + (" WHERE " + " AND ".join(where) if where else "")
            + f" ORDER BY created_at DESC, id DESC LIMIT ${len(args)}"
        )
        return [db.game_row(r) for r in await self._pool.fetch(sql, *args)]

    async def seed(self, game_id: str | uuid.UUID) -> bytes:
        return await self._secret(game_id, "seed")

    async def message_key(self, game_id: str | uuid.UUID) -> bytes | None:
        """The key private table talk is committed under (None for games created before)."""
        value = await self._pool.fetchval(
            "SELECT message_key FROM secrets WHERE game_id = $1", db.game_uuid(game_id)
        )
        return None if value is None else bytes(value)

    async def host_token_hash(self, game_id: str | uuid.UUID) -> bytes:
        return await self._secret(game_id, "host_token_hash")

    async def _secret(self, game_id: str | uuid.UUID, column: str) -> bytes:
        value = await self._pool.fetchval(
            f"SELECT {column} FROM secrets WHERE game_id = $1", db.game_uuid(game_id)
        )
        if value is None:
            raise GameNotFound(game_id)
        return bytes(value)

    # ------------------------------------------------------------------ seats

    async def set_seat(
        self,
        game_id: str | uuid.UUID,
        seat: int,
        name: str | None,
        token_hash: bytes,
        *,
        replace: bool = False,
    ) -> GameRow:
        """Give ``seat`` to ``name`` with a token (stored only as ``token_hash``).

        Also sets ``games.players[seat]``. Raises :class:`SeatTaken` if the seat already has a
        token (unless ``replace``), ``ValueError`` for a seat out of range.
        Takes the game's row lock: inside :meth:`lock` use :meth:`Locked.set_seat` instead
        (calling this one there would wait for the lock it is running under, forever).
        """
        gid = db.game_uuid(game_id)
        async with self._pool.acquire() as conn, conn.transaction():
            r = await conn.fetchrow(
                f"SELECT {db.GAME_COLS} FROM games WHERE id = $1 FOR UPDATE", gid
            )
            if r is None:
                raise GameNotFound(game_id)
            return await db.assign_seat(conn, db.game_row(r), seat, name, token_hash, replace)

    async def seat_for_token(self, token_hash: bytes) -> tuple[str, int] | None:
        """``(game_id, seat)`` that the token with this hash acts for, or None."""
        r = await self._pool.fetchrow(
            "SELECT game_id, seat FROM seat_tokens WHERE token_hash = $1", token_hash
        )
        return None if r is None else (str(r["game_id"]), int(r["seat"]))

    async def seats(self, game_id: str | uuid.UUID) -> list[tuple[int, str | None]]:
        """``(seat, name)`` of every seat that has a token, by seat."""
        rows = await self._pool.fetch(
            "SELECT seat, name FROM seat_tokens WHERE game_id = $1 ORDER BY seat",
            db.game_uuid(game_id),
        )
        return [(int(r["seat"]), r["name"]) for r in rows]

    # ------------------------------------------------------------------ events

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

    def _count(self, outcome: str) -> None:
        self.history_reads[outcome] = self.history_reads.get(outcome, 0) + 1
        HISTORY_READS.labels(outcome).inc()

    @asynccontextmanager
    async def lock(self, game_id: str | uuid.UUID) -> AsyncIterator[Locked]:
        """Hold the game's row lock in a transaction (committed on normal exit).

        Concurrent ``lock()`` calls on one game wait for each other. Raises
        :class:`GameNotFound`.
        """
        gid = db.game_uuid(game_id)
        async with self._pool.acquire() as conn, conn.transaction():
            r = await conn.fetchrow(
                f"SELECT {db.GAME_COLS} FROM games WHERE id = $1 FOR UPDATE", gid
            )
            if r is None:
                raise GameNotFound(game_id)
            locked = Locked(conn, db.game_row(r), self._clock)
            try:
                yield locked
            finally:
                locked._open = False

    async def game_versions(self, after: str | None, limit: int) -> list[tuple[str, int]]:
        """``(game id, version)`` of games in id order after ``after`` (the catch-up worker's
        pages)."""
        rows = await self._pool.fetch(
            "SELECT id, version FROM games WHERE ($1::uuid IS NULL OR id > $1::uuid) "
            "ORDER BY id LIMIT $2",
            None if after is None else db.game_uuid(after),
            limit,
        )
        return [(str(r["id"]), int(r["version"])) for r in rows]

    async def ping(self) -> bool:
        return bool(await self._pool.fetchval("SELECT 1") == 1)

    # ------------------------------------------------------------------ commands

    async def record_rejection(
        self,
        *,
        game_id: str | uuid.UUID,
        command_id: str,
        seat: int | None,
        idempotency_key: str | None,
        type: str,
        body: Any,
        error_code: str,
        error_detail: str | None = None,
        outcome: str = "rejected",
        response: Any = None,
        received_at: datetime | None = None,
    ) -> None:
        """Record a rejected (or 'conflict') command, which appended nothing, on its own.

        Raises :class:`DuplicateCommand` / :class:`GameNotFound`.
        """
        if outcome not in ("rejected", "conflict"):
            raise ValueError("record_rejection records outcome 'rejected' or 'conflict'")
        async with self._pool.acquire() as conn:
            await db.insert_command(
                conn,
                db.game_uuid(game_id),
                command_id=command_id,
                seat=seat,
                idempotency_key=idempotency_key,
                type=type,
                body=body,
                outcome=outcome,
                error_code=error_code,
                error_detail=error_detail,
                first_version=None,
                last_version=None,
                response=response,
                received_at=received_at if received_at is not None else self._clock(),
            )

    async def find_command(
        self, game_id: str | uuid.UUID, seat: int | None, idempotency_key: str
    ) -> CommandRecord | None:
        """The command ``seat`` sent to the game under ``idempotency_key`` (no lock taken).

        Keys are scoped to (game, seat): another seat's command under the same key is not
        found (see ``migrations/0002_idempotency_per_seat.sql``)."""
        r = await self._pool.fetchrow(db.FIND_COMMAND, db.game_uuid(game_id), seat, idempotency_key)
        return None if r is None else db.command_record(r)

    async def get_command(self, command_id: str) -> CommandRecord | None:
        try:
            cid = uuid.UUID(str(command_id))
        except ValueError:
            return None
        r = await self._pool.fetchrow(f"SELECT {db.COMMAND_COLS} FROM commands WHERE id = $1", cid)
        return None if r is None else db.command_record(r)

    async def commands(self, game_id: str | uuid.UUID) -> list[CommandRecord]:
        """Every command recorded for the game, in the order received."""
        rows = await self._pool.fetch(
            f"SELECT {db.COMMAND_COLS} FROM commands WHERE game_id = $1 ORDER BY received_at, id",
            db.game_uuid(game_id),
        )
        return [db.command_record(r) for r in rows]


async def _insert_game(
    conn: Any,
    game: str,
    seats: int,
    options: Any,
    invite_code: str,
    seed: bytes,
    host_token_hash: bytes,
    message_key: bytes | None,
    *,
    players: list[str | None],
) -> GameRow:
    """Insert a new game's row and its secrets on ``conn`` (inside the caller's transaction):
    status 'open', version 0, head 32 zero bytes, id a fresh uuid4."""
    gid = uuid.uuid4()
    r = await conn.fetchrow(
        "INSERT INTO games (id, game, seats, options, status, version, head, invite_code, "
        "players) VALUES ($1, $2, $3, $4::text::jsonb, 'open', 0, $5, $6, "
        f"$7::text::jsonb) RETURNING {db.GAME_COLS}",
        gid,
        game,
        seats,
        db.dumps(options),
        ZERO_HASH,
        invite_code,
        db.dumps(players),
    )
    await conn.execute(
        "INSERT INTO secrets (game_id, seed, host_token_hash, message_key) "
        "VALUES ($1, $2, $3, $4)",
        gid,
        seed,
        host_token_hash,
        message_key,
    )
    return db.game_row(r)
