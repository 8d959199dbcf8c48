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
from typing import Any

import asyncpg  # type: ignore[import-untyped]
from prometheus_client import Counter

from service.eventstore.appending import APPEND_MANY, CommandAppend, batch_arguments

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


class Appends:
    """Collects the appends of one loop turn (at most ``most`` at once) and sends them as one
    statement on ``pool``. ``most`` = 1: every append is sent alone."""

    def __init__(self, pool: Any, most: int) -> None:
        self._pool = pool
        self._most = most
        self._waiting: list[tuple[CommandAppend, asyncio.Future[bool]]] = []
        self._tasks: set[asyncio.Task[None]] = set()

    async def append(self, args: CommandAppend) -> bool:
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

    async def _send(self, batch: list[tuple[CommandAppend, asyncio.Future[bool]]]) -> None:
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

    async def _made(self, batch: list[CommandAppend]) -> list[bool]:
        """Which members the batch statement appended."""
        try:
            row = await self._pool.fetchrow(APPEND_MANY.sql, *batch_arguments(batch))
        except (asyncpg.IntegrityConstraintViolationError, asyncpg.DataError):
            return [False] * len(batch)  # nothing written: each is sent alone, told why there
        moved = set(row["moved"])
        return [i in moved for i in range(len(batch))]


def _fail(batch: list[tuple[CommandAppend, asyncio.Future[bool]]], error: BaseException) -> None:
    for _, future in batch:
        if not future.done():  # its request may have given up meanwhile
            _FAILED.inc()
            future.set_exception(error)


def _settle(future: asyncio.Future[bool], appended: bool) -> None:
    if not future.done():  # its request may have given up (cancelled) meanwhile
        future.set_result(appended)
