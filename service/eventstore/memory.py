"""The event log in process memory (issue 36): the same operations and guarantees as the
PostgreSQL store (:class:`service.eventstore.store.EventStore`), for tests and tools — dense
versions, a compare-and-set append of which exactly one of two concurrent ones wins, an
idempotency key recorded once per (game, seat), refusals capped per seat and counted past the
cap, deadlines set by ``clock.set`` events and claimed by one owner at a time.
``tests/service/test_event_log_contract.py`` runs one suite against both.

One game's writes are serialized by an :class:`asyncio.Lock` (the row lock); a write under
:meth:`MemoryLog.lock` that raises leaves the game as it was (the transaction rolled back).
Event data is kept in the key order PostgreSQL's ``jsonb`` reads it back in, so the bytes a
caller is sent are the store's. Nothing is kept past the process.
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime
from typing import Any, Unpack

import msgspec

from ledger.chain import ZERO_HASH, canonical_uuid, utc_micro
from ledger.records import CommandRecord, StoredEvent
from service.eventstore.memoryparts import GameState, MemoryLocked, MemorySide, jsonb_order
from service.eventstore.records import (
    AcceptedCommand,
    DuplicateCommand,
    GameNotFound,
    GameRow,
    NewCommand,
    NewGame,
    Snapshot,
)


class MemoryLog(MemorySide):
    """An event log in memory: ``MemoryLog(clock=...)`` (default: ``datetime.now(UTC)``)."""

    def __init__(self, *, clock: Callable[[], datetime] | None = None) -> None:
        super().__init__(clock or (lambda: datetime.now(UTC)))
        self._locks: dict[str, asyncio.Lock] = {}

    # ------------------------------------------------------------------ games
    def creating(
        self, *, players: list[str | None] | None = None, **game: Unpack[NewGame]
    ) -> AbstractAsyncContextManager[MemoryLocked]:
        seats = game["seats"]
        if seats < 1:
            raise ValueError("seats must be at least 1")
        named: list[str | None] = [None] * seats if players is None else players
        if len(named) > seats:
            raise ValueError(f"{len(named)} players for {seats} seats")
        return self._creating(named, game)

    @asynccontextmanager
    async def _creating(
        self, players: list[str | None], game: NewGame
    ) -> AsyncIterator[MemoryLocked]:
        now = utc_micro(self._clock())
        gid = str(uuid.uuid4())
        row = GameRow(
            gid, game["game"], game["seats"], jsonb_order(game["options"]), "open", 0,
            ZERO_HASH, game["invite_code"], players, None, now, now,
        )  # fmt: skip
        state = GameState(row, game["seed"], game["host_token_hash"], game.get("message_key"))
        self._games[gid] = state
        try:
            async with self._held(gid) as locked:
                yield locked
        except BaseException:
            self._games.pop(gid, None)
            raise

    def lock(self, game_id: str | uuid.UUID) -> AbstractAsyncContextManager[MemoryLocked]:
        self._game(game_id)
        return self._held(canonical_uuid(str(game_id)))

    @asynccontextmanager
    async def _held(self, gid: str) -> AsyncIterator[MemoryLocked]:
        async with self._locks.setdefault(gid, asyncio.Lock()):
            game = self._games[gid]
            before = game.copy()
            locked = MemoryLocked(self, game)
            try:
                yield locked
            except BaseException:
                self._games[gid] = before
                raise
            finally:
                locked._open = False

    async def create_game(self, *, players: list[str | None], **game: Unpack[NewGame]) -> GameRow:
        async with self.creating(players=players, **game) as locked:
            return locked.row

    async def get_game(self, game_id: str | uuid.UUID) -> GameRow | None:
        try:
            return self._game(game_id).row
        except GameNotFound:
            return None

    async def version_head(self, game_id: str | uuid.UUID) -> tuple[int, bytes] | None:
        row = await self.get_game(game_id)
        return None if row is None else (row.version, row.head)

    async def seed(self, game_id: str | uuid.UUID) -> bytes:
        return self._game(game_id).seed

    async def message_key(self, game_id: str | uuid.UUID) -> bytes | None:
        return self._game(game_id).message_key

    async def host_token_hash(self, game_id: str | uuid.UUID) -> bytes:
        return self._game(game_id).host_token_hash

    async def set_seat(
        self,
        game_id: str | uuid.UUID,
        seat: int,
        name: str | None,
        token_hash: bytes,
        *,
        replace: bool = False,
    ) -> GameRow:
        async with self.lock(game_id) as locked:
            return await locked.set_seat(seat, name, token_hash, replace=replace)

    # ------------------------------------------------------------------ events
    async def read(
        self, game_id: str | uuid.UUID, *, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        try:
            events = self._game(game_id).events[after:]
        except GameNotFound:
            return []
        return events if limit is None else events[:limit]

    async def read_history(
        self, game_id: str | uuid.UUID, *, through: int, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        events = [e for e in await self.read(game_id, after=after) if e.version <= through]
        return events if limit is None else events[:limit]

    async def snapshot(self, game_id: str | uuid.UUID) -> Snapshot | None:
        try:
            game = self._game(game_id)
        except GameNotFound:
            return None
        version = game.row.version
        commands = [
            c
            for c in sorted(game.commands, key=lambda c: (c.received_at, c.id))
            if c.outcome != "accepted" or c.last_version is None or c.last_version <= version
        ]
        return Snapshot(game.row, list(game.events[:version]), commands, game.seed)

    def _store(self, game: GameState, stored: list[StoredEvent], **row: Any) -> None:
        """``stored`` appended to ``game`` and its row moved (no await: nothing interleaves)."""
        game.events.extend(stored)
        game.row = msgspec.structs.replace(
            game.row,
            version=stored[-1].version,
            head=stored[-1].hash,
            updated_at=stored[-1].recorded_at,
            **{k: v for k, v in row.items() if v is not None},
        )
        game.writes += 1
        for event in stored:
            if event.type == "clock.set":
                self._clock_set(game.row.id, event)

    async def append_command(self, command: AcceptedCommand) -> bool:
        game = self._game(command.game_id)
        async with self._locks.setdefault(game.row.id, asyncio.Lock()):
            game = self._game(command.game_id)
            if (game.row.version, game.row.head) != (command.version, command.head):
                return False
            stored = command.stored
            self._insert_command(
                game,
                {
                    "command_id": command.command_id,
                    "seat": command.seat,
                    "idempotency_key": command.idempotency_key,
                    "type": command.command_type,
                    "body": command.body,
                    "outcome": "accepted",
                    "first_version": stored[0].version,
                    "last_version": stored[-1].version,
                    "response": msgspec.to_builtins(command.response),
                    "received_at": command.received_at,
                },
            )
            kept = [
                msgspec.structs.replace(e, data=jsonb_order(e.data), public=jsonb_order(e.public))
                for e in stored
            ]
            self._store(game, kept, status=command.status, result=jsonb_order(command.result))
            return True

    # ------------------------------------------------------------------ commands
    def _insert_command(self, game: GameState, command: NewCommand) -> None:
        outcome = command.get("outcome")
        cid = canonical_uuid(command["command_id"])
        seat, key = command["seat"], command["idempotency_key"]
        if any(c.id == cid for g in self._games.values() for c in g.commands) or (
            key is not None
            and any(c.idempotency_key == key and c.seat == seat for c in game.commands)
        ):
            raise DuplicateCommand(game.row.id, key, cid)
        received = command.get("received_at")
        sha = command.get("body_sha256")
        body = None if command["body"] is None else jsonb_order(command["body"])
        game.commands.append(
            CommandRecord(
                cid, game.row.id, seat, key, command["type"], body,
                utc_micro(received if received is not None else self._clock()),
                str(outcome), command.get("error_code"), command.get("error_detail"),
                command.get("first_version"), command.get("last_version"),
                jsonb_order(command.get("response")), None if sha is None else sha.hex(),
                command.get("body_size"), body is None, command.get("body_prefix"),
            )
        )  # fmt: skip
        game.writes += 1

    async def record_rejection(
        self, *, game_id: str | uuid.UUID, **command: Unpack[NewCommand]
    ) -> None:
        command.setdefault("outcome", "rejected")
        if command["outcome"] not in ("rejected", "conflict"):
            raise ValueError("record_rejection records outcome 'rejected' or 'conflict'")
        command["first_version"] = command["last_version"] = None
        self._insert_command(self._game(game_id), command)

    async def find_command(
        self, game_id: str | uuid.UUID, seat: int | None, idempotency_key: str
    ) -> CommandRecord | None:
        try:
            commands = self._game(game_id).commands
        except GameNotFound:
            return None
        return next(
            (c for c in commands if c.idempotency_key == idempotency_key and c.seat == seat),
            None,
        )

    async def get_command(self, command_id: str) -> CommandRecord | None:
        return next(
            (c for g in self._games.values() for c in g.commands if c.id == command_id), None
        )

    async def commands(self, game_id: str | uuid.UUID) -> list[CommandRecord]:
        return sorted(self._game(game_id).commands, key=lambda c: (c.received_at, c.id))

    async def settled(self) -> None:
        """Everything is settled at once: there is no standby."""

    async def fingerprint(self, game_id: str) -> bytes | None:
        try:
            game = self._game(game_id)
        except GameNotFound:
            return None
        counts = sorted((s, tuple(n)) for s, n in game.unrecorded.items())
        return hashlib.sha256(f"{game.row.id}|{game.writes}|{counts}".encode()).digest()
