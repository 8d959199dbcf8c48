"""What each read tier buys (``service.application.freshness``): reads of a game in progress,
answered with each tier left out in turn, alternated.

    PG_DSN=... REDIS_URL=... .venv/bin/python -m bench.freshness [--moves 400] [--rounds 3]
                                                    [--without TIER ...]

Two application objects built by the composition root on one fresh database and one Redis
prefix stand for two processes: ``a`` plays a CARGO game (2 seats, crates placed at random)
with seeded random legal commands; after each move (its projection written) ``a`` reads the
next actor's legal commands (a bot on a kept-alive connection to the mover's process) and the
spectator's document (a spectator on that process), and ``b`` reads the same two (another
process: a connection that landed elsewhere). Each configuration — every tier, and each tier
left out (:data:`service.application.freshness.TIERS`) — plays the same game (same seed) once
per round, the configurations alternated in every round. Printed: per configuration, the mean
wall time and process CPU time of each kind of read, per round. Nothing
is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import msgspec

from service.application import freshness
from service.application.bodies import CommandBody, CreateGame
from service.bootstrap import build_manifest
from service.settings import Settings
from tests.support.servers import fresh_database, postgres_dsn, redis_url

READS = ("a legal", "a spectator", "b legal", "b spectator")


@contextmanager
def timed(into: dict[str, list[tuple[float, float]]], kind: str) -> Iterator[None]:
    wall, cpu = time.perf_counter(), time.process_time()
    yield
    into.setdefault(kind, []).append((time.perf_counter() - wall, time.process_time() - cpu))


async def play(dsn: str, redis: str, moves: int, seed: int) -> dict[str, list[tuple[float, float]]]:
    settings = Settings.from_env(
        {
            "PG_DSN": dsn,
            "REDIS_URL": redis,
            "MANIFEST_REDIS_PREFIX": f"fb{uuid.uuid4().hex[:8]}",
            "MANIFEST_SIGNING_KEY_SOURCE": "database",  # a throwaway database
        }
    )
    a, a_events, a_store = await build_manifest(settings)
    b, b_events, b_store = await build_manifest(settings)
    times: dict[str, list[tuple[float, float]]] = {}
    rng = random.Random(seed)
    try:
        created = await a.lobby.create(
            CreateGame(
                game="jolly-cargo",
                seats=2,
                options={"crate_placement": "random"},
                players=["p0", "p1"],
            )
        )
        tokens = [str(s.token) for s in created.seats]
        for _ in range(moves):
            _, table = await a.tables.current(created.id)
            if table.status != "active":
                break
            seat = rng.choice(table.rules.to_act(table.state))
            command = msgspec.to_builtins(rng.choice(table.rules.legal(table.state, seat)))
            answer = await a.play.command(
                created.id, tokens[seat], CommandBody(command=command), None
            )
            await a.projector.drain(timeout=10)
            if not answer.to_act:
                continue
            field = f"legal:{answer.to_act[0]}"
            with timed(times, "a legal"):
                await a.documents.document(created.id, field)
            with timed(times, "a spectator"):
                await a.documents.document(created.id, "doc:spectator")
            with timed(times, "b legal"):
                await b.documents.document(created.id, field)
            with timed(times, "b spectator"):
                await b.documents.document(created.id, "doc:spectator")
            await b.projector.drain(timeout=10)
    finally:
        for manifest, events, store in ((a, a_events, a_store), (b, b_events, b_store)):
            await manifest.projector.drain(timeout=10)
            await store.clear()
            await store.close()
            await events.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--without", nargs="*", choices=[t.name for t in freshness.Tier], help="tiers to try"
    )
    args = parser.parse_args()
    configs: dict[str, frozenset[freshness.Tier]] = {"all tiers": frozenset(freshness.Tier)}
    for tier in freshness.Tier:
        if args.without is None or tier.name in args.without:
            configs[f"without {tier.name}"] = frozenset(freshness.Tier) - {tier}
    with postgres_dsn() as server, redis_url() as redis:
        for round_ in range(1, args.rounds + 1):
            for name, tiers in configs.items():
                freshness.TIERS = tiers
                with fresh_database(server) as dsn:
                    times = asyncio.run(play(dsn, redis, args.moves, args.seed))
                cells = []
                for kind in READS:
                    got = times.get(kind, [])
                    wall = 1e6 * sum(w for w, _ in got) / max(1, len(got))
                    cpu = 1e6 * sum(c for _, c in got) / max(1, len(got))
                    cells.append(f"{kind} {wall:6.0f}/{cpu:5.0f}")
                reads = len(times.get(READS[0], []))
                print(
                    f"round {round_} {name:24} ({reads} reads each; µs wall/cpu per read): "
                    + "; ".join(cells),
                    flush=True,
                )


if __name__ == "__main__":
    main()
