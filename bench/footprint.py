"""What one game costs to keep: Redis memory and PostgreSQL bytes, as a game goes on.

    .venv/bin/python -m bench.footprint [--games 8] [--moves 100,500,1000] [--cluster]

Plays ``--games`` two-player CARGO bot games in process through the real append path
(``service.application.gameplay.Manifest``, uniformly random legal commands) on a throwaway
PostgreSQL and
Redis (``tests/support/servers.py``; ``PG_DSN`` / ``REDIS_URL`` are used instead when set, with
a fresh database and a Redis key prefix of its own, removed afterwards). After move 100, 500,
1,000 of each game, and at its end, it reports: the game's Redis memory (``MEMORY USAGE`` of
its projection hash, and its replay snapshots apart), and the PostgreSQL bytes per event and per
command (tables with their indexes, over every game). With ``--cluster`` the projections live
on a three-primary Redis Cluster started for the run (``local_redis_cluster``), and the report
adds, per primary, the games whose keys it holds and its ``used_memory`` growth. Figures for
docs/scaling.md; nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import statistics
import uuid
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import msgspec

from service.application.bodies import CommandBody, CreateGame
from service.application.gameplay import Manifest
from service.bootstrap import build_manifest
from service.settings import Settings
from tests.support.servers import fresh_database, local_redis_cluster, postgres_dsn, redis_url


async def _redis_bytes(manifest: Manifest, prefix: str, game_id: str) -> list[int]:
    """[projection hash, replay snapshots] bytes of one game."""
    redis: Any = manifest.projector.store.redis  # type: ignore[attr-defined]
    keys = (f"{prefix}:{{{game_id}}}:game", f"{prefix}:{{{game_id}}}:snap")
    return [int(await redis.memory_usage(key) or 0) for key in keys]


async def _pg_bytes(dsn: str) -> dict[str, float]:
    conn = await asyncpg.connect(dsn)
    try:
        row = await conn.fetchrow(
            "SELECT (SELECT count(*) FROM events) AS events, (SELECT count(*) FROM commands) "
            "AS commands, (SELECT sum(pg_total_relation_size(inhrelid)) FROM pg_inherits "
            "WHERE inhparent = 'events'::regclass) AS events_bytes, "
            "pg_total_relation_size('commands') AS commands_bytes"
        )
    finally:
        await conn.close()
    return {
        "events": row["events"],
        "bytes_per_event": round(row["events_bytes"] / max(1, row["events"])),
        "bytes_per_command": round(row["commands_bytes"] / max(1, row["commands"])),
    }


async def _play(manifest: Manifest, prefix: str, marks: list[int], seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    created = await manifest.lobby.create(
        CreateGame(
            game="jolly-cargo",
            seats=2,
            options={"crate_placement": "random"},
            players=["a", "b"],
        )
    )
    game_id, tokens = created.id, [str(s.token) for s in created.seats]
    sizes: dict[str, Any] = {}
    moves = 0
    while True:
        doc = msgspec.json.decode(await manifest.documents.document(game_id, "doc:spectator"))
        if doc["status"] != "active":
            break
        who = rng.choice(doc["to_act"])
        legal = msgspec.json.decode(await manifest.documents.legal_document(game_id, tokens[who]))
        if not legal["commands"]:
            continue
        body = CommandBody(command=rng.choice(legal["commands"]), expected_version=legal["version"])
        await manifest.play.command(game_id, tokens[who], body, None)
        moves += 1
        if moves in marks:
            sizes[str(moves)] = await _redis_bytes(manifest, prefix, game_id)
    sizes["end"] = await _redis_bytes(manifest, prefix, game_id)
    sizes["moves"] = moves
    sizes["id"] = game_id
    return sizes


async def _primaries(redis: Any) -> dict[int, int]:
    """``used_memory`` of each primary of a cluster, by port."""
    memory = await redis.info("memory", target_nodes=redis.PRIMARIES)
    return {int(node.split(":")[1]): int(info["used_memory"]) for node, info in memory.items()}


async def _run(dsn: str, redis: str, games: int, marks: list[int], cluster: bool) -> dict[str, Any]:
    prefix = f"fp{uuid.uuid4().hex[:8]}"
    settings = Settings(
        pg_dsn=dsn,
        redis_url=redis,
        redis_prefix=prefix,
        redis_cluster=cluster,
        pg_pool=4,
        log_level="warning",
    )
    manifest, events, projections = await build_manifest(settings)
    spread: dict[str, Any] = {}
    try:
        store: Any = manifest.projector.store
        before = await _primaries(store.redis) if cluster else {}
        played = [await _play(manifest, prefix, marks, n) for n in range(games)]
        if cluster:
            after = await _primaries(store.redis)
            ports = [
                store.redis.get_node_from_key(f"{prefix}:{{{p['id']}}}:game").port for p in played
            ]
            spread = {
                str(port): {
                    "games": ports.count(port),
                    "used_memory_growth": after[port] - before.get(port, 0),
                }
                for port in sorted(after)
            }
        await projections.clear()
    finally:
        await projections.close()
        await events.close()
    redis_by_mark = {
        mark: {
            part: round(statistics.mean(p[mark][i] for p in played if mark in p))
            for i, part in enumerate(("projection", "snapshots"))
        }
        for mark in [*map(str, marks), "end"]
        if any(mark in p for p in played)
    }
    return {
        "games": games,
        "moves_per_game": [p["moves"] for p in played],
        "redis_bytes_per_game_after_move": redis_by_mark,
        "postgres": await _pg_bytes(dsn),
        **({"cluster_primaries": spread} if cluster else {}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=8)
    parser.add_argument("--moves", default="100,500,1000", help="moves after which to measure")
    parser.add_argument("--cluster", action="store_true", help="on a three-primary cluster")
    args = parser.parse_args()
    marks = [int(m) for m in args.moves.split(",")]
    with contextlib.ExitStack() as stack:
        dsn = stack.enter_context(fresh_database(stack.enter_context(postgres_dsn())))
        redis = stack.enter_context(local_redis_cluster() if args.cluster else redis_url())
        result = asyncio.run(_run(dsn, redis, args.games, marks, args.cluster))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
