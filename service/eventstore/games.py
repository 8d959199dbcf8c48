"""Games, seats and secrets in the event store: creating a game (its row and secrets, in the
transaction that appends its first events), holding a game under its row lock
(:class:`service.eventstore.locked.Locked`), reading and listing game rows, seat tokens, and the
secrets (seed, message key, host token hash)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime
from typing import Any, Unpack

from ledger.chain import ZERO_HASH
from service.eventstore import pgrows as db
from service.eventstore.atomic import atomic
from service.eventstore.locked import Locked
from service.eventstore.pooled import Pooled
from service.eventstore.records import GameNotFound, GameRow, NewGame


class GameRows(Pooled):
    def creating(
        self, *, players: list[str | None] | None = None, **game: Unpack[NewGame]
    ) -> AbstractAsyncContextManager[Locked]:
        """A new game (status 'open', version 0, head 32 zero bytes, id a fresh uuid4), held
        like :meth:`lock` inside the transaction that inserts it: seats, events and the start
        happen in that one transaction, so a failure anywhere leaves no game behind (committed
        on normal exit). ``players``: names given at creation (default: none)."""
        seats = game["seats"]
        if seats < 1:
            raise ValueError("seats must be at least 1")
        named: list[str | None] = [None] * seats if players is None else players
        if len(named) > seats:
            raise ValueError(f"{len(named)} players for {seats} seats")
        return self._held(lambda conn: _insert_game(conn, game, named))

    async def create_game(self, *, players: list[str | None], **game: Unpack[NewGame]) -> GameRow:
        """A new game's row, committed at once (see :meth:`creating`)."""
        async with self.creating(players=players, **game) as locked:
            return locked.row

    def lock(self, game_id: str | uuid.UUID) -> AbstractAsyncContextManager[Locked]:
        """Hold the game's row lock in a transaction (committed on normal exit).

        Concurrent ``lock()`` calls on one game wait for each other. Raises
        :class:`GameNotFound`.
        """
        return self._held(lambda conn: db.locked_row(conn, game_id))

    @asynccontextmanager
    async def _held(self, row_of: Callable[[Any], Awaitable[GameRow]]) -> AsyncIterator[Locked]:
        async with self._pool.acquire() as conn, atomic(conn):
            locked = Locked(conn, await row_of(conn), self._clock)
            try:
                yield locked
            finally:
                locked._open = False

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

    # ------------------------------------------------------------------ secrets

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
        async with self.lock(game_id) as locked:
            return await locked.set_seat(seat, name, token_hash, replace=replace)

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


async def _insert_game(conn: Any, game: NewGame, players: list[str | None]) -> GameRow:
    """Insert a new game's row and its secrets on ``conn`` (inside the caller's transaction):
    status 'open', version 0, head 32 zero bytes, id a fresh uuid4."""
    gid = uuid.uuid4()
    r = await conn.fetchrow(
        "INSERT INTO games (id, game, seats, options, status, version, head, invite_code, "
        "players) VALUES ($1, $2, $3, $4::text::jsonb, 'open', 0, $5, $6, "
        f"$7::text::jsonb) RETURNING {db.GAME_COLS}",
        gid,
        game["game"],
        game["seats"],
        db.dumps(game["options"]),
        ZERO_HASH,
        game["invite_code"],
        db.dumps(players),
    )
    await conn.execute(
        "INSERT INTO secrets (game_id, seed, host_token_hash, message_key) VALUES ($1, $2, $3, $4)",
        gid,
        game["seed"],
        game["host_token_hash"],
        game.get("message_key"),
    )
    return db.game_row(r)
