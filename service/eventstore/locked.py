"""A game held under its row lock: append events, look up and record commands."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any, Unpack

import asyncpg  # type: ignore[import-untyped]
import msgspec

from ledger.chain import chain_events, utc_micro
from ledger.records import CommandRecord, NewEvent, StoredEvent
from service.eventstore import pgrows as db
from service.eventstore.appending import INSERT_EVENTS, MOVE_GAME, Append
from service.eventstore.atomic import atomic
from service.eventstore.records import AppendResult, GameRow, NewCommand, VersionConflict


class Locked:
    """A game held under its row lock, inside one transaction. Valid only inside ``lock()``."""

    def __init__(self, conn: Any, row: GameRow, clock: Callable[[], datetime]) -> None:
        self._conn = conn
        self._gid = uuid.UUID(row.id)
        self._clock = clock
        self._open = True
        self.row = row

    def _check(self) -> Any:
        if not self._open:
            raise RuntimeError("Locked used outside its lock() context")
        return self._conn

    async def read(self, *, after: int = 0, limit: int | None = None) -> list[StoredEvent]:
        """The game's events after version ``after``, as this transaction sees them."""
        return await db.read_events(self._check(), self._gid, after, limit)

    async def prior_command(self, seat: int | None, idempotency_key: str) -> CommandRecord | None:
        """The command ``seat`` sent to this game under ``idempotency_key``, if any (keys are
        scoped to (game, seat))."""
        r = await self._check().fetchrow(db.FIND_COMMAND, self._gid, seat, idempotency_key)
        return None if r is None else db.command_record(r)

    async def append(
        self,
        *,
        expected_version: int,
        events: list[NewEvent],
        seat: int | None,
        command_id: str | None,
        status: str | None = None,
        result: Any = None,
        players: list[str | None] | None = None,
    ) -> AppendResult:
        """Append ``events`` at versions ``expected_version + 1 ...``; update the game row.

        ``status``/``result``/``players`` replace the game's when not None. Raises
        :class:`VersionConflict` (writing nothing) when the game is not at ``expected_version``.
        """
        conn = self._check()
        if expected_version != self.row.version:
            raise VersionConflict(self.row.version, expected_version)
        if not events:
            raise ValueError("append needs at least one event")
        if status is not None and status not in db.STATUSES:
            raise ValueError(f"status must be one of {db.STATUSES}, not {status!r}")
        at = utc_micro(self._clock())
        game_id = self.row.id
        # Normalize through jsonb so that what we hash is exactly what reads back.
        publics = db.public_texts(events)
        texts = await conn.fetchval(
            db.NORMALIZE_JSON, [db.dumps(e.data) for e in events] + [p or "null" for p in publics]
        )
        texts, public_texts = texts[: len(events)], texts[len(events) :]
        normalized = [
            NewEvent(type=e.type, data=msgspec.json.decode(t), public=db.loads(p) if q else None)
            for e, t, p, q in zip(events, texts, public_texts, publics, strict=True)
        ]
        stored = chain_events(
            game_id, expected_version, self.row.head, normalized, seat, command_id, at
        )
        cid = stored[0].command_id
        prev = stored[-1].hash
        append = Append(
            game_id=game_id,
            version=expected_version,
            head=self.row.head,
            new_version=stored[-1].version,
            new_head=prev,
            at=at,
            status=status,
            result=None if result is None else db.dumps(result),
            players=None if players is None else db.dumps(players),
            seat=seat,
            command_id=cid,
            versions=[e.version for e in stored],
            types=[e.type for e in stored],
            data=list(texts),
            prev_hashes=[e.prev_hash for e in stored],
            hashes=[e.hash for e in stored],
            publics=db.public_texts(stored),
        )
        try:
            async with atomic(conn):  # savepoint: a conflict leaves the lock usable
                await conn.execute(INSERT_EVENTS.sql, *INSERT_EVENTS.of(append))
                r = await conn.fetchrow(MOVE_GAME.sql, *MOVE_GAME.of(append))
        except asyncpg.UniqueViolationError:
            current = await conn.fetchval(
                "SELECT coalesce(max(version), 0) FROM events WHERE game_id = $1", self._gid
            )
            raise VersionConflict(int(current), expected_version) from None
        self.row = db.game_row(r)
        return AppendResult(stored[0].version, stored[-1].version, prev, stored)

    async def set_seat(
        self,
        seat: int,
        name: str | None,
        token_hash: bytes,
        *,
        replace: bool = False,
        player: str | None = None,
    ) -> GameRow:
        """:meth:`EventStore.set_seat` inside this lock (updates ``row.players``); ``player``:
        the id of the player the seat is bound to (issue 39), if any.

        Raises :class:`SeatTaken` (the lock stays usable) or ``ValueError``.
        """
        self.row = await db.assign_seat(
            self._check(), self.row, seat, name, token_hash, replace, player
        )
        return self.row

    async def seat_of_player(self, player_id: str) -> int | None:
        """The seat of this game bound to the player, if any."""
        seat = await self._check().fetchval(
            "SELECT seat FROM seat_tokens WHERE game_id = $1 AND player_id = $2",
            self._gid,
            uuid.UUID(player_id),
        )
        return None if seat is None else int(seat)

    async def release_seat(self, seat: int) -> GameRow:
        """Take ``seat`` back inside this lock: its token is deleted, its name cleared."""
        self.row = await db.release_seat(self._check(), self.row, seat)
        return self.row

    async def record_command(self, **command: Unpack[NewCommand]) -> None:
        """Record a command of this game (in the lock's transaction).

        Raises :class:`DuplicateCommand` if the id, or the idempotency key for this game, is
        already recorded (the lock stays usable: the insert runs in a savepoint).
        """
        await db.insert_command(self._check(), self._gid, command, self._clock)
