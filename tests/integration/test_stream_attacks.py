"""Live streams attacked as a hostile client would (issue 25, review): seat tokens of games
of one's own used to fill the seats' reserve, clients that leave before the first event or
stop reading, and a subscription lost while moves are accepted. Real server, PostgreSQL and
Redis."""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
import socket
import time
from collections.abc import Iterator

import httpx
import pytest
import redis as redis_sync

from tests.support.faulty import PostgresServer
from tests.support.servers import fresh_database, local_redis

from .apihelp import assert_problem, bot_step, create_started, tokens_of
from .serverproc import ServerProcess
from .test_streams import Stream, _from, _wait, open_stream

pytestmark = pytest.mark.integration


@pytest.fixture
def own_redis() -> Iterator[str]:
    with local_redis() as url:
        yield url


def _metric(text: str, name: str) -> float:
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    return 0.0 if found is None else float(found.group(1))


async def _open_streams(client: httpx.AsyncClient) -> float:
    text = (await client.get("/metrics")).text
    return _metric(text, 'manifest_streams_open{kind="seat"}') + _metric(
        text, 'manifest_streams_open{kind="spectator"}'
    )


# --- seats of one's own games cannot take every slot ----------------------------------------
def test_seat_streams_of_games_one_created_cannot_take_another_seats_slot(
    fresh_database: str, redis_url: str
) -> None:
    """One address creates games (each hands it every seat token) and opens seat streams of
    them: it gets ``MANIFEST_STREAMS_SEATS_PER_ADDRESS`` such streams, then 429 — not every
    slot of the process. A seat at another address still opens its own game's stream and
    hears its next move. (Before: each of the attacker's tokens had its own cap of
    ``MANIFEST_STREAMS_PER_CLIENT`` and nothing bounded the tokens, so two created games filled
    the whole process and the other seat was 503.)"""
    server = ServerProcess(
        fresh_database,
        redis_url,
        MANIFEST_STREAMS_PER_CLIENT="2",
        MANIFEST_STREAMS_PER_PROCESS="5",
        MANIFEST_STREAMS_SEAT_RESERVE="2",
        MANIFEST_STREAMS_SEATS_PER_ADDRESS="3",
    )
    server.start()
    try:
        asyncio.run(_seat_hoarder(server))
    finally:
        server.close()


async def _seat_hoarder(server: ServerProcess) -> None:
    async with (
        _from(server, "127.0.0.2") as attacker,
        _from(server, "127.0.0.3") as player,
        contextlib.AsyncExitStack() as keep,
    ):
        own = [await create_started(attacker) for _ in range(2)]
        refused: list[httpx.Response] = []
        held = 0
        for game in own:
            for token in tokens_of(game):
                for _ in range(2):
                    answer = await open_stream(keep, attacker, game["id"], token)
                    if isinstance(answer, Stream):
                        held += 1
                    else:
                        refused.append(answer)
        assert held == 3, held
        for answer in refused:
            body = assert_problem(answer, 429, "rate.limited")
            assert body["quota"] == "streams" and "retry-after" in answer.headers
        game = await create_started(player)
        tokens = tokens_of(game)
        seat = await open_stream(keep, player, game["id"], tokens[0])
        assert isinstance(seat, Stream), seat.text  # type: ignore[union-attr]
        move = await bot_step(player, game["id"], tokens, random.Random(3))
        assert move is not None and move.status_code == 200, move and move.text
        assert (await seat.next())["version"] == move.json()["version"]


# --- clients that leave at once --------------------------------------------------------------
def test_clients_that_leave_before_the_first_event_give_back_slots_and_subscriptions(
    fresh_database: str, redis_url: str
) -> None:
    """60 raw connections ask for a stream and go at once (half of them with a reset), from
    an address allowed 3 open streams: once the server has seen them go, no stream is counted
    open, the game's channel has no subscriber left in Redis, and the address opens a stream
    that hears the next move (a leaked slot would make it 429 for good)."""
    server = ServerProcess(
        fresh_database,
        redis_url,
        MANIFEST_STREAMS_PER_CLIENT="3",
        MANIFEST_STREAMS_PER_PROCESS="10",
        MANIFEST_STREAMS_SEAT_RESERVE="2",
    )
    server.start()
    try:
        asyncio.run(_leavers(server, redis_url))
    finally:
        server.close()


async def _leave_at_once(port: int, path: str, reset: bool) -> None:
    _reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: t\r\n\r\n".encode())
    await writer.drain()
    if reset:
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()


