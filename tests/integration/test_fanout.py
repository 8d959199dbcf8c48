"""The process's one change subscription (:mod:`projections.fanout`) attacked directly, on a
Redis of the test's own: a change published while the connection is being re-established,
listeners cancelled at every point of subscribing, one channel left and followed again in
quick succession, many channels at once. Nothing may be missed silently and nothing may stay
behind in the channel tables or in Redis."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import redis as redis_sync
from redis.asyncio import ConnectionPool, Redis

from projections.fanout import Subscriptions
from tests.support.servers import local_redis

pytestmark = pytest.mark.integration

WAIT = 20.0


@pytest.fixture
def own_redis() -> Iterator[str]:
    with local_redis() as url:
        yield url


class Gate:
    """Connections of a pool whose ``connect()`` waits while the gate is closed (the first
    connection passes): holds a reconnection open while the test publishes."""

    def __init__(self, url: str) -> None:
        self.pool = ConnectionPool.from_url(url, socket_timeout=None, protocol=2)
        self.open = asyncio.Event()
        self.open.set()
        self.waiting = asyncio.Event()

    def __call__(self) -> Any:
        conn = self.pool.make_connection()
        connect = conn.connect

        async def gated() -> None:
            if not self.open.is_set():
                self.waiting.set()
                await self.open.wait()
            await connect()

        conn.connect = gated
        return conn


async def _numsub(url: str, channel: str) -> int:
    async with Redis.from_url(url) as r:
        return int(dict(await r.pubsub_numsub(channel)).get(channel.encode(), 0))


async def _until(condition: Any, what: str) -> None:
    async with asyncio.timeout(WAIT):
        while not await condition():
            await asyncio.sleep(0.02)
    assert await condition(), what


def _empty(subs: Subscriptions) -> bool:
    return not (subs._listeners or subs._pending or subs._confirmed)


def test_a_change_published_while_reconnecting_reaches_the_listener_as_a_re_read(
    own_redis: str,
) -> None:
    """The pub/sub connection is killed and its reconnection held open while a change is
    published (Redis drops it: nobody is subscribed). Once reconnected, the listener is
    given ``None`` — re-read, something may have been missed — before the next version, so
    a stream re-reads its document and the move made in the gap is not lost."""

    async def scenario() -> None:
        gate = Gate(own_redis)
        subs = Subscriptions(gate, timeout=2.0, connect_timeout=5.0, heartbeat=0.2)
        listener: AsyncIterator[int | None] = subs.listen("ch")
        try:
            assert await anext(listener) is None
            gate.open.clear()
            with contextlib.closing(redis_sync.Redis.from_url(own_redis)) as r:
                assert r.client_kill_filter(_type="pubsub") == 1
                await asyncio.wait_for(gate.waiting.wait(), WAIT)
                assert r.publish("ch", b"5") == 0  # heard by no one: the gap
            gate.open.set()
            assert await asyncio.wait_for(anext(listener), WAIT) is None
            async with Redis.from_url(own_redis) as r:
                await _until(lambda: _numsub_is(own_redis, "ch", 1), "not resubscribed")
                assert await r.publish("ch", b"6") == 1
            assert await asyncio.wait_for(anext(listener), WAIT) == 6
        finally:
            await listener.aclose()  # type: ignore[attr-defined]
            await subs.close()

    asyncio.run(scenario())


async def _numsub_is(url: str, channel: str, n: int) -> bool:
    return await _numsub(url, channel) == n


def test_listeners_cancelled_while_subscribing_leave_nothing_behind(own_redis: str) -> None:
    """300 listeners of 100 channels, each cancelled after a random number of loop turns
    (before, during or after its SUBSCRIBE is confirmed), and 300 more that leave after
    their first item: afterwards the channel tables are empty and Redis holds no
    subscription; a new listener of one of those channels still hears its next change."""

    async def scenario() -> None:
        conns = ConnectionPool.from_url(own_redis, socket_timeout=None, protocol=2)
        subs = Subscriptions(conns.make_connection, timeout=5.0, connect_timeout=5.0)
        rng = random.Random(7)

        async def follow(channel: str) -> None:
            listener: AsyncIterator[int | None] = subs.listen(channel)
            try:
                await anext(listener)
            finally:
                await listener.aclose()  # type: ignore[attr-defined]

        await subs.ready()
        tasks = [asyncio.create_task(follow(f"c{i % 100}")) for i in range(600)]
        for task in tasks[:300]:
            for _ in range(rng.randrange(6)):
                await asyncio.sleep(0)
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

        async def nothing_left() -> bool:
            async with Redis.from_url(own_redis) as r:
                channels = await r.pubsub_channels()
            return _empty(subs) and not channels

        try:
            await _until(nothing_left, "a cancelled or finished listener stayed subscribed")
            listener: AsyncIterator[int | None] = subs.listen("c42")
            assert await anext(listener) is None
            async with Redis.from_url(own_redis) as r:
                assert await r.publish("c42", b"9") == 1
            assert await asyncio.wait_for(anext(listener), WAIT) == 9
            await listener.aclose()  # type: ignore[attr-defined]
        finally:
            await subs.close()

    asyncio.run(scenario())


def test_a_channel_left_and_followed_again_in_quick_succession_stays_subscribed(
    own_redis: str,
) -> None:
    """A channel's last listener leaves and a new one comes at once, 200 times, with other
    listeners coming and going in between (SUBSCRIBE / UNSUBSCRIBE of one channel in quick
    succession): the last listener is subscribed in Redis (one subscriber), hears the next
    change, and leaving it leaves nothing behind."""

    async def scenario() -> None:
        conns = ConnectionPool.from_url(own_redis, socket_timeout=None, protocol=2)
        subs = Subscriptions(conns.make_connection, timeout=5.0, connect_timeout=5.0)
        try:
            for i in range(200):
                a: AsyncIterator[int | None] = subs.listen("q")
                b: AsyncIterator[int | None] = subs.listen("q")
                first, second = await asyncio.gather(anext(a), anext(b))
                assert first is None and second is None
                await a.aclose()  # type: ignore[attr-defined]
                if i % 2:
                    await b.aclose()  # type: ignore[attr-defined]
                    b = subs.listen("q")
                    assert await anext(b) is None
                if i < 199:
                    await b.aclose()  # type: ignore[attr-defined]
            assert await _numsub(own_redis, "q") == 1
            async with Redis.from_url(own_redis) as r:
                assert await r.publish("q", b"3") == 1
            assert await asyncio.wait_for(anext(b), WAIT) == 3
            await b.aclose()  # type: ignore[attr-defined]

            async def gone() -> bool:
                return _empty(subs) and await _numsub(own_redis, "q") == 0

            await _until(gone, "the last listener's channel stayed subscribed")
        finally:
            await subs.close()

    asyncio.run(scenario())
