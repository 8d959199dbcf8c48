"""The event log as a port (issue 36): what the application needs of the store that keeps the
truth, as :class:`typing.Protocol` classes. Two implementations: PostgreSQL
(:class:`service.eventstore.store.EventStore`, the embedded default) and process memory
(:class:`service.eventstore.memory.MemoryLog`, for tests and tools), held to one contract
(``tests/service/test_event_log_contract.py``). The application depends on these and on the
store's records and typed errors (:mod:`service.eventstore.records`), never on a concrete store.
"""

from __future__ import annotations

import uuid
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any, Protocol, Unpack

from ledger.records import CommandRecord, NewEvent, StoredEvent
from service.eventstore.deadlines import Claim
from service.eventstore.records import (
    AcceptedCommand,
    AppendResult,
    GameRow,
    NewCommand,
    NewGame,
    Snapshot,
)
from service.eventstore.rejections import Unrecorded

GameId = str | uuid.UUID


class LockedGame(Protocol):
    """A game held under its lock, inside one transaction (lobby actions, table talk)."""

    row: GameRow

    async def read(self, *, after: int = 0, limit: int | None = None) -> list[StoredEvent]: ...
    async def prior_command(
        self, seat: int | None, idempotency_key: str
    ) -> CommandRecord | None: ...
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
    ) -> AppendResult: ...
    async def set_seat(
        self, seat: int, name: str | None, token_hash: bytes, *, replace: bool = False
    ) -> GameRow: ...
    async def release_seat(self, seat: int) -> GameRow: ...
    async def record_command(self, **command: Unpack[NewCommand]) -> None: ...


class EventLog(Protocol):
    """Games as streams of events: read a stream from a version, append with the expected
    version and the command's record, find a command by its idempotency key, record a refusal
    within budgets, keep a finished game's documents, claim deadlines, keep signing keys."""

    # games, seats and secrets
    def creating(
        self, *, players: list[str | None] | None = None, **game: Unpack[NewGame]
    ) -> AbstractAsyncContextManager[LockedGame]: ...
    async def create_game(
        self, *, players: list[str | None], **game: Unpack[NewGame]
    ) -> GameRow: ...
    def lock(self, game_id: GameId) -> AbstractAsyncContextManager[LockedGame]: ...
    async def get_game(self, game_id: GameId) -> GameRow | None: ...
    async def version_head(self, game_id: GameId) -> tuple[int, bytes] | None: ...
    async def list_games(
        self,
        *,
        status: str | None = None,
        game: str | None = None,
        limit: int = 50,
        before: tuple[datetime, str] | None = None,
    ) -> list[GameRow]: ...
    async def game_versions(self, after: str | None, limit: int) -> list[tuple[str, int]]: ...
    async def seed(self, game_id: GameId) -> bytes: ...
    async def message_key(self, game_id: GameId) -> bytes | None: ...
    async def host_token_hash(self, game_id: GameId) -> bytes: ...
    async def set_seat(
        self,
        game_id: GameId,
        seat: int,
        name: str | None,
        token_hash: bytes,
        *,
        replace: bool = ...,
    ) -> GameRow: ...
    async def seat_for_token(self, token_hash: bytes) -> tuple[str, int] | None: ...
    async def seats(self, game_id: GameId) -> list[tuple[int, str | None]]: ...

    # events
    async def read(
        self, game_id: GameId, *, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]: ...
    async def read_history(
        self, game_id: GameId, *, through: int, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]: ...
    async def snapshot(self, game_id: GameId) -> Snapshot | None: ...
    async def append_command(self, command: AcceptedCommand) -> bool: ...
    async def fingerprint(self, game_id: str) -> bytes | None: ...

    # commands
    async def record_rejection(self, *, game_id: GameId, **command: Unpack[NewCommand]) -> None: ...
    async def find_command(
        self, game_id: GameId, seat: int | None, idempotency_key: str
    ) -> CommandRecord | None: ...
    async def get_command(self, command_id: str) -> CommandRecord | None: ...
    async def commands(self, game_id: GameId) -> list[CommandRecord]: ...
    async def settled(self) -> None: ...

    # refusals past those recorded
    async def admit_refusal(self, game_id: str, seat: int, cap: int) -> bool: ...
    def refusal_over_budget(self, game_id: str, seat: int) -> None: ...
    async def unrecorded_refusals(self, game_id: str) -> Unrecorded: ...

    # a finished game's kept documents
    async def kept_document(
        self, game_id: str, kind: str, classes: list[str], stamp: bytes
    ) -> bytes | None: ...
    async def keep_document(
        self, game_id: str, kind: str, klass: str, stamp: bytes, body: bytes
    ) -> bool: ...

    # turn clocks' deadlines
    async def claim_deadlines(
        self, now: datetime, until: datetime, owner: str, limit: int
    ) -> list[Claim]: ...
    async def release_deadline(self, game_id: str, owner: str) -> None: ...
    async def correct_deadline(
        self, game_id: str, version: int, due_at: datetime | None
    ) -> None: ...
    async def pending_deadline(self, game_id: str) -> Claim | None: ...

    # signing keys
    async def server_key(self, key_id: str, private_pem: bytes, public_raw: bytes) -> bytes: ...
    async def record_key_used(self, key_id: str, public_raw: bytes) -> None: ...
    async def keys_used(self) -> list[tuple[bytes, datetime]]: ...

    async def ping(self) -> bool: ...
    async def close(self) -> None: ...
