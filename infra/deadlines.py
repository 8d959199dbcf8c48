"""Coarse deadlines: bound a block of a task by a timeout, checked a few times a second.

``asyncio.timeout`` arms a loop timer for every block it bounds and disarms it on the way out:
~4 µs of CPU per block on uvloop, and a move passes through several (a pool connection per
statement, the Redis script), for bounds of seconds that almost never fire (replacing them
took 4 % off the server's CPU per move, alternating A/B: docs/scaling.md). :class:`Deadlines`
keeps the blocks in flight in a dict instead and checks them from *one* loop timer per
``tick`` (only while some block is in flight), cancelling a task whose deadline has passed. A
bound therefore fires between ``seconds`` and ``seconds + tick`` after its block began — the
precision of a limit measured in seconds.

Inside the block the expiry is what ``asyncio.timeout`` makes of it: the task is cancelled, and
the block raises :class:`TimeoutError` (unless the task was also cancelled from elsewhere: then
the cancellation goes on). Bounds nest as ``asyncio.timeout`` does.

Its users are the Redis store (``projections.redis_store``) and the PostgreSQL pool
(:mod:`infra.pool`), on every call and acquire. Elsewhere — a bound that runs rarely (the
readiness probes, the live streams' fan-out) — ``asyncio.timeout`` is used as it is: the
timer it arms costs nothing there, and a block bounded by it fires exactly on time.
"""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Any

#: Seconds between two checks of the deadlines in flight (a bound fires at most this late).
TICK = 0.05


class Deadlines:
    """The deadlines of the blocks in flight on one event loop (see the module)."""

    def __init__(self, tick: float = TICK) -> None:
        self.tick = tick
        self._loop: asyncio.AbstractEventLoop | None = None
        self._open: dict[int, Bound] = {}
        self._timer: asyncio.TimerHandle | None = None

    def within(self, seconds: float) -> Bound:
        """A block (``with deadlines.within(s): ...``) of the current task bounded by
        ``seconds``: past it, the task is cancelled and the block raises TimeoutError."""
        return Bound(self, seconds)

    def _enter(self, bound: Bound) -> None:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # first use, or a new loop (tests): start afresh
            self._loop, self._open, self._timer = loop, {}, None
        bound.deadline = loop.time() + bound.seconds
        self._open[id(bound)] = bound
        if self._timer is None:
            self._timer = loop.call_later(self.tick, self._check)

    def _exit(self, bound: Bound) -> None:
        self._open.pop(id(bound), None)

    def _check(self) -> None:
        loop = self._loop
        if loop is None:
            self._timer = None
            return
        now = loop.time()
        for key, bound in list(self._open.items()):
            try:
                task = bound.task
                if task.done():  # abandoned without leaving its block: nothing to bound
                    del self._open[key]
                elif not bound.fired and bound.deadline <= now:
                    bound.fired = True
                    task.cancel()
            except Exception as error:  # one bad bound must not unwatch the others
                self._open.pop(key, None)
                loop.call_exception_handler(
                    {"message": "a deadline could not be checked", "exception": error}
                )
        self._timer = loop.call_later(self.tick, self._check) if self._open else None


class Bound:
    """One bounded block (made by :meth:`Deadlines.within`)."""

    __slots__ = ("_cancelling", "deadline", "fired", "owner", "seconds", "task")

    def __init__(self, owner: Deadlines, seconds: float) -> None:
        self.owner = owner
        self.seconds = seconds
        self.deadline = 0.0
        self.fired = False
        self._cancelling = 0

    def __enter__(self) -> Bound:
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a deadline bounds a block of a task")
        self.task: asyncio.Task[Any] = task
        self._cancelling = task.cancelling()
        self.owner._enter(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.owner._exit(self)
        if not self.fired:
            return
        # As asyncio.timeout: the cancellation it asked for is taken back even when the block
        # swallowed it, and becomes TimeoutError unless someone else cancelled the task too.
        if self.task.uncancel() <= self._cancelling and exc_type is asyncio.CancelledError:
            raise TimeoutError(f"no answer within {self.seconds:g} s") from exc
