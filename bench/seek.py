"""Replay seek latency: the view after event n of a long game, answered from the nearest
snapshot (every 100 events) plus at most 99 folded events.

    .venv/bin/python -m bench.seek [--events 5000] [--seeks 400]

Builds one CARGO game of at least ``--events`` events through the real command path (bots that
mostly end their turn, 3 events a command) on its own PostgreSQL and Redis, then times
``History.replay`` for random n — in process, so the figure is the seek itself, not HTTP.
Prints p50/p99 latency and the events folded per seek; asserts nothing.

Also prints the write path's cold start on that game: with nothing cached, the state a command
is decided on (and a retried command's hints) is read from PostgreSQL and folded from event 1
(``Tables.current``) — the cost that decides whether snapshots must also live in PostgreSQL.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time

import msgspec

from service.application.bodies import CommandBody, CreateGame
from service.application.history import History
from service.bootstrap import build_manifest
from service.settings import Settings
from tests.support.servers import fresh_database, postgres_dsn, redis_url


async def _run(dsn: str, redis: str, events: int, seeks: int) -> None:
    settings = Settings(pg_dsn=dsn, redis_url=redis, redis_prefix="bench-seek")
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
        game_id = created.id
        tokens = [str(s.token) for s in created.seats]
        rng = random.Random(1)
        version = created.version
        started = time.perf_counter()
        while version < events:
            doc = msgspec.json.decode(await manifest.documents.game_document(game_id, None))
            seat = doc["to_act"][0]
            legal = msgspec.json.decode(
                await manifest.documents.legal_document(game_id, tokens[seat])
            )
            ends = [c for c in legal["commands"] if c["type"] == "end_turn"]
            command = ends[0] if ends else rng.choice(legal["commands"])
            answer = await manifest.play.command(
                game_id, tokens[seat], CommandBody(command=command), None
            )
            version = answer.version
        built = time.perf_counter() - started
        history = History.of(manifest)
        latencies: list[float] = []
        folded: list[int] = []
        for _ in range(seeks):
            n = rng.randint(1, version)
            t0 = time.perf_counter()
            reply = await history.replay(game_id, None, n)
            latencies.append((time.perf_counter() - t0) * 1000)
            folded.append(reply.folded)
        latencies.sort()
        print(f"game: {version} events, built in {built:.1f} s through the command path")
        print(
            f"seek: {seeks} random n  p50 {statistics.median(latencies):.2f} ms  "
            f"p99 {latencies[int(len(latencies) * 0.99) - 1]:.2f} ms  "
            f"max {latencies[-1]:.2f} ms"
        )
        print(f"folded per seek: max {max(folded)}  mean {statistics.mean(folded):.1f}  (K = 100)")
        cold: list[float] = []
        for _ in range(20):
            manifest.tables.forget(game_id)
            t0 = time.perf_counter()
            await manifest.tables.current(game_id)
            cold.append((time.perf_counter() - t0) * 1000)
        cold.sort()
        print(
            f"cold state from PostgreSQL (read + fold {version} events): "
            f"p50 {statistics.median(cold):.1f} ms  max {cold[-1]:.1f} ms"
        )
    finally:
        await projections.close()
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--seeks", type=int, default=400)
    args = parser.parse_args()
    with postgres_dsn() as base, redis_url() as redis, fresh_database(base) as dsn:
        asyncio.run(_run(dsn, redis, args.events, args.seeks))


if __name__ == "__main__":
    main()
