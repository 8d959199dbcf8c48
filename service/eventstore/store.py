"""The event store: games as event streams in PostgreSQL, on an asyncpg pool.

Writes to one game are serialized by a row lock: :meth:`EventStore.lock` opens a transaction and
takes ``SELECT ... FOR UPDATE`` on the game's ``games`` row; inside it :meth:`Locked.append`
checks the expected version, inserts the events with dense versions (``version + 1 ...``) and
their hash-chain links, and moves ``games.version``/``head``. A writer whose expected version is
stale gets :class:`VersionConflict`; the primary key ``(game_id, version)`` backs this up (a
unique violation is reported as :class:`VersionConflict` too), so an event is never lost or
duplicated silently. Events are immutable (a trigger rejects UPDATE/DELETE/TRUNCATE).

Hash chain (see :mod:`ledger.chain` for the exact construction)::

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

:class:`EventStore` is put together from one part per concern: games, seats and secrets
(:mod:`service.eventstore.games`), event reads (:mod:`service.eventstore.reads`), commands
(:mod:`service.eventstore.commandlog`), game commands' appends
(:mod:`service.eventstore.optimistic`, :mod:`service.eventstore.batched`), on the pools of
:mod:`service.eventstore.pooled`, which also holds the ports for refusals
(:mod:`service.eventstore.rejections`), kept documents (:mod:`service.eventstore.kept`) and
signing keys (:mod:`service.eventstore.keys`). Every append path writes one description of an
append with named SQL parameters (:mod:`service.eventstore.appending`).
Further modules: :mod:`service.eventstore.records` (Structs, errors),
:mod:`ledger.chain` (hashing), :mod:`service.eventstore.pgrows` (SQL and row
decoding), :mod:`service.eventstore.locked` (:class:`Locked`).

JSON columns are sent and read as text (``$n::text::jsonb`` / ``col::text``) and coded with
msgspec, so the store works whatever JSON codecs the pool's connections have.
"""

from __future__ import annotations

import uuid

from ledger.chain import ZERO_HASH, canonical, verify_chain
from ledger.records import CommandRecord, NewEvent, StoredEvent
from service.eventstore import pgrows as db
from service.eventstore.commandlog import CommandLog
from service.eventstore.deadlines import Deadlines
from service.eventstore.games import GameRows
from service.eventstore.kept import KeptDocuments
from service.eventstore.keys import SigningKeys
from service.eventstore.locked import Locked
from service.eventstore.optimistic import append_command
from service.eventstore.reads import REPLICA_RETRY_S, EventReads
from service.eventstore.records import (
    AcceptedCommand,
    AppendResult,
    DuplicateCommand,
    GameNotFound,
    GameRow,
    SeatTaken,
    VersionConflict,
)
from service.eventstore.rejections import Refusals

__all__ = [
    "REPLICA_RETRY_S",
    "ZERO_HASH",
    "AcceptedCommand",
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


class EventStore(GameRows, EventReads, CommandLog, Refusals, KeptDocuments, Deadlines, SigningKeys):
    """Games, their events, commands, secrets and seat tokens, refusals past those recorded,
    kept documents, turn clocks' deadlines and signing keys, on an ``asyncpg.Pool``
    (``EventStore(pool, clock=..., read_pool=...)``: :class:`service.eventstore.pooled.Pooled`).
    The PostgreSQL implementation of :class:`service.eventstore.port.EventLog`: its methods are
    the only way to the pools.
    """

    async def append_command(self, command: AcceptedCommand) -> bool:
        """Append an accepted game command's chained events and record it with its answer, in
        one statement (with the others of its loop turn when there are:
        :mod:`service.eventstore.batched`): True; False when the game is no longer at the
        command's (``version``, ``head``): decide again. Raises :class:`DuplicateCommand` when
        its Idempotency-Key is already recorded (nothing written). See
        :mod:`service.eventstore.optimistic`."""
        return await append_command(self._pool, command, self.appends)

    async def fingerprint(self, game_id: str) -> bytes | None:
        """A SHA-256 of the row versions of everything a game's audit reads (its row, secrets,
        events, commands and refusal counts): any write to any of them changes it. None: no
        such game."""
        found = await self._pool.fetchval(db.FINGERPRINT, uuid.UUID(game_id))
        return None if found is None else bytes(found)