async def _leavers(server: ServerProcess, redis_url: str) -> None:
    r = redis_sync.Redis.from_url(redis_url)
    async with server.async_client() as client, contextlib.AsyncExitStack() as keep:
        game = await create_started(client)
        gid, tokens = game["id"], tokens_of(game)
        channel = f"{server.prefix}:{{{gid}}}:changes"
        for i in range(0, 60, 10):
            await asyncio.gather(
                *(
                    _leave_at_once(server.port, f"/v1/games/{gid}/stream", (i + j) % 2 == 0)
                    for j in range(10)
                )
            )

        # Some of those requests may still be in the handler: wait for a stream to open (a
        # leaked slot would keep the address at its cap, 429, for good) ...
        opened: list[Stream] = []

        async def reopened() -> bool:
            answer = await open_stream(keep, client, gid, None)
            if isinstance(answer, Stream):
                opened.append(answer)
                return True
            assert_problem(answer, 429, "rate.limited")
            return False

        await _wait(reopened, "streams whose client left still hold the address's slots")
        stream = opened[0]

        # ... then only that stream is counted open and subscribed.
        async def only_ours() -> bool:
            subscribers = dict(r.pubsub_numsub(channel)).get(channel.encode(), 0)
            return await _open_streams(client) == 1 and subscribers == 1

        await _wait(only_ours, "a stream whose client left is still counted or subscribed")
        move = await bot_step(client, gid, tokens, random.Random(11))
        assert move is not None and move.status_code == 200, move and move.text
        assert (await stream.next())["version"] == move.json()["version"]
    r.close()


# --- clients that stop reading ---------------------------------------------------------------
def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_clients_that_stop_reading_cost_bounded_memory_and_do_not_delay_others(
    fresh_database: str, redis_url: str
) -> None:
    """40 streams whose clients never read (a tiny receive buffer) while 300 moves are
    played: the server's send waits on each socket (backpressure), so its memory grows by
    far less than the documents it would otherwise queue (40 × 300 documents), and a stream
    that reads still hears every move's version as it comes (the fan-out is not held up by
    the stalled ones)."""
    server = ServerProcess(fresh_database, redis_url)
    server.start()
    try:
        asyncio.run(_stalled_readers(server))
    finally:
        server.close()


async def _stalled_reader(port: int, path: str) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, ("127.0.0.1", port))
    await loop.sock_sendall(sock, f"GET {path} HTTP/1.1\r\nHost: t\r\n\r\n".encode())
    head = await asyncio.wait_for(loop.sock_recv(sock, 64), 20)
    assert head.startswith(b"HTTP/1.1 200"), head
    return sock


