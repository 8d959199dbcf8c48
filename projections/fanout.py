"""Change notifications fanned out inside one process: one Redis subscription for every live
stream of the process, not a connection per stream.

Each listener (one SSE stream) holds a bounded :class:`~projections.store.Mailbox`.

:class:`Subscriptions` owns one pub/sub connection to Redis (the node named by ``REDIS_URL``,
also in a cluster: a classic ``PUBLISH`` reaches every node, docs/scaling.md). Channels are
subscribed while at least one local listener wants them (reference counted) and unsubscribed
when the last one leaves. A reader task dispatches each message to the channel's mailboxes;
a supervisor pings Redis every ``heartbeat`` seconds and declares the connection lost when a
ping is not answered within ``timeout`` (a stalled Redis is found, not waited on forever).

When the connection is lost the supervisor reconnects at once and resubscribes every channel
that still has listeners; each listener is then given ``None`` ("something may have been
missed: re-read"). If that reconnection fails, every listener is failed with
:class:`~projections.store.StoreUnavailable` (its stream ends, and clients reconnect) and the
supervisor keeps retrying every ``cooldown`` seconds; meanwhile a new listener waits at most
``timeout`` for the subscription to come back, else gets ``StoreUnavailable`` (a 503 before
the stream starts). :attr:`Subscriptions.error` says why it is down (``/readyz``)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

from projections.store import MAILBOX_BOUND, Mailbox, StoreUnavailable


def _text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


class Subscriptions:
    """One process's pub/sub connection and its listeners (see the module docstring).

    ``connect()`` returns a new, unconnected redis-py ``Connection`` (with no socket timeout:
    a quiet channel is not a fault; every wait here is bounded by ``timeout`` instead)."""

    def __init__(
        self,
        connect: Callable[[], Any],
        timeout: float = 1.0,
        connect_timeout: float = 1.0,
        heartbeat: float = 5.0,
        cooldown: float = 1.0,
        bound: int = MAILBOX_BOUND,
    ) -> None:
        self._new_connection = connect
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.heartbeat = heartbeat
        self.cooldown = cooldown
        self.bound = bound
        self._outbox: asyncio.Queue[tuple[Any, ...]] | None = None
        self._listeners: dict[bytes, set[Mailbox]] = {}
        #: per channel, the futures of the SUBSCRIBEs sent and not yet confirmed, in order
        self._pending: dict[bytes, deque[asyncio.Future[None]]] = {}
        #: per channel, confirmed once Redis acknowledged its (latest) SUBSCRIBE
        self._confirmed: dict[bytes, asyncio.Future[None]] = {}
        self._up = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._ping_sent: float | None = None
        #: why the subscription is down ("" while it is up, or before it started)
        self.error = ""

    # --- state -------------------------------------------------------------------------------
    def start(self) -> None:
        if self._task is None and not self._closed:
            self._task = asyncio.get_running_loop().create_task(self._supervise())

    async def ready(self) -> None:
        """Return once the subscription is up (waiting at most ``timeout`` for it); else
        raise :class:`StoreUnavailable` naming why it is down."""
        self.start()
        if self._up.is_set():
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.timeout + self.connect_timeout):
                await self._up.wait()
        if not self._up.is_set():
            raise StoreUnavailable(
                f"redis: the change subscription is down ({self.error or 'connecting'})"
            )

    # --- listening ---------------------------------------------------------------------------
    async def listen(self, channel: str) -> AsyncIterator[int | None]:
        """``None`` once the channel is subscribed, then its versions as published; ``None``
        again after a reconnection (re-read: something may have been missed). Raises
        :class:`StoreUnavailable` when the subscription is lost for good."""
        await self.ready()
        key = channel.encode()
        box = Mailbox(self.bound)
        boxes = self._listeners.setdefault(key, set())
        first = not boxes
        boxes.add(box)
        try:
            if first:
                self._subscribe(key)
            confirmed = self._confirmed.get(key)
            if confirmed is None:  # lost while the channel was being subscribed
                raise StoreUnavailable(f"redis: the change subscription is down ({self.error})")
            if not confirmed.done():
                async with asyncio.timeout(self.timeout):
                    await asyncio.shield(confirmed)
            failure = confirmed.exception()
            if failure is not None:
                raise StoreUnavailable(f"redis: {_text(failure)}")
        except TimeoutError as error:
            self._leave(key, box)
            raise StoreUnavailable(f"redis: no answer to SUBSCRIBE ({_text(error)})") from error
        except BaseException:
            self._leave(key, box)
            raise
        try:
            yield None
            while True:
                yield await box.get()
        finally:
            self._leave(key, box)

    def _subscribe(self, key: bytes) -> None:
        """Send SUBSCRIBE for ``key``; ``_confirmed[key]`` is done when Redis answers it.
        Commands go through one ordered outbox, so a SUBSCRIBE and an UNSUBSCRIBE of one
        channel reach Redis in the order they were decided, and confirmations (which Redis
        sends in that order) are matched to their SUBSCRIBE."""
        if self._outbox is None:
            raise StoreUnavailable(f"redis: the change subscription is down ({self.error})")
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        future.add_done_callback(_consume)
        self._pending.setdefault(key, deque()).append(future)
        self._confirmed[key] = future
        self._outbox.put_nowait(("SUBSCRIBE", key))

    def _leave(self, key: bytes, box: Mailbox) -> None:
        boxes = self._listeners.get(key)
        if boxes is None:
            return
        boxes.discard(box)
        if boxes:
            return
        del self._listeners[key]
        self._confirmed.pop(key, None)
        if self._outbox is not None:
            self._outbox.put_nowait(("UNSUBSCRIBE", key))

    # --- the connection ----------------------------------------------------------------------
    async def _supervise(self) -> None:
        failures = 0
        while not self._closed:
            conn = self._new_connection()
            try:
                async with asyncio.timeout(self.connect_timeout + self.timeout):
                    await conn.connect()
                outbox: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
                self._outbox = outbox
                self._ping_sent = None
                loop = asyncio.get_running_loop()
                tasks = {loop.create_task(self._read(conn)), loop.create_task(self._write(conn))}
                try:
                    wanted = list(self._listeners)
                    for key in wanted:  # resubscribe what is still listened to
                        self._subscribe(key)
                    async with asyncio.timeout(self.timeout):
                        for key in wanted:
                            future = self._confirmed.get(key)
                            if future is not None:
                                await asyncio.shield(future)
                    self.error = ""
                    self._up.set()
                    if failures:
                        for boxes in self._listeners.values():
                            for box in boxes:
                                box.put(None)  # re-read: changes may have been missed
                    failures = 0
                    await self._watch(tasks)
                finally:
                    for task in tasks:
                        task.cancel()
                    await asyncio.gather(*tasks, return_exceptions=True)
            except asyncio.CancelledError:
                await self._drop(conn, StoreUnavailable("redis: the change subscription closed"))
                raise
            except Exception as error:  # every failure of the connection, whatever its type
                failures += 1
                self.error = _text(error)
                self._up.clear()
                if failures > 1 or not self._listeners:
                    # the reconnection failed too: every listener is told, streams end
                    await self._drop(conn, StoreUnavailable(f"redis: {self.error}"))
                    await asyncio.sleep(self.cooldown)
                else:
                    await self._drop(conn, None)  # keep the listeners: reconnect at once

    async def _watch(self, tasks: set[asyncio.Task[None]]) -> None:
        """Until the connection fails: ping every ``heartbeat`` seconds, and fail when a ping
        is not answered within ``timeout`` (a stalled Redis), or the reader or the writer
        stops."""
        tick = min(self.heartbeat, self.timeout) / 2
        last_ping = time.monotonic()
        while True:
            done, _ = await asyncio.wait(tasks, timeout=tick)
            for task in done:
                task.result()  # raises the task's error
                raise ConnectionError("the pub/sub connection closed")
            now = time.monotonic()
            if self._ping_sent is not None and now - self._ping_sent > self.timeout:
                raise TimeoutError(f"Redis did not answer a PING within {self.timeout:g} s")
            if self._ping_sent is None and now - last_ping >= self.heartbeat and self._outbox:
                last_ping = self._ping_sent = now
                self._outbox.put_nowait(("PING",))

    async def _write(self, conn: Any) -> None:
        outbox = self._outbox
        if outbox is None:
            raise RuntimeError("the change subscription's writer started before its outbox")
        while True:
            command = await outbox.get()
            async with asyncio.timeout(self.timeout):
                await conn.send_command(*command, check_health=False)

    async def _read(self, conn: Any) -> None:
        while True:
            # No timeout: the connection has none, and a quiet channel is not a fault (the
            # supervisor's pings find a dead one).
            reply = await conn.read_response(disconnect_on_error=False, push_request=True)
            self._ping_sent = None  # any answer shows Redis alive
            _dispatch(reply, self._listeners, self._pending)

    async def _drop(self, conn: Any, error: Exception | None) -> None:
        """Forget the connection; with ``error``, fail every listener. Subscriptions waiting
        for their answer fail either way (their listener's stream was not yet open)."""
        self._outbox = None
        lost = error or StoreUnavailable(f"redis: the change subscription was lost ({self.error})")
        for pending in self._pending.values():
            for future in pending:
                if not future.done():
                    future.set_exception(lost)
        self._pending.clear()
        self._confirmed.clear()
        if error is not None:
            for boxes in self._listeners.values():
                for box in boxes:
                    box.fail(error)
            self._listeners.clear()
        with contextlib.suppress(Exception):
            await conn.disconnect()

    async def close(self) -> None:
        self._closed = True
        self._up.clear()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task


def _dispatch(
    reply: Any,
    listeners: dict[bytes, set[Mailbox]],
    pending: dict[bytes, deque[asyncio.Future[None]]],
) -> None:
    """Route one reply of the pub/sub connection: a message to its channel's mailboxes, a
    subscribe confirmation to the oldest SUBSCRIBE of that channel still waiting for one."""
    if not isinstance(reply, list) or len(reply) != 3:
        return  # a PONG, an UNSUBSCRIBE's answer
    kind, channel, data = reply
    if kind == b"message":
        try:
            version = int(data)
        except ValueError:
            return
        for box in listeners.get(channel, ()):
            box.put(version)
    elif kind == b"subscribe" and channel in pending:
        waiting = pending[channel]
        future = waiting.popleft()
        if not future.done():
            future.set_result(None)
        if not waiting:
            del pending[channel]


def _consume(future: asyncio.Future[Any]) -> None:
    """Retrieve a future's exception (nobody may be waiting on it any more)."""
    if not future.cancelled():
        future.exception()
