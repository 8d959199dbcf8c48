"""Records and errors of the event store (msgspec Structs; ids are lowercase UUID strings)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, NotRequired, TypedDict

import msgspec

from ledger.records import CommandRecord, StoredEvent


class GameRow(msgspec.Struct, frozen=True):
    """One row of ``games``."""

    id: str
    game: str
    seats: int
    options: Any
    status: str
    version: int
    head: bytes
    invite_code: str
    players: list[str | None]
    result: Any | None
    created_at: datetime
    updated_at: datetime

    @property
    def cursor(self) -> tuple[datetime, str]:
        """The ``before`` cursor of :meth:`EventStore.list_games` for the page after this row."""
        return (self.created_at, self.id)


class Snapshot(msgspec.Struct, frozen=True):
    """A game's row, every event through its version, every command recorded and its seed,
    read in one REPEATABLE READ transaction (:meth:`EventStore.snapshot`): an accepted command
    is here exactly when its events are."""

    row: GameRow
    events: list[StoredEvent]
    commands: list[CommandRecord]
    seed: bytes


class NewGame(TypedDict):
    """The arguments of a new game's row and secrets (``EventStore.creating``/``create_game``)."""

    game: str
    seats: int
    options: Any
    invite_code: str
    seed: bytes
    host_token_hash: bytes
    message_key: NotRequired[bytes | None]


class NewCommand(TypedDict):
    """The arguments of a command's row (``Locked.record_command``, ``record_rejection``):
    ``received_at`` defaults to the store's clock, the other optional ones to NULL."""

    command_id: str
    seat: int | None
    idempotency_key: str | None
    type: str
    body: Any
    outcome: NotRequired[str]
    error_code: NotRequired[str | None]
    error_detail: NotRequired[str | None]
    first_version: NotRequired[int | None]
    last_version: NotRequired[int | None]
    response: NotRequired[Any]
    received_at: NotRequired[datetime | None]
    #: A refusal's bounded body (``service.eventstore.rejections.Bounded``): with ``body``
    #: None, ``body_prefix`` is kept instead.
    body_sha256: NotRequired[bytes | None]
    body_size: NotRequired[int | None]
    body_prefix: NotRequired[str | None]


class AcceptedCommand(msgspec.Struct, frozen=True, kw_only=True):
    """A game command accepted on the game at (``version``, ``head``): its events already
    chained after that head (:func:`ledger.chain.chain_events`) and the answer recorded with it
    (signed before the append: ``response``, any msgspec-encodable value) — what
    :meth:`EventStore.append_command` appends and records in one statement, computing nothing.
    ``status``/``result`` replace the game's when not None."""

    game_id: str
    version: int
    head: bytes
    stored: list[StoredEvent]
    seat: int
    command_id: str
    status: str | None
    result: Any
    idempotency_key: str | None
    command_type: str
    body: Any
    received_at: datetime
    response: Any


class AppendResult(msgspec.Struct, frozen=True):
    """What :meth:`Locked.append` wrote: the version range, the new head and the events."""

    first_version: int
    last_version: int
    head: bytes
    events: list[StoredEvent]


class StoreError(Exception):
    """Base class of the event store's errors."""


class GameNotFound(StoreError):
    def __init__(self, game_id: object) -> None:
        super().__init__(f"no game {game_id}")
        self.game_id = str(game_id)


class VersionConflict(StoreError):
    """The stream is not at the expected version (a concurrent writer got there first)."""

    def __init__(self, current_version: int, expected_version: int | None = None) -> None:
        detail = f"expected version {expected_version}, " if expected_version is not None else ""
        super().__init__(f"version conflict: {detail}game is at version {current_version}")
        self.current_version = current_version
        self.expected_version = expected_version


class DuplicateCommand(StoreError):
    """A command with this id, or this idempotency key for the game and seat, is already
    recorded."""

    def __init__(self, game_id: str, idempotency_key: str | None, command_id: str) -> None:
        super().__init__(
            f"command already recorded for game {game_id} "
            f"(idempotency key {idempotency_key!r}, command id {command_id})"
        )
        self.game_id = game_id
        self.idempotency_key = idempotency_key
        self.command_id = command_id


class SeatTaken(StoreError):
    def __init__(self, game_id: str, seat: int) -> None:
        super().__init__(f"seat {seat} of game {game_id} is taken")
        self.game_id = game_id
        self.seat = seat
