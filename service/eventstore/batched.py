"""The appends made in the same turn of the event loop, sent as one statement.

Each append is its own compare-and-set (:mod:`service.eventstore.optimistic`); what several
requests decided in one loop turn goes to PostgreSQL as one statement in one transaction, so the
round trip, the backend's wake-up and the commit are paid once for all of them (group commit).
Under load a loop turn holds several, normally of different games (two of one game in a batch
move it once: the other is sent alone, finds the game moved on and is decided again); alone, an
append is sent by itself as before.

The batch statement never waits for a game's row lock: it takes the lock its ``UPDATE`` would
take (``FOR NO KEY UPDATE``, which leaves foreign-key checks of other writers free) with
``SKIP LOCKED``, so one game whose row is held (a slow writer, another instance) never holds up
the other games of its batch. A member whose Idempotency-Key is already recorded is left out
of it too, so a client repeating a key cannot undo other clients' batches. Every append the
batch did not make is answered ``False``, and its caller sends it alone, with the single
statement's exact meaning (wait for the lock, compare, report the duplicate); its answer then
comes after the batch's. Not made: its game moved on, its row was locked, its key is taken, or
a member's data broke a constraint — a key recorded while the batch ran (the batch waits for
that one insert, which commits itself), and the whole statement is undone.
Any other failure (PostgreSQL gone, a timeout) is every member's, answered as it would have
been alone (503: "nothing was recorded" after a statement or lock timeout, "it may have been
recorded" when the connection was lost). One error object is raised to every member.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any, NamedTuple

import asyncpg  # type: ignore[import-untyped]
from prometheus_client import Counter

BATCHES = Counter(
    "manifest_append_batches_total", "Batch statements sent (each with two or more appends)"
)
BATCHED = Counter(
    "manifest_appends_batched_total",
    "Game commands that went in a batch, by outcome: appended by it, sent alone after it "
    "(game moved on, row locked, a member's data refused), failed with it",
    ["outcome"],
)
_APPENDED, _ALONE, _FAILED = (BATCHED.labels(o) for o in ("appended", "sent_alone", "failed"))


class Append(NamedTuple):
    """The arguments of one append, in the order of the single statement's parameters
    (``service.eventstore.optimistic``): ``pool.fetchrow(_APPEND, *append)``. JSON as text."""

    game_id: str
    version: int
    new_version: int
    new_head: bytes
    at: datetime
    status: str | None
    result: str | None
    head: bytes
    seat: int
    command_id: str
    versions: list[int]  # then one entry per event
    types: list[str]
    data: list[str]
    prev_hashes: list[bytes]
    hashes: list[bytes]
    idempotency_key: str | None
    command_type: str
    body: str
    received_at: datetime
    response: str
    publics: list[str | None]


_APPEND_MANY = """
WITH batch AS (
    SELECT * FROM unnest($1::int[], $2::uuid[], $3::int[], $4::bytea[], $5::int[], $6::bytea[],
                         $7::timestamptz[], $8::text[], $9::text[], $10::int[], $11::uuid[],
                         $12::text[], $13::text[], $14::text[], $15::timestamptz[], $16::text[])
           AS b(i, id, v, h, nv, nh, at, st, res, seat, cid, ikey, ctype, body, recv, resp)
), locked AS (
    SELECT b.* FROM batch b JOIN games g ON g.id = b.id AND g.version = b.v AND g.head = b.h
     WHERE b.ikey IS NULL OR NOT EXISTS (
           SELECT 1 FROM commands c
            WHERE c.game_id = b.id AND coalesce(c.seat, -1) = coalesce(b.seat, -1)
              AND c.idempotency_key = b.ikey)
       FOR NO KEY UPDATE OF g SKIP LOCKED
), moved AS (
    UPDATE games g
       SET version = l.nv, head = l.nh, updated_at = l.at,
           status = coalesce(l.st, g.status), result = coalesce(l.res::jsonb, g.result)
      FROM locked l
     WHERE g.id = l.id AND g.version = l.v AND g.head = l.h
 RETURNING l.*
), appended AS (
    INSERT INTO events (game_id, version, type, data, seat, command_id, recorded_at, prev_hash,
                        hash, public)
    SELECT m.id, u.v, u.t, u.d::jsonb, m.seat, m.cid, m.at, u.p, u.h, u.c::jsonb
      FROM moved m
      JOIN unnest($17::int[], $18::int[], $19::text[], $20::text[], $21::bytea[], $22::bytea[],
                  $23::text[]) AS u(i, v, t, d, p, h, c) ON u.i = m.i
    RETURNING 1
), recorded AS (
    INSERT INTO commands (id, game_id, seat, idempotency_key, type, body, received_at, outcome,
                          first_version, last_version, response)
    SELECT m.cid, m.id, m.seat, m.ikey, m.ctype, m.body::jsonb, m.recv, 'accepted', m.v + 1,
           m.nv, m.resp::jsonb
      FROM moved m
    RETURNING 1
)
SELECT array(SELECT i FROM moved) AS moved,
       (SELECT count(*) FROM appended) AS appended,
       (SELECT count(*) FROM recorded) AS recorded