async def _stalled_readers(server: ServerProcess) -> None:
    assert server.proc is not None
    async with server.async_client() as client, contextlib.AsyncExitStack() as keep:
        game = await create_started(client)
        gid, tokens = game["id"], tokens_of(game)
        reader = await open_stream(keep, client, gid, None)
        assert isinstance(reader, Stream)
        stalled = [await _stalled_reader(server.port, f"/v1/games/{gid}/stream") for _ in range(40)]
        await asyncio.sleep(0)
        before = _rss_kib(server.proc.pid)
        rng = random.Random(17)
        sizes: list[int] = []
        moves = 0
        while moves < 300:
            move = await bot_step(client, gid, tokens, rng)
            if move is None:  # over: another game
                game = await create_started(client)
                break
            assert move.status_code == 200, move.text
            moves += 1
            doc = await reader.next()
            assert doc["version"] == move.json()["version"]
            sizes.append(len(str(doc)))
        after = _rss_kib(server.proc.pid)
        queued_kib = 40 * sum(sizes) // 1024
        print(
            f"moves {moves}, doc ~{sum(sizes) // len(sizes)} B, RSS {before} -> {after} KiB,"
            f" unbounded queueing would hold ~{queued_kib} KiB"
        )
        assert after - before < max(queued_kib // 2, 16 * 1024), (before, after, queued_kib)
        for sock in stalled:
            sock.close()
        start = time.monotonic()

        async def given_back() -> bool:
            return await _open_streams(client) == 1

        await _wait(given_back, "stalled streams were not given back once their clients left")
        print(f"stalled streams given back in {time.monotonic() - start:.2f} s")


# --- many streams of one game: one read per move, not one per stream -------------------------
def test_a_move_watched_by_many_streams_costs_one_read_of_the_document_not_one_per_stream(
    fresh_database: str, own_redis: str
) -> None:
    """60 anonymous streams of one game (one view: the spectator's) and 5 moves: every stream
    hears every move, and the server's Redis commands per move stay far below one per stream
    (the streams woken by one version share one read of the document). Before, each stream
    re-read the document itself (a PostgreSQL query and a Redis read each), so one move of a
    popular game cost as many reads as it had spectators."""
    server = ServerProcess(fresh_database, own_redis)
    server.start()
    try:
        asyncio.run(_herd(server, own_redis))
    finally:
        server.close()


def _redis_calls(url: str) -> int:
    with contextlib.closing(redis_sync.Redis.from_url(url)) as r:
        stats = r.info("commandstats")
    return sum(int(v["calls"]) for k, v in stats.items() if k not in ("cmdstat_info",))


async def _herd(server: ServerProcess, redis_url: str) -> None:
    watchers, moves = 60, 5
    limits = httpx.Limits(max_connections=watchers + 10, max_keepalive_connections=watchers + 10)
    async with server.async_client(limits=limits) as client, contextlib.AsyncExitStack() as keep:
        game = await create_started(client)
        gid, tokens = game["id"], tokens_of(game)
        streams = await asyncio.gather(
            *(open_stream(keep, client, gid, None) for _ in range(watchers))
        )
        assert all(isinstance(s, Stream) for s in streams)
        rng = random.Random(23)
        alone: list[int] = []  # Redis calls of a move with its stream reads, per move
        for _ in range(moves):
            before = _redis_calls(redis_url)
            move = await bot_step(client, gid, tokens, rng)
            assert move is not None and move.status_code == 200, move and move.text
            heard = await asyncio.gather(*(s.next() for s in streams))  # type: ignore[union-attr]
            assert {d["version"] for d in heard} == {move.json()["version"]}
            alone.append(_redis_calls(redis_url) - before)
        print(f"Redis calls per move with {watchers} streams: {alone}")
        assert max(alone) < watchers // 2, alone


# --- PostgreSQL gone while streams are open ---------------------------------------------------
def test_streams_woken_while_postgresql_is_down_end_cleanly_without_a_traceback(
    redis_url: str,
) -> None:
    """PostgreSQL stopped while 5 streams follow a game; a change is heard (published on the
    game's channel), so every stream re-reads its document and cannot: each stream ends (the
    client reconnects and gets a 503 while PostgreSQL is away), with one log line each, not an
    ``Exception in ASGI application`` traceback per stream (a log flood with many streams)."""
    pg = PostgresServer().start()
    try:
        with fresh_database(pg.dsn) as dsn:
            server = ServerProcess(
                dsn,
                redis_url,
                MANIFEST_PG_CONNECT_TIMEOUT="1",
                MANIFEST_PG_ACQUIRE_TIMEOUT="1",
                MANIFEST_LOG_LEVEL="info",
            )
            server.start()
            try:
                asyncio.run(_pg_gone(server, pg, redis_url))
                log = server.log_path.read_text(errors="replace")
                # (asyncpg's own pool logs a traceback of its reconnection attempts: not ours)
                assert "Exception in ASGI" not in log, log[-4000:]
                assert log.count("live stream ended") == 5, log[-4000:]
            finally:
                server.close()
                if pg.proc is None or pg.proc.poll() is not None:
                    pg.start()  # for the database's cleanup
    finally:
        pg.close()


async def _pg_gone(server: ServerProcess, pg: PostgresServer, redis_url: str) -> None:
    async with server.async_client() as client, contextlib.AsyncExitStack() as keep:
        game = await create_started(client)
        gid = game["id"]
        streams = [await open_stream(keep, client, gid, None) for _ in range(5)]
        assert all(isinstance(s, Stream) for s in streams)
        pg.stop()
        with contextlib.closing(redis_sync.Redis.from_url(redis_url)) as r:
            assert r.publish(f"{server.prefix}:{{{gid}}}:changes", b"1000") == 1

        async def ends(stream: Stream) -> None:
            with pytest.raises((StopAsyncIteration, httpx.HTTPError)):
                await stream.next()

        await asyncio.gather(*(ends(s) for s in streams))  # type: ignore[arg-type]


# --- the seats' reserve: who may take it ------------------------------------------------------
def test_only_a_seats_own_token_takes_the_reserve(fresh_database: str, redis_url: str) -> None:
    """Process cap 3 with 2 reserved (spectators stop at 1), from three addresses. Once one
    anonymous stream is open: the game's host token is a spectator (503, it is no seat); a
    made-up token is 401 and another game's seat token 403, before any slot is counted; the
    game's own seats then take the two reserved slots."""
    server = ServerProcess(
        fresh_database,
        redis_url,
        MANIFEST_STREAMS_PER_PROCESS="3",
        MANIFEST_STREAMS_SEAT_RESERVE="2",
    )
    server.start()
    try:
        asyncio.run(_reserve(server))
    finally:
        server.close()


async def _reserve(server: ServerProcess) -> None:
    async with (
        _from(server, "127.0.0.4") as a,
        _from(server, "127.0.0.5") as b,
        _from(server, "127.0.0.6") as c,
        contextlib.AsyncExitStack() as keep,
    ):
        game, other = await create_started(a), await create_started(b)
        gid, tokens = game["id"], tokens_of(game)
        assert isinstance(await open_stream(keep, c, gid, None), Stream)
        for client, token, status, code in [
            (b, game["host_token"], 503, "service.unavailable"),
            (b, "s_" + "x" * 40, 401, None),
            (c, tokens_of(other)[0], 403, "auth.wrong_game"),
            (c, None, 503, "service.unavailable"),
        ]:
            answer = await open_stream(keep, client, gid, token)
            assert isinstance(answer, httpx.Response), token
            assert_problem(answer, status, code)
        for token in tokens:
            seat = await open_stream(keep, b, gid, token)
            assert isinstance(seat, Stream), seat.text  # type: ignore[union-attr]
