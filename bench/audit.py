"""The audit of a long game: computed afresh vs. answered from the cache (issue 10).

    .venv/bin/python -m bench.audit [--events 2000] [--rounds 20]

Builds one CARGO game of at least ``--events`` events through the real command path (bots that
mostly end their turn) on its own PostgreSQL and Redis, then times, in process: the full audit
(``History.audit``: read everything, re-adjudicate every command), the fingerprint of the stored
rows (one statement), and a cached answer (fingerprint + cached report, encoded); and ten
concurrent requests on a cold cache (how many audits they cost). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time

import msgspec

from service.application.auditcache import AuditCache
from service.application.bodies import CommandBody, CreateGame
from service.application.history import History
from service.bootstrap import build_manifest
from service.settings import Settings
from tests.support.servers import fresh_database, postgres_dsn, redis_url


def _ms(samples: list[float]) -> str:
    return f"p50 {statistics.median(samples) * 1000:.1f} ms  max {max(samples) * 1000:.1f} ms"


async def _run(dsn: str, redis: str, events: int, rounds: int) -> None:
    settings = Settings(pg_dsn=dsn, redis_url=redis, redis_prefix="bench-audit")
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
        rng, version = random.Random(1), created.version
        while version < events:
            doc = msgspec.json.decode(await manifest.documents.game_document(game_id, None))
            seat = doc["to_act"][0]
            legal = msgspec.json.decode(
                await manifest.documents.legal_document(game_id, tokens[seat])
            )
            ends = [c for c in legal["commands"] if c["type"] == "end_turn"]
            command = ends[0] if ends else rng.choice(legal["commands"])
            answer = await manifest.play.command(game_id, tokens[seat], CommandBody(command), None)
            version = answer.version
        history = History.of(manifest)
        full, fingerprint, cached = [], [], []
        for _ in range(rounds):
            t0 = time.perf_counter()
            await history.audit(game_id)
            full.append(time.perf_counter() - t0)
        cache = AuditCache(history, size=8, rejected_cap=1000)
        for _ in range(rounds):
            t0 = time.perf_counter()
            await cache.state(game_id)
            fingerprint.append(time.perf_counter() - t0)
        size = 0
        for _ in range(rounds):
            t0 = time.perf_counter()
            _, key, unrecorded = await cache.state(game_id)
            size = len(await cache.report(game_id, key, unrecorded))
            cached.append(time.perf_counter() - t0)
        cold = AuditCache(history, size=8, rejected_cap=1000)
        _, key, unrecorded = await cold.state(game_id)
        await asyncio.gather(*(cold.report(game_id, key, unrecorded) for _ in range(10)))
        print(f"game: {version} events; report {size} bytes")
        print(f"full audit (read + re-adjudicate):  {_ms(full)}")
        print(f"fingerprint of the stored rows:     {_ms(fingerprint)}")
        print(f"cached answer (fingerprint + body): {_ms(cached)}")
        print(f"10 concurrent requests, cold cache: {cold.computed} audit computed")
    finally:
        await projections.close()
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    with postgres_dsn() as base, redis_url() as redis, fresh_database(base) as dsn:
        asyncio.run(_run(dsn, redis, args.events, args.rounds))


if __name__ == "__main__":
    main()