"""


def _columns(batch: list[Append]) -> list[list[Any]]:
    """The batch statement's 23 array parameters: 16 per append, 7 per event."""
    cols: list[list[Any]] = [[] for _ in range(23)]
    for i, a in enumerate(batch):
        per_append = (
            i,
            a.game_id,
            a.version,
            a.head,
            a.new_version,
            a.new_head,
            a.at,
            a.status,
            a.result,
            a.seat,
            a.command_id,
            a.idempotency_key,
            a.command_type,
            a.body,
            a.received_at,
            a.response,
        )
        for col, value in zip(cols[:16], per_append, strict=True):
            col.append(value)
        events = zip(a.versions, a.types, a.data, a.prev_hashes, a.hashes, a.publics, strict=True)
        for event in events:
            for col, value in zip(cols[16:], (i, *event), strict=True):
                col.append(value)
    return cols


class Appends:
    """Collects the appends of one loop turn (at most ``most`` at once) and sends them as one
    statement on ``pool``. ``most`` = 1: every append is sent alone."""

    def __init__(self, pool: Any, most: int) -> None:
        self._pool = pool
        self._most = most
        self._waiting: list[tuple[Append, asyncio.Future[bool]]] = []
        self._tasks: set[asyncio.Task[None]] = set()

    async def append(self, args: Append) -> bool:
        """True when ``args`` was appended with others; False when the caller must send it
        alone (it was alone in its turn, or the batch did not make it)."""
        if self._most <= 1:
            return False
        loop = asyncio.get_running_loop()
        future: asyncio.Future[bool] = loop.create_future()
        if not self._waiting:
            loop.call_soon(self._flush)
        self._waiting.append((args, future))
        if len(self._waiting) >= self._most:
            self._flush()
        return await future

    def _flush(self) -> None:
        # An append whose request gave up before it was sent is not sent (as alone).
        batch = [(args, future) for args, future in self._waiting if not future.done()]
        self._waiting = []
        if len(batch) <= 1:
            for _, future in batch:
                _settle(future, False)
            return
        try:
            task = asyncio.get_running_loop().create_task(self._send(batch))
        except RuntimeError as error:  # the loop is closing
            _fail(batch, error)
            return
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(self, batch: list[tuple[Append, asyncio.Future[bool]]]) -> None:
        BATCHES.inc()
        try:
            made = await self._made([args for args, _ in batch])
        except asyncio.CancelledError:
            # Only at shutdown: the members' requests still get their 503 ("may have been
            # recorded"), not a cancellation that no handler answers.
            _fail(batch, ConnectionError("the statement of a batch of appends was cancelled"))
            raise
        except BaseException as error:
            _fail(batch, error)
            if not isinstance(error, Exception):
                raise
            return
        _APPENDED.inc(sum(made))
        for (_, future), appended in zip(batch, made, strict=True):
            if not appended and not future.done():
                _ALONE.inc()
            _settle(future, appended)

    async def _made(self, batch: list[Append]) -> list[bool]:
        """Which members the batch statement appended."""
        try:
            row = await self._pool.fetchrow(_APPEND_MANY, *_columns(batch))
        except (asyncpg.IntegrityConstraintViolationError, asyncpg.DataError):
            return [False] * len(batch)  # nothing written: each is sent alone, told why there
        moved = set(row["moved"])
        return [i in moved for i in range(len(batch))]


def _fail(batch: list[tuple[Append, asyncio.Future[bool]]], error: BaseException) -> None:
    for _, future in batch:
        if not future.done():  # its request may have given up meanwhile
            _FAILED.inc()
            future.set_exception(error)


def _settle(future: asyncio.Future[bool], appended: bool) -> None:
    if not future.done():  # its request may have given up (cancelled) meanwhile
        future.set_result(appended)
