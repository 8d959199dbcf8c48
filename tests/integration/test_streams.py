"""Live streams (``GET /v1/games/{id}/stream``) under load and attack (issue 25), against the
real server, PostgreSQL and a Redis of the test's own (its connections are counted, its
pub/sub connection killed and its client limit lowered — never done to the shared Redis).

- Idle anonymous streams, more than the 100 connections of a redis-py pool, cost the server
  one Redis connection in all (one subscription per process), and a seat still opens its own
  game's stream and hears the next move.
- The caps: per client 429 ``rate.limited``, per process 503 ``service.unavailable``, both with
  ``Retry-After``, never a 500; a seat's stream of its own game takes the reserved slots.
- ``/readyz`` names a broken change subscription; a killed pub/sub connection is reconnected
  and resubscribed without ending the streams.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis as redis_sync

from projections.redis_store import CHANGES_CLIENT_NAME
from tests.support.faulty import RedisServer
from tests.support.servers import local_redis

from .apihelp import assert_problem, auth, bot_step, create_started, tokens_of
from .historyhelp import sse_messages
from .serverproc import ServerProcess

pytestmark = pytest.mark.integration

WAIT = 20.0  # generous: the machine is shared


@pytest.fixture
def own_redis() -> Iterator[str]:
    with local_redis() as url:
        yield url


def _redis(url: str) -> redis_sync.Redis:
    return redis_sync.Redis.from_url(url)


def _server(fresh_database: str, redis_url: str, **env: str) -> ServerProcess:
    return ServerProcess(fresh_database, redis_url, **env)


def _clients(url: str) -> list[dict[str, Any]]:
    with contextlib.closing(_redis(url)) as r:
        return list(r.client_list())


async def _wait(condition: Any, what: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not await condition():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.05)


class Stream:
    """One open SSE stream and its parsed messages."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.messages = sse_messages(response.aiter_lines())

    async def next(self, timeout: float = WAIT) -> dict[str, Any]:
        message = await asyncio.wait_for(anext(self.messages), timeout)
        assert message["event"] == "change", message
        doc: dict[str, Any] = json.loads(message["data"])
        return doc


async def open_stream(
    stack: contextlib.AsyncExitStack, client: httpx.AsyncClient, game_id: str, token: str | None
) -> Stream | httpx.Response:
    """A 200 stream that delivered its first document, or the refusal (read whole)."""
    response = await stack.enter_async_context(
        client.stream("GET", f"/v1/games/{game_id}/stream", headers=auth(token))
    )
    if response.status_code != 200:
        await response.aread()
        return response
    stream = Stream(response)
    # The stack holds the parser: a Stream dropped by the test would otherwise be collected,
    # and closing its generators closes the connection (the server frees the slot).
    stack.push_async_callback(stream.messages.aclose)  # type: ignore[attr-defined]
    await stream.next()
    return stream


# --- 1. many idle streams, one Redis connection --------------------------------------------
def test_many_idle_streams_take_one_redis_connection_and_a_seat_still_follows_its_game(
    fresh_database: str, own_redis: str
) -> None:
    """150 idle anonymous streams of one game (more than the 100 connections a redis-py pool
    allowed: each stream used to hold one) hold one ``manifest-changes`` pub/sub connection in
    all, and the server's Redis connections stay far below the streams' count; then a seat of
    another game opens its stream (200) and hears the next move."""
    server = _server(
        fresh_database,
        own_redis,
        MANIFEST_STREAMS_PER_CLIENT="200",  # 150 streams from one address (127.0.0.1)
        MANIFEST_STREAMS_PER_PROCESS="400",
        MANIFEST_STREAMS_SEAT_RESERVE="100",
    )
    server.start()
    try:
        asyncio.run(_many_idle_streams(server, own_redis))
    finally:
        server.close()


