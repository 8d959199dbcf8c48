"""The one-statement append behind every game command (optimistic concurrency).

A command is decided on the state at a known (version, head) (:class:`AcceptedCommand`).
Appending is then a single SQL statement (``APPEND_COMMAND`` of
:mod:`service.eventstore.appending`): a compare-and-set ``UPDATE games ... WHERE version = $v
AND head = $h`` whose
``RETURNING`` row feeds the inserts of the events and of the command record — so if the game
moved on (another writer, another instance), the update matches no row and *nothing* is written,
and the caller re-reads and decides again. PostgreSQL's row lock on the update serializes
writers of one game; re-checking the WHERE clause after a wait makes the loser's update match
nothing. One round trip instead of lock, read, writes and commit.

The events arrive chained and the answer signed (:mod:`ledger`): the store computes nothing
and never calls back into the application.

A repeated ``Idempotency-Key`` violates the commands table's unique index, which aborts the
whole statement: :class:`DuplicateCommand`, nothing written, and the caller answers with the
first answer.
"""

from __future__ import annotations

from typing import Any

import asyncpg  # type: ignore[import-untyped]

from service.eventstore import pgrows as db
from service.eventstore.appending import APPEND_COMMAND, CommandAppend
from service.eventstore.batched import Appends
from service.eventstore.records import AcceptedCommand, DuplicateCommand


async def append_command(pool: Any, command: AcceptedCommand, batch: Appends | None = None) -> bool:
    """Append ``command``'s chained events after its (``version``, ``head``) and record it with
    its response, in one statement: True; False when the game is no longer at (``version``,
    ``head``) (nothing written: decide again). With ``batch``, the append goes with the others
    of its loop turn (:mod:`.batched`) and is sent alone only when the batch did not make it.
    The events are written as chained: their data must read back from ``jsonb`` as it was
    hashed — no event type holds a float (``tests/service/test_events_hold_no_float.py``)."""
    stored = command.stored
    game_id, version, head = command.game_id, command.version, command.head
    append = CommandAppend(
        game_id=game_id,
        version=version,
        head=head,
        new_version=stored[-1].version,
        new_head=stored[-1].hash,
        at=stored[0].recorded_at,
        status=command.status,
        result=None if command.result is None else db.dumps(command.result),
        seat=command.seat,
        command_id=command.command_id,
        versions=[e.version for e in stored],
        types=[e.type for e in stored],
        data=[db.dumps(e.data) for e in stored],
        prev_hashes=[e.prev_hash for e in stored],
        hashes=[e.hash for e in stored],
        publics=db.public_texts(stored),
        idempotency_key=command.idempotency_key,
        command_type=command.command_type,
        body=db.dumps(command.body),
        received_at=command.received_at,
        response=db.dumps(command.response),
    )
    if batch is not None and await batch.append(append):
        return True
    try:
        row = await pool.fetchrow(APPEND_COMMAND.sql, *APPEND_COMMAND.of(append))
    except asyncpg.UniqueViolationError as error:
        if "commands_idempotency" in str(error):
            raise DuplicateCommand(game_id, command.idempotency_key, command.command_id) from None
        return False  # (game_id, version) taken: someone appended first
    return bool(row["moved"])
