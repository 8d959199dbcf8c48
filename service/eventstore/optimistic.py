"""The one-statement append behind every game command (optimistic concurrency).

A command is decided on the state at a known (version, head). Appending is then a single SQL
statement: a compare-and-set ``UPDATE games ... WHERE version = $v AND head = $h`` whose
``RETURNING`` row feeds the inserts of the events and of the command record — so if the game
moved on (another writer, another instance), the update matches no row and *nothing* is written,
and the caller re-reads and decides again. PostgreSQL's row lock on the update serializes
writers of one game; re-checking the WHERE clause after a wait makes the loser's update match
nothing. One round trip instead of lock, read, writes and commit.

A repeated ``Idempotency-Key`` violates the commands table's unique index, which aborts the
whole statement: :class:`DuplicateCommand`, nothing written, and the caller answers with the
first answer.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import msgspec

from service.eventstore import pgrows as db
from service.eventstore.batched import Append, Appends
from service.eventstore.chain import chain_events, utc_micro
from service.eventstore.records import DuplicateCommand, NewEvent, StoredEvent

_APPEND = """
WITH moved AS (
    UPDATE games
       SET version = $3, head = $4, updated_at = $5,
           status = coalesce($6, status), result = coalesce($7::text::jsonb, result)
     WHERE id = $1 AND version = $2 AND head = $8
 RETURNING id
), appended AS (
    INSERT INTO events (game_id, version, type, data, seat, command_id, recorded_at, prev_hash,
                        hash, public)
    SELECT moved.id, u.v, u.t, u.d::jsonb, $9::int, $10::uuid, $5::timestamptz, u.p, u.h,
           u.c::jsonb
      FROM moved, unnest($11::int[], $12::text[], $13::text[], $14::bytea[], $15::bytea[],
                         $21::text[])
           AS u(v, t, d, p, h, c)
    RETURNING 1
), recorded AS (
    INSERT INTO commands (id, game_id, seat, idempotency_key, type, body, received_at, outcome,
                          first_version, last_version, response)
    SELECT $10::uuid, moved.id, $9::int, $16, $17, $18::text::jsonb, $19::timestamptz,
           'accepted', $2 + 1, $3, $20::text::jsonb
      FROM moved
    RETURNING 1
)
SELECT (SELECT count(*) FROM moved) AS moved,
       (SELECT count(*) FROM appended) AS appended,
       (SELECT count(*) FROM recorded) AS recorded
"""


class _Float(Exception):
    pass


def _refuse_float(text: str) -> Any:
    raise _Float


#: Reads JSON back and stops at the first float (the walk runs in msgspec's C parser: a
#: recursive walk in Python cost ~1 % of a worker's CPU under load).
_FLOAT_FINDER = msgspec.json.Decoder(float_hook=_refuse_float)


def _has_float(value: Any) -> bool:
    try:
        _FLOAT_FINDER.decode(msgspec.json.encode(value))
    except _Float:
        return True
    return False


async def append_command(
    pool: Any,
    *,
    game_id: str,
    version: int,
    head: bytes,
    events: list[NewEvent],
    seat: int,
    command_id: str,
    at: datetime,
    status: str | None,
    result: Any,
    idempotency_key: str | None,
    command_type: str,
    body: Any,
    received_at: datetime,
    respond: Callable[[list[StoredEvent]], Any],
    batch: Appends | None = None,
) -> tuple[list[StoredEvent], Any] | None:
    """Append ``events`` after (``version``, ``head``) and record the command, in one
    statement. Returns the stored events and the response recorded with them, or None when the
    game is no longer at (``version``, ``head``). ``respond(stored)`` builds the response.
    With ``batch``, the append goes with the others of its loop turn (:mod:`.batched`) and is
    sent alone only when the batch did not make it."""
    at = utc_micro(at)
    if any(_has_float(e.data) for e in events):
        # jsonb may rewrite a float's digits: hash exactly what will read back.
        publics = db.public_texts(events)
        async with pool.acquire() as conn:
            texts = await conn.fetchval(
                db.NORMALIZE_JSON,
                [db.dumps(e.data) for e in events] + [p or "null" for p in publics],
            )
        n = len(events)
        events = [
            NewEvent(e.type, msgspec.json.decode(t), db.loads(p) if q else None)
            for e, t, p, q in zip(events, texts[:n], texts[n:], publics, strict=True)
        ]
    stored = chain_events(game_id, version, head, events, seat, command_id, at)
    response = respond(stored)
    args = Append(
        game_id=game_id,  # asyncpg encodes a UUID from its text: no UUID object to build
        version=version,
        new_version=stored[-1].version,
        new_head=stored[-1].hash,
        at=at,
        status=status,
        result=None if result is None else db.dumps(result),
        head=head,
        seat=seat,
        command_id=command_id,
        versions=[e.version for e in stored],
        types=[e.type for e in stored],
        data=[db.dumps(e.data) for e in stored],
        prev_hashes=[e.prev_hash for e in stored],
        hashes=[e.hash for e in stored],
        idempotency_key=idempotency_key,
        command_type=command_type,
        body=db.dumps(body),
        received_at=received_at,
        response=db.dumps(response),
        publics=db.public_texts(stored),
    )
    if batch is not None and await batch.append(args):
        return stored, response
    try:
        row = await pool.fetchrow(_APPEND, *args)
    except asyncpg.UniqueViolationError as error:
        if "commands_idempotency" in str(error):
            raise DuplicateCommand(game_id, idempotency_key, command_id) from None
        return None  # (game_id, version) taken: someone appended first
    if row["moved"] == 0:
        return None
    return stored, response
