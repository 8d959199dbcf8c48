"""Commands in the event store: a refused command recorded on its own (an accepted one is
recorded with its events: :mod:`service.eventstore.optimistic`,
:meth:`service.eventstore.locked.Locked.record_command`), and commands looked up by id, by a
seat's idempotency key, or all of a game's."""

from __future__ import annotations

import uuid
from typing import Unpack

from ledger.records import CommandRecord
from service.eventstore import pgrows as db
from service.eventstore.pooled import Pooled
from service.eventstore.records import NewCommand


class CommandLog(Pooled):
    async def record_rejection(
        self, *, game_id: str | uuid.UUID, **command: Unpack[NewCommand]
    ) -> None:
        """Record a rejected (or 'conflict', default 'rejected') command, which appended
        nothing, on its own.

        Raises :class:`DuplicateCommand` / :class:`GameNotFound`.
        """
        command.setdefault("outcome", "rejected")
        if command["outcome"] not in ("rejected", "conflict"):
            raise ValueError("record_rejection records outcome 'rejected' or 'conflict'")
        command["first_version"] = command["last_version"] = None
        async with self._pool.acquire() as conn:
            await db.insert_command(conn, db.game_uuid(game_id), command, self._clock)

    async def find_command(
        self, game_id: str | uuid.UUID, seat: int | None, idempotency_key: str
    ) -> CommandRecord | None:
        """The command ``seat`` sent to the game under ``idempotency_key`` (no lock taken).

        Keys are scoped to (game, seat): another seat's command under the same key is not
        found (see ``migrations/0002_idempotency_per_seat.sql``)."""
        r = await self._pool.fetchrow(db.FIND_COMMAND, db.game_uuid(game_id), seat, idempotency_key)
        return None if r is None else db.command_record(r)

    async def settled(self) -> None:
        """Returns once everything the server has committed so far is as safe as a commit of
        this process's own. A commit waits for the synchronous standby (PostgreSQL with
        ``synchronous_standby_names``, a Patroni cluster in synchronous mode) — but a commit
        whose wait was cut short (its client gave up, a cancel) is already visible on the
        primary without being on the standby: its client was told 503 "may have been
        recorded", and the command, found by its key, must not be answered 200 until it is
        replicated. A transaction that writes WAL (here a transactional logical-decoding
        message: no table is touched, and any user may send one) waits at its commit for the
        standby to have everything up to it; a transaction that only takes an id writes no WAL
        before its commit record, and PostgreSQL then does not wait. Without a synchronous
        standby this is one small commit."""
        await self._pool.execute("SELECT pg_logical_emit_message(true, 'manifest', 'settled')")

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
