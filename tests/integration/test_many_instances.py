"""Three ``manifest serve`` processes on one PostgreSQL and a three-primary Redis Cluster, with
client-side round robin: bots play 100 games across them (each move sent to the next instance).
No version gap in any game's events, every acknowledged move stored exactly once, and SSE
spectators connected to two *different* instances each hear every move of the games they follow."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable

import httpx
import pytest

from .apihelp import bot_step, commands_rows, create_started, pg, tokens_of
from .historyhelp import sse_messages
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.slow]

GAMES = 100
MOVES = 4  # per game: 400 acknowledged moves in all
FOLLOWED = 10  # games streamed, each by spectators on two different instances


def test_bots_play_100_games_across_three_instances_on_a_redis_cluster(
    fresh_database: str, redis_cluster_url: str
) -> None:
    first = ServerProcess(fresh_database, redis_cluster_url, REDIS_CLUSTER="1")
    instances = [first] + [
        ServerProcess(fresh_database, redis_cluster_url, prefix=first.prefix, REDIS_CLUSTER="1")
        for _ in range(2)
    ]
    try:
        for proc in instances:
            proc.start()
        asyncio.run(_play(instances, fresh_database))
    finally:
        for proc in instances:
            proc.close()


async def _listen(
    client: httpx.AsyncClient, game_id: str, heard: list[int], subscribed: asyncio.Event
) -> None:
    """Every version the stream sends; ``subscribed`` is set by the first (current) document,
    which the server sends once it hears the game's changes."""
    async with client.stream("GET", f"/v1/games/{game_id}/stream") as stream:
        assert stream.status_code == 200
        async for message in sse_messages(stream.aiter_lines()):
            if message["event"] == "change":
                heard.append(json.loads(message["data"])["version"])
                subscribed.set()


async def _until(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Wait for ``condition`` with a deadline (no fixed sleep)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


async def _play(instances: list[ServerProcess], dsn: str) -> None:
    clients = [p.async_client(timeout=30.0) for p in instances]
    try:
        games = [await create_started(clients[n % 3]) for n in range(GAMES)]
        acked: dict[str, list[int]] = {g["id"]: [] for g in games}
        heard: dict[tuple[str, int], list[int]] = {}

        async def play(n: int, game: dict[str, object]) -> None:
            rng = random.Random(n)
            for move in range(MOVES):
                client = clients[(n + move) % 3]
                r = await bot_step(client, str(game["id"]), tokens_of(game), rng)
                if r is None:
                    return
                assert r.status_code == 200, r.text
                acked[str(game["id"])].append(r.json()["version"])

        for game in games[:FOLLOWED]:
            for other in (1, 2):
                heard[(str(game["id"]), other)] = []
        # Follow first (subscribed before play), then play everything concurrently.
        subscribed = {key: asyncio.Event() for key in heard}
        tasks = {
            key: asyncio.create_task(
                _listen(clients[(n + key[1]) % 3], key[0], heard[key], subscribed[key])
            )
            for n, key in enumerate(heard)
        }
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in subscribed.values())), 60)
        await asyncio.gather(*(play(n, g) for n, g in enumerate(games)))
        # every spectator has heard its game's last acknowledged move (the newest document)
        await _until(
            lambda: all(max(v) >= max(acked[gid]) for (gid, _), v in heard.items()),
            "the last changes to reach every spectator",
        )
        for task in tasks.values():
            task.cancel()
        await asyncio.gather(*tasks.values(), return_exceptions=True)
        assert all(len(v) == MOVES for v in acked.values())  # 400 acknowledged moves

        async with pg(dsn) as store:
            for game in games:
                gid = str(game["id"])
                events = await store.read(gid)
                assert [e.version for e in events] == list(range(1, len(events) + 1))
                rows = [r for r in await commands_rows(store, gid) if r["outcome"] == "accepted"]
                assert sorted(r["last_version"] for r in rows) == acked[gid]  # once each
                assert events[-1].version == (acked[gid] or [game["version"]])[-1]
        for (gid, _), versions in heard.items():
            assert acked[gid]
            assert set(acked[gid]) <= set(versions), (gid, acked[gid], versions)
    finally:
        for client in clients:
            await client.aclose()