async def _many_idle_streams(server: ServerProcess, redis_url: str) -> None:
    limits = httpx.Limits(max_connections=400, max_keepalive_connections=400)
    async with (
        server.async_client(limits=limits) as client,
        contextlib.AsyncExitStack() as stack,
    ):
        watched = await create_started(client)
        played = await create_started(client)
        streams: list[Stream] = []

        async def open_more(n: int) -> None:
            for i in range(0, n, 25):
                batch = await asyncio.gather(
                    *(
                        open_stream(stack, client, watched["id"], None)
                        for _ in range(min(25, n - i))
                    )
                )
                for s in batch:
                    assert isinstance(s, Stream), (s.status_code, s.text)  # type: ignore[union-attr]
                    streams.append(s)

        await open_more(25)
        assert len(_pubsub(redis_url)) == 1
        await open_more(125)
        assert len(streams) == 150
        clients = _clients(redis_url)
        # One pub/sub connection for the 150 streams, subscribed to one channel (one game).
        pubsub = _pubsub(redis_url)
        assert [(c["name"], c["sub"]) for c in pubsub] == [(CHANGES_CLIENT_NAME, "1")], pubsub
        # The rest is the command pool, which grows with requests in flight at once (25
        # streams opened together, each reading the document), not with open streams: before,
        # each open stream held a connection of its own (150 more).
        assert len(clients) < 60, len(clients)

        # The seat of another game: its stream opens and hears its next move.
        tokens = tokens_of(played)
        seat = await open_stream(stack, client, played["id"], tokens[0])
        assert isinstance(seat, Stream), seat.text  # type: ignore[union-attr]
        r = await bot_step(client, played["id"], tokens, random.Random(5))
        assert r is not None and r.status_code == 200, r and r.text
        doc = await seat.next()
        assert doc["version"] == r.json()["version"]
        # ... and every idle stream of the watched game still hears its moves.
        r = await bot_step(client, watched["id"], tokens_of(watched), random.Random(6))
        assert r is not None and r.status_code == 200, r and r.text
        heard = await asyncio.gather(*(s.next() for s in streams))
        assert {d["version"] for d in heard} == {r.json()["version"]}
        assert int(_clients_named(redis_url)[0]["sub"]) == 2


def _clients_named(url: str) -> list[dict[str, Any]]:
    return [c for c in _clients(url) if c.get("name") == CHANGES_CLIENT_NAME]


def _pubsub(url: str) -> list[dict[str, Any]]:
    """The connections in pub/sub mode (flag ``P``)."""
    return [c for c in _clients(url) if "P" in c.get("flags", "")]


# --- 2. the caps -----------------------------------------------------------------------------
def test_stream_caps_answer_429_and_503_with_retry_after_and_keep_seats_room(
    fresh_database: str, redis_url: str
) -> None:
    """Per client 2, per process 5 with 2 reserved for seats (spectators stop at 3). Three
    client addresses (127.0.0.1-3): the third spectator stream of one address is 429
    ``rate.limited``; the fourth spectator stream of the process is 503; a seat of the game
    still opens two streams (the reserve, and not counted against its address), its third is
    429 (per token), the other seat's is 503 (the process is full); every refusal carries
    ``Retry-After``; none is a 500. A closed stream gives its slot back."""
    server = _server(
        fresh_database,
        redis_url,
        MANIFEST_STREAMS_PER_CLIENT="2",
        MANIFEST_STREAMS_PER_PROCESS="5",
        MANIFEST_STREAMS_SEAT_RESERVE="2",
        MANIFEST_RETRY_AFTER="3",
    )
    server.start()
    try:
        asyncio.run(_caps(server))
    finally:
        server.close()


def _from(server: ServerProcess, address: str) -> httpx.AsyncClient:
    transport = httpx.AsyncHTTPTransport(local_address=address)
    return httpx.AsyncClient(base_url=server.url, timeout=30.0, transport=transport)


