"""Dispute files of a long game: size, latency, and where the time goes.

    .venv/bin/python -m bench.dispute [--events 5000] [--n 5] [--repeat 20]

Builds one CARGO game of at least ``--events`` events through the real command path (bots that
mostly end their turn) on its own PostgreSQL and Redis, then times, in process:
``History.dispute(game, n)`` with an empty tree cache and with the game's tree cached (after
one more command, so the cached tree is extended), and separately reading the game's events
and commands, building its Merkle tree, extending it by one command's events, and one
inclusion proof. Prints medians; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from ledger.merkle import Tree
from service.application.bodies import CommandBody, CreateGame
from service.application.gameplay import Manifest
from service.application.history import History
from service.bootstrap import build_manifest
from service.settings import Settings
from tests.support.servers import fresh_database, postgres_dsn, redis_url


async def _command(manifest: Manifest, game_id: str, tokens: list[str], rng: random.Random) -> int:
    doc = msgspec.json.decode(await manifest.documents.game_document(game_id, None))
    seat = doc["to_act"][0]
    legal = msgspec.json.decode(await manifest.documents.legal_document(game_id, tokens[seat]))
    ends = [c for c in legal["commands"] if c["type"] == "end_turn"]
    command = ends[0] if ends else rng.choice(legal["commands"])
    answer = await manifest.play.command(game_id, tokens[seat], CommandBody(command=command), None)
    return answer.version


async def _median_ms(repeat: int, work: Callable[[], Awaitable[Any]]) -> float:
    times: list[float] = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        await work()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


async def _run(dsn: str, redis: str, events: int, n: int, repeat: int) -> None:
    settings = Settings(pg_dsn=dsn, redis_url=redis, redis_prefix="bench-dispute")
    manifest, store, projections = await build_manifest(settings)
    try:
        created = await manifest.lobby.create(
            CreateGame(
                game="jolly-cargo",
                seats=2,
                options={"crate_placement": "random"},
                players=["a", "b"],
            )
        )
        game_id, tokens = created.id, [str(s.token) for s in created.seats]
        rng = random.Random(1)
        version = created.version
        while version < events:
            version = await _command(manifest, game_id, tokens, rng)

        async def cold() -> Any:
            return await History.of(manifest).dispute(game_id, n)

        warm_history = History.of(manifest)
        await warm_history.dispute(game_id, n)
        version = await _command(manifest, game_id, tokens, rng)  # the cached tree is extended

        async def warm() -> Any:
            return await warm_history.dispute(game_id, n)

        size = len(msgspec.json.encode(await warm()))
        stored = await store.read(game_id)
        hashes = [e.hash for e in stored]

        async def build() -> Tree:
            return Tree(hashes)

        tree = Tree(hashes[:-3])

        async def extend() -> None:
            copy = Tree()
            copy.levels = [list(level) for level in tree.levels]
            copy.extend(hashes[-3:])

        async def proof() -> list[bytes]:
            return Tree.inclusion_proof(tree, n - 1)

        print(f"game: {version} events; /audit/{n} is {size} bytes")
        print(f"dispute, tree not cached:  {await _median_ms(repeat, cold):7.1f} ms")
        print(f"dispute, tree cached:      {await _median_ms(repeat, warm):7.1f} ms")
        reading = await _median_ms(repeat, lambda: store.read(game_id))
        print(f"  read all events:         {reading:7.1f} ms")
        reading = await _median_ms(repeat, lambda: store.commands(game_id))
        print(f"  read all commands:       {reading:7.1f} ms")
        print(f"  build the Merkle tree:   {await _median_ms(repeat, build):7.1f} ms")
        print(
            f"  extend it by 3 events:   {await _median_ms(repeat, extend):7.1f} ms (copy included)"
        )
        print(f"  one inclusion proof:     {await _median_ms(repeat, proof):7.3f} ms")
    finally:
        await projections.close()
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--n", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with postgres_dsn() as base, redis_url() as redis, fresh_database(base) as dsn:
        asyncio.run(_run(dsn, redis, args.events, args.n, args.repeat))


if __name__ == "__main__":
    main()
