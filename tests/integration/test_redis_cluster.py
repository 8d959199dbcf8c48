"""The projection store on a real three-primary Redis Cluster: every multi-key operation of a game
stays in one slot (no CROSSSLOT, whatever the game id), a change published through one node is
heard by a subscriber on another (two service instances), and a dead node is StoreUnavailable
(the service's 503 ``service.unavailable``), not a hang."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
import uuid

import httpx
import pytest
from redis.crc import key_slot

from projections.redis_store import RedisStore
from projections.store import StoreUnavailable
from tests.support import servers

pytestmark = pytest.mark.integration


def test_every_key_of_a_game_shares_one_slot_and_games_spread_over_the_cluster(
    redis_cluster_url: str,
) -> None:
    async def run() -> None:
        store = RedisStore.from_url(redis_cluster_url, f"c{uuid.uuid4().hex[:10]}", cluster=True)
        slots = set()
        try:
            for n in range(60):
                game = uuid.uuid4().hex if n % 2 else f"g{n}"
                keys = [store._key(game), store._channel(game), store._snapshots(game)]
                assert len({key_slot(k.encode()) for k in keys}) == 1
                slots.add(key_slot(keys[0].encode()))
                # the script (hash + channel) and the snapshot hash, on whichever primary
                assert await store.write(game, 1, {"a": b"1"})
                await store.put_snapshots(game, {1: b"s"})
                assert await store.snapshot(game, 1) == b"s"
            assert len({s * 3 // 16384 for s in slots}) == 3  # the games span all three primaries
            games = [f"g{n}" for n in range(0, 60, 2)]
            assert await store.versions(games) == [1] * len(games)  # a pipeline across slots
        finally:
            await store.clear()
            await store.close()

    asyncio.run(run())


def test_a_write_through_one_node_reaches_a_subscriber_on_another(redis_cluster_url: str) -> None:
    async def run() -> None:
        prefix = f"c{uuid.uuid4().hex[:10]}"
        writer = RedisStore.from_url(redis_cluster_url, prefix, cluster=True)
        await writer.redis.initialize()  # type: ignore[union-attr]
        nodes = writer.redis.get_primaries()  # type: ignore[union-attr]
        others = [n for n in nodes if f":{n.port}/" not in redis_cluster_url]
        assert len(others) == 2
        readers = [
            RedisStore.from_url(f"redis://{n.host}:{n.port}/0", prefix, cluster=True)
            for n in others
        ]
        try:
            streams = [r.subscribe("fan") for r in readers]
            for stream in streams:
                assert await anext(stream) is None
            for version in (1, 2, 3):
                assert await writer.write("fan", version, {"v": b"x"})
            for stream in streams:
                heard = [await asyncio.wait_for(anext(stream), 5) for _ in range(3)]
                assert heard == [1, 2, 3]
                await stream.aclose()  # type: ignore[attr-defined]
        finally:
            await writer.clear()
            for store in (writer, *readers):
                await store.close()

    asyncio.run(run())


def test_a_dead_primary_is_store_unavailable_not_a_hang() -> None:
    with servers.local_redis_cluster() as url:
        store = RedisStore.from_url(url, "dead", cluster=True, connect_timeout=0.5, timeout=0.5)

        async def prepare() -> list[str]:
            # one game per primary, so one of them lands on the node we stop
            by_node: dict[int, str] = {}
            await store.redis.initialize()  # type: ignore[union-attr]
            for n in range(200):
                node = store.redis.get_node_from_key(store._key(f"g{n}"))  # type: ignore[union-attr]
                by_node.setdefault(node.port, f"g{n}")
                assert await store.write(f"g{n}", 1, {"a": b"1"})
            return [by_node[p] for p in sorted(by_node)]

        async def main() -> None:
            games = await prepare()
            port = int(url.rsplit(":", 1)[1].split("/")[0])
            victim = next(
                g for g in games if store.redis.get_node_from_key(store._key(g)).port != port
            )  # type: ignore[union-attr]
            victim_port = store.redis.get_node_from_key(store._key(victim)).port  # type: ignore[union-attr]
            proc = await asyncio.create_subprocess_exec(
                "redis-cli", "-p", str(victim_port), "SHUTDOWN", "NOSAVE"
            )
            await proc.wait()
            started = asyncio.get_running_loop().time()
            with pytest.raises(StoreUnavailable):
                await asyncio.wait_for(store.version(victim), 10)
            assert asyncio.get_running_loop().time() - started < 5
            await store.close()

        asyncio.run(main())


@pytest.mark.parametrize("fault", ["dead", pytest.param("stalled", marks=pytest.mark.slow)])
def test_a_dead_primary_is_503_with_retry_after_over_http(fresh_database: str, fault: str) -> None:
    """A service on a cluster one of whose primaries is down (``dead``: shut down) or stalled
    (``stalled``: SIGSTOP, the case that would hang a client without timeouts) answers for the
    games in its slots (document, legal commands, a move, the document again) within seconds,
    either served (the service falls back to PostgreSQL where it can) or 503
    ``service.unavailable`` with Retry-After — not a hang, not a 500 — and never with a view
    older than a move it acknowledged."""
    from redis import Redis as SyncRedis
    from redis import RedisCluster as SyncCluster

    from .apihelp import bot_step, create_started, tokens_of
    from .serverproc import ServerProcess

    stopped: list[int] = []
    with servers.local_redis_cluster() as url:
        app = ServerProcess(fresh_database, url, REDIS_CLUSTER="1")
        app.start()
        try:
            cluster = SyncCluster.from_url(url)
            first_port = int(url.rsplit(":", 1)[1].split("/")[0])

            tokens: dict[str, list[str]] = {}

            async def create() -> list[str]:
                async with app.async_client() as client:
                    for _ in range(12):
                        game = await create_started(client)
                        tokens[str(game["id"])] = tokens_of(game)
                return list(tokens)

            ids = asyncio.run(create())
            port_of = {
                gid: cluster.get_node_from_key(f"{app.prefix}:{{{gid}}}:game").port for gid in ids
            }
            victim_port = next(p for p in port_of.values() if p != first_port)
            victim = next(g for g, p in port_of.items() if p == victim_port)
            node = SyncRedis(host="127.0.0.1", port=victim_port)
            victim_pid = int(node.info("server")["process_id"])
            node.close()
            cluster.close()
            if fault == "dead":
                servers.subprocess.run(
                    ["redis-cli", "-p", str(victim_port), "SHUTDOWN", "NOSAVE"],
                    check=False,
                    capture_output=True,
                )
            else:
                os.kill(victim_pid, signal.SIGSTOP)
                stopped.append(victim_pid)

            async def attack() -> list[httpx.Response]:
                async with app.async_client(timeout=20.0) as client:
                    doc = await client.get(f"/v1/games/{victim}")
                    legal = await client.get(
                        f"/v1/games/{victim}/legal",
                        headers={"Authorization": f"Bearer {tokens[victim][0]}"},
                    )
                    move = await bot_step(client, victim, tokens[victim], random.Random(1))
                    after = await client.get(f"/v1/games/{victim}")
                    if move is not None and move.status_code == 200 and after.status_code == 200:
                        assert after.json()["version"] >= move.json()["version"]  # not stale
                    return [doc, legal, after] + ([move] if move is not None else [])

            started = time.monotonic()
            answers = asyncio.run(attack())
            assert time.monotonic() - started < 20  # four requests, each within seconds
            for r in answers:
                assert r.status_code in (200, 503), r.text
                if r.status_code == 503:
                    assert r.json()["code"] == "service.unavailable"
                    assert int(r.headers["Retry-After"]) >= 1
        finally:
            for pid in stopped:
                os.kill(pid, signal.SIGCONT)
            app.close()