def _refused(answer: Stream | httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert isinstance(answer, httpx.Response), "a stream opened past a cap"
    body = assert_problem(answer, status, code)
    assert answer.headers["retry-after"] == "3", answer.headers
    return body


async def _caps(server: ServerProcess) -> None:
    async with (
        _from(server, "127.0.0.1") as a,
        _from(server, "127.0.0.2") as b,
        _from(server, "127.0.0.3") as c,
    ):
        game = await create_started(a)
        gid, tokens = game["id"], tokens_of(game)
        async with contextlib.AsyncExitStack() as keep:
            first_a = contextlib.AsyncExitStack()
            await keep.enter_async_context(first_a)
            assert isinstance(await open_stream(first_a, a, gid, None), Stream)
            assert isinstance(await open_stream(keep, a, gid, None), Stream)
            body = _refused(await open_stream(keep, a, gid, None), 429, "rate.limited")
            assert body["quota"] == "streams"
            assert isinstance(await open_stream(keep, b, gid, None), Stream)  # 3 spectators
            body = _refused(await open_stream(keep, c, gid, None), 503, "service.unavailable")
            assert body["limit"] == "streams"
            # Seats of the game, from the address already at its cap: the reserve is theirs.
            seat = await open_stream(keep, a, gid, tokens[0])
            assert isinstance(seat, Stream)
            assert isinstance(await open_stream(keep, a, gid, tokens[0]), Stream)
            _refused(await open_stream(keep, a, gid, tokens[0]), 429, "rate.limited")
            _refused(await open_stream(keep, c, gid, tokens[1]), 503, "service.unavailable")
            # A closed stream gives its slot back (once the server sees the client leave).
            await first_a.aclose()

            async def reopened() -> bool:
                answer = await open_stream(keep, c, gid, None)
                if isinstance(answer, Stream):
                    return True
                _refused(answer, 503, "service.unavailable")
                return False

            await _wait(reopened, "a closed stream's slot was never given back")
            _refused(await open_stream(keep, c, gid, tokens[1]), 503, "service.unavailable")
            # The open streams still deliver: a move reaches the seat's stream.
            move = await bot_step(a, gid, tokens, random.Random(4))
            assert move is not None and move.status_code == 200, move and move.text
            assert (await seat.next())["version"] == move.json()["version"]
            metrics = (await a.get("/metrics")).text
            assert 'manifest_streams_open{kind="seat"} 2.0' in metrics, metrics
            assert 'manifest_streams_open{kind="spectator"} 3.0' in metrics, metrics
            refused = re.search(r'manifest_streams_refused_total\{cap="client"\} (\S+)', metrics)
            assert refused is not None and float(refused.group(1)) == 2.0, metrics


def test_opening_streams_has_its_own_quota_not_the_reads_one(
    fresh_database: str, redis_url: str
) -> None:
    """``MANIFEST_QUOTA_STREAMS`` 3 and ``MANIFEST_QUOTA_READS`` 2 per minute: three streams
    open from one address (more than the reads quota), the fourth is 429 ``quota: "streams"``
    with ``Retry-After``; a seat's stream still opens (counted against its token, not the
    address); and the address's reads quota is untouched: two reads answer 200, the third 429
    ``quota: "reads"``."""
    server = _server(
        fresh_database, redis_url, MANIFEST_QUOTA_STREAMS="3", MANIFEST_QUOTA_READS="2"
    )
    server.start()
    try:
        asyncio.run(_stream_quota(server))
    finally:
        server.close()


async def _stream_quota(server: ServerProcess) -> None:
    async with server.async_client() as client, contextlib.AsyncExitStack() as keep:
        game = await create_started(client)
        gid, tokens = game["id"], tokens_of(game)
        for _ in range(3):
            assert isinstance(await open_stream(keep, client, gid, None), Stream)
        refused = await open_stream(keep, client, gid, None)
        assert isinstance(refused, httpx.Response)
        assert assert_problem(refused, 429, "rate.limited")["quota"] == "streams"
        assert "retry-after" in refused.headers
        assert isinstance(await open_stream(keep, client, gid, tokens[0]), Stream)
        for _ in range(2):
            assert (await client.get(f"/v1/games/{gid}/events")).status_code == 200
        r = await client.get(f"/v1/games/{gid}/events")
        assert assert_problem(r, 429, "rate.limited")["quota"] == "reads"


# --- 3. readyz and a broken subscription ---------------------------------------------------
def test_readyz_names_a_broken_change_subscription_and_streams_come_back(
    fresh_database: str, own_redis: str
) -> None:
    """The pub/sub connection killed (``CLIENT KILL TYPE pubsub``): it is reconnected and
    resubscribed, the open stream stays open and hears the next move. Then killed while Redis
    takes no new connection (``maxclients`` reached): the open stream ends, ``/readyz`` is 503
    naming ``streams`` and why, and a new
    stream is 503 ``service.unavailable`` with ``Retry-After``. With room again, ``/readyz`` is
    200 and a new stream opens and hears a move."""
    server = _server(
        fresh_database,
        own_redis,
        MANIFEST_STREAM_HEARTBEAT="0.5",
        MANIFEST_REDIS_TIMEOUT="0.5",
        MANIFEST_PROJECTION_LAG="60",
    )
    server.start()
    try:
        asyncio.run(_broken_subscription(server, own_redis))
    finally:
        server.close()


async def _readyz(client: httpx.AsyncClient) -> tuple[int, dict[str, Any]]:
    r = await client.get("/readyz")
    return r.status_code, r.json()["checks"]


async def _broken_subscription(server: ServerProcess, redis_url: str) -> None:
    rng = random.Random(8)
    r = _redis(redis_url)
    async with server.async_client() as client, contextlib.AsyncExitStack() as stack:
        game = await create_started(client)
        gid, tokens = game["id"], tokens_of(game)
        status, checks = await _readyz(client)
        assert status == 200 and checks["streams"]["ok"], checks
        stream = await open_stream(stack, client, gid, tokens[0])
        assert isinstance(stream, Stream)

        # 1. killed, reconnected at once: the stream goes on.
        assert r.client_kill_filter(_type="pubsub") == 1

        async def resubscribed() -> bool:
            named = _clients_named(redis_url)
            return len(named) == 1 and named[0]["sub"] == "1"

        await _wait(resubscribed, "the subscription was not resubscribed")
        move = await bot_step(client, gid, tokens, rng)
        assert move is not None and move.status_code == 200, move and move.text
        assert (await stream.next())["version"] == move.json()["version"]

        # 2. killed while Redis takes no new connection: streams cannot be served.
        r.config_set("maxclients", 1)  # below what is connected: no new one is accepted
        try:
            assert r.client_kill_filter(_type="pubsub") == 1
            with pytest.raises((StopAsyncIteration, httpx.HTTPError)):
                await stream.next()  # the open stream ends

            async def streams_down() -> bool:
                status, checks = await _readyz(client)
                return status == 503 and not checks["streams"]["ok"]

            await _wait(streams_down, "/readyz did not name the broken subscription")
            status, checks = await _readyz(client)
            assert "change subscription" in checks["streams"]["error"], checks
            refused = await open_stream(stack, client, gid, tokens[0])
            assert isinstance(refused, httpx.Response)
            assert_problem(refused, 503, "service.unavailable")
            assert "retry-after" in refused.headers
        finally:
            r.config_set("maxclients", 10000)

        async def ready() -> bool:
            return (await _readyz(client))[0] == 200

        await _wait(ready, "/readyz did not recover")
        again = await open_stream(stack, client, gid, tokens[1])
        assert isinstance(again, Stream)
        move = await bot_step(client, gid, tokens, rng)
        assert move is not None and move.status_code == 200, move and move.text
        assert (await again.next())["version"] == move.json()["version"]
    r.close()


# --- 4. a stalled Redis ---------------------------------------------------------------------
def test_a_stalled_redis_ends_open_streams_and_readyz_names_them(fresh_database: str) -> None:
    """Redis stopped (SIGSTOP: connections stay open, nothing answers). The change
    subscription's ping goes unanswered, so the open stream ends (not held silent forever)
    and ``/readyz`` names ``streams``; resumed, a new stream opens and hears a move."""
    redis = RedisServer().start()
    server = _server(
        fresh_database,
        redis.url,
        MANIFEST_STREAM_HEARTBEAT="0.5",
        MANIFEST_REDIS_TIMEOUT="0.5",
    )
    try:
        server.start()
        asyncio.run(_stalled(server, redis))
    finally:
        redis.resume()
        server.close()
        redis.close()


async def _stalled(server: ServerProcess, redis: RedisServer) -> None:
    rng = random.Random(9)
    async with server.async_client() as client, contextlib.AsyncExitStack() as stack:
        game = await create_started(client)
        gid, tokens = game["id"], tokens_of(game)
        stream = await open_stream(stack, client, gid, None)
        assert isinstance(stream, Stream)
        redis.pause()
        try:
            started = time.monotonic()
            with pytest.raises((StopAsyncIteration, httpx.HTTPError)):
                await stream.next()
            assert time.monotonic() - started < WAIT

            async def streams_down() -> bool:
                status, checks = await _readyz(client)
                return status == 503 and not checks["streams"]["ok"]

            await _wait(streams_down, "/readyz did not name the stalled subscription")
        finally:
            redis.resume()

        async def ready() -> bool:
            return (await _readyz(client))[0] == 200

        await _wait(ready, "/readyz did not recover")
        again = await open_stream(stack, client, gid, tokens[0])
        assert isinstance(again, Stream)
        move = await bot_step(client, gid, tokens, rng)
        assert move is not None and move.status_code == 200, move and move.text
        assert (await again.next())["version"] == move.json()["version"]


# --- keep-alive ------------------------------------------------------------------------------
def test_a_quiet_stream_sends_keep_alive_comments_and_still_hears_the_next_move(
    fresh_database: str, redis_url: str
) -> None:
    """With ``MANIFEST_STREAM_KEEPALIVE`` 0.2 s, an open stream of a game nobody moves sends
    ``: keep-alive`` comments (a proxy's idle timeout would otherwise cut it, and a client that
    vanished would hold its slot until the next move); the move made after several of them still
    reaches the stream as its next ``change`` (review of issue 25)."""
    server = _server(fresh_database, redis_url, MANIFEST_STREAM_KEEPALIVE="0.2")
    server.start()
    try:
        asyncio.run(_keep_alive(server))
    finally:
        server.close()


async def _keep_alive(server: ServerProcess) -> None:
    async with server.async_client() as client:
        game = await create_started(client)
        gid, tokens = game["id"], tokens_of(game)
        async with client.stream("GET", f"/v1/games/{gid}/stream", headers=auth(tokens[0])) as r:
            assert r.status_code == 200
            lines = r.aiter_lines()
            comments = 0
            first_version: int | None = None
            while comments < 3:
                line = await asyncio.wait_for(anext(lines), WAIT)
                if line.startswith("data:") and first_version is None:
                    first_version = json.loads(line[5:])["version"]
                elif line.startswith(": keep-alive"):
                    assert first_version is not None  # the document came first
                    comments += 1
            moved = await bot_step(client, gid, tokens, random.Random(7))
            assert moved is not None and moved.status_code == 200, moved and moved.text
            while True:
                line = await asyncio.wait_for(anext(lines), WAIT)
                if line.startswith("data:"):
                    assert json.loads(line[5:])["version"] == moved.json()["version"]
                    break
