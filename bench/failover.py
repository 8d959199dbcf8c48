"""PostgreSQL failover under load, measured: five failovers of a three-node Patroni cluster while
bots play, and what synchronous replication costs.

    .venv/bin/python -m bench.failover [--failovers 5] [--games 16] [--seconds 20]
                                       [--pairs 3] [--pair-seconds 15]

Starts etcd and three PostgreSQL 15 servers under Patroni (``tests/support/patroni.py``,
``fsync`` on, synchronous strict mode), a Redis, and ``manifest serve`` on the cluster's
multi-host ``PG_DSN``; ``--games`` bots play through HTTP (``tests/faults/test_faults.py``'s
clients: each keeps its own log of acknowledged commands and resends a 503'd command with its
Idempotency-Key as told). Then:

1. moves/s (accepted commands per second) over ``--seconds``, before any fault;
2. ``--failovers`` faults of the primary, alternately SIGKILL of its PostgreSQL (a crash) and
   SIGSTOP of its Patroni and PostgreSQL (a frozen host, resumed once another member leads),
   each once the cluster is whole again (the old primary back as a replica). For each:
   - *without a primary*: from the fault until another server answers as a running primary
     (Patroni's ``GET /patroni`` of each member, polled every 0.1 s);
   - *RTO*: from the fault until the first command sent after it is acknowledged;
   - *lost*: commands acknowledged before the fault that are not in the event log at the end
     (must be 0; 503'd commands are first resent with their keys, as clients are told);
3. the cost of synchronous replication, side by side on the same cluster and load: ``--pairs``
   pairs of windows of ``--pair-seconds``, synchronous then asynchronous (Patroni's dynamic
   configuration switched between windows: ``synchronous_mode`` and strict mode together),
   moves/s in each window and the ratio per pair;
0. before the HTTP server starts, PostgreSQL alone, in the same alternation: 16 connections
   committing one small row at a time (commits/s, median commit time), so that the cost of
   replication shows apart from the HTTP service's own.

Only figures taken in one run, side by side, are compared: the machines are shared and the
same run differs by 2x between days.

Prints a table and writes ``bench/results/failover-latest.json``. Nothing is asserted; every
process started is stopped, also on failure.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import platform
import random
import time
from pathlib import Path
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import httpx

from tests.faults.test_faults import FAULT_SETTINGS, Ledger, new_games, players
from tests.integration.apihelp import auth
from tests.integration.serverproc import ServerProcess
from tests.support.patroni import Node, PatroniCluster
from tests.support.servers import local_redis

RESULTS = Path(__file__).parent / "results" / "failover-latest.json"


class TimedLedger(Ledger):
    """A ledger that also keeps, per command, when it was sent and answered, and its status."""

    def __init__(self) -> None:
        super().__init__()
        self.sends: list[tuple[float, float, int]] = []  # (sent, answered, status or 0)
        self.acked_at: dict[str, float] = {}

    async def send(
        self, client: httpx.AsyncClient, gid: str, token: str, body: dict[str, Any]
    ) -> httpx.Response | None:
        sent = time.monotonic()
        r = await super().send(client, gid, token, body)
        self.sends.append((sent, time.monotonic(), r.status_code if r is not None else 0))
        return r

    def ack(self, key: str, gid: str, token: str, body: dict[str, Any], answer: Any) -> None:
        super().ack(key, gid, token, body, answer)
        self.acked_at.setdefault(key, time.monotonic())


async def _throughput(ledger: Ledger, seconds: float) -> float:
    before, started = len(ledger.acked), time.monotonic()
    await asyncio.sleep(seconds)
    return (len(ledger.acked) - before) / (time.monotonic() - started)


async def _primary_other_than(cluster: PatroniCluster, old: Node, timeout: float) -> float:
    deadline = time.monotonic() + timeout
    while True:
        primaries = await asyncio.to_thread(cluster.primaries)
        if any(n is not old for n in primaries):
            return time.monotonic()
        if time.monotonic() > deadline:
            raise RuntimeError(f"no new primary within {timeout} s: {cluster.members()}")
        await asyncio.sleep(0.1)


async def _recovered(ledger: TimedLedger, fault_at: float, timeout: float) -> float:
    deadline = time.monotonic() + timeout
    while True:
        done = [a for s, a, st in ledger.sends if s > fault_at and st == 200]
        if done:
            return min(done)
        if time.monotonic() > deadline:
            raise RuntimeError("no command accepted after the fault")
        await asyncio.sleep(0.05)


async def _recorded(dsn: str, keys: list[str]) -> set[str]:
    conn = await asyncpg.connect(dsn, timeout=10)
    try:
        rows = await conn.fetch(
            "SELECT idempotency_key FROM commands "
            "WHERE idempotency_key = ANY($1::text[]) AND outcome = 'accepted'",
            keys,
        )
        return {r["idempotency_key"] for r in rows}
    finally:
        await conn.close()


async def _commits(dsn: str, seconds: float, connections: int = 16) -> dict[str, float]:
    """PostgreSQL alone: ``connections`` clients each committing one ~300-byte row at a time
    for ``seconds``: commits/s and the median commit time (what replication adds to a move)."""
    conns = [await asyncpg.connect(dsn, timeout=10) for _ in range(connections)]
    await conns[0].execute(
        "CREATE TABLE IF NOT EXISTS bench_commits (id bigserial PRIMARY KEY, body text)"
    )
    times: list[float] = []
    stop = time.monotonic() + seconds

    async def writer(conn: Any) -> None:
        while time.monotonic() < stop:
            started = time.monotonic()
            await conn.execute("INSERT INTO bench_commits (body) VALUES ($1)", "x" * 300)
            times.append(time.monotonic() - started)

    try:
        await asyncio.gather(*(writer(c) for c in conns))
    finally:
        for c in conns:
            await c.close()
    times.sort()
    return {
        "commits_per_s": round(len(times) / seconds, 1),
        "commit_p50_ms": round(1000 * times[len(times) // 2], 2),
    }


async def _switch(cluster: PatroniCluster, synchronous: bool) -> None:
    await asyncio.to_thread(cluster.set_synchronous, synchronous)
    await asyncio.sleep(1)  # the pool's connections see the new setting at their next commit


async def _commit_pairs(cluster: PatroniCluster, pairs: int, seconds: float) -> list[Any]:
    rows = []
    for _ in range(pairs):
        row: dict[str, Any] = {}
        for synchronous in (True, False):
            await _switch(cluster, synchronous)
            row["synchronous" if synchronous else "asynchronous"] = await _commits(
                cluster.dsn, seconds
            )
        rows.append(row)
    await _switch(cluster, True)
    return rows


async def _move_pairs(
    cluster: PatroniCluster, ledger: Ledger, pairs: int, seconds: float
) -> list[dict[str, float]]:
    rows = []
    for _ in range(pairs):
        row: dict[str, float] = {}
        for synchronous in (True, False):
            await _switch(cluster, synchronous)
            row["synchronous" if synchronous else "asynchronous"] = round(
                await _throughput(ledger, seconds), 1
            )
        row["ratio"] = round(row["synchronous"] / row["asynchronous"], 3)
        rows.append(row)
        print(f"moves/s pair: {row}", flush=True)
    await _switch(cluster, True)
    return rows


async def _run(
    cluster: PatroniCluster,
    redis: str,
    games: int,
    seconds: float,
    failovers: int,
    pairs: int,
    pair_seconds: float,
) -> dict[str, Any]:
    commit_pairs = await _commit_pairs(cluster, pairs, pair_seconds)
    server = ServerProcess(cluster.dsn, redis)
    server.env.update(FAULT_SETTINGS)
    server.start()
    try:
        playing = await new_games(server, games)
        ledger = TimedLedger()
        rows: list[dict[str, Any]] = []
        windows: list[float] = []
        async with players(server, ledger, playing, per_game=1, going=games):
            await asyncio.sleep(3)  # warm-up
            moves_per_s = await _throughput(ledger, seconds)
            for i in range(failovers):
                await asyncio.to_thread(cluster.wait_healthy, 180)
                old = cluster.leader()
                assert old is not None
                kind = "SIGKILL postgres" if i % 2 == 0 else "SIGSTOP host"
                fault_at = time.monotonic()
                windows.append(fault_at)
                if i % 2 == 0:
                    old.kill_postgres()
                else:
                    old.pause()
                try:
                    primary_at = await _primary_other_than(cluster, old, 120)
                finally:
                    old.resume()
                accepted_at = await _recovered(ledger, fault_at, 120)
                rows.append(
                    {
                        "fault": kind,
                        "old_primary": old.name,
                        "without_primary_s": round(primary_at - fault_at, 2),
                        "rto_s": round(accepted_at - fault_at, 2),
                        "unavailable_503": sum(
                            1
                            for s, a, st in ledger.sends
                            if fault_at <= a <= accepted_at and st == 503
                        ),
                    }
                )
                print(f"failover {i + 1}: {rows[-1]}", flush=True)
            await asyncio.to_thread(cluster.wait_healthy, 180)
            move_pairs = await _move_pairs(cluster, ledger, pairs, pair_seconds)
        # Resend every 503'd command with its key (as clients are told), then compare.
        async with server.async_client(timeout=15) as client:
            for key, (gid, token, body) in list(ledger.uncertain.items()):
                r = await client.post(
                    f"/v1/games/{gid}/commands",
                    json=body,
                    headers={**auth(token), "Idempotency-Key": key},
                )
                if r.status_code == 200:
                    ledger.ack(key, gid, token, body, r.json())
        recorded = await _recorded(cluster.dsn, list(ledger.acked))
        lost = [k for k in ledger.acked if k not in recorded]
        for row, fault_at in zip(rows, windows, strict=True):  # what each fault put at risk
            row["acknowledged_before"] = sum(1 for at in ledger.acked_at.values() if at < fault_at)
            row["lost"] = sum(1 for k in lost if ledger.acked_at[k] < fault_at)
        return {
            "commit_pairs": commit_pairs,
            "moves_per_s": round(moves_per_s, 1),
            "move_pairs": move_pairs,
            "acknowledged": len(ledger.acked),
            "lost_total": len(lost),
            "failovers": rows,
            "client_failures": ledger.failures[:10],
            "statuses": dict(ledger.statuses),
        }
    finally:
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--failovers", type=int, default=5)
    parser.add_argument("--games", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--pair-seconds", type=float, default=15)
    args = parser.parse_args()
    random.seed(1)
    report: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.node()} {platform.machine()}",
        "games": args.games,
        "seconds": args.seconds,
        "pair_seconds": args.pair_seconds,
    }
    with local_redis() as redis:
        cluster = PatroniCluster(synchronous=True, strict=True, fsync=True)
        try:
            cluster.start()
            report["synchronous"] = asyncio.run(
                _run(
                    cluster,
                    redis,
                    args.games,
                    args.seconds,
                    args.failovers,
                    args.pairs,
                    args.pair_seconds,
                )
            )
        finally:
            cluster.close()
    run = report["synchronous"]
    print("\nPostgreSQL alone (16 connections), synchronous vs asynchronous, side by side:")
    for pair in run["commit_pairs"]:
        sync, asyn = pair["synchronous"], pair["asynchronous"]
        print(
            f"  {sync['commits_per_s']} commits/s (p50 {sync['commit_p50_ms']} ms) vs "
            f"{asyn['commits_per_s']} commits/s (p50 {asyn['commit_p50_ms']} ms): "
            f"ratio {sync['commits_per_s'] / asyn['commits_per_s']:.3f}"
        )
    print("moves/s through HTTP, synchronous vs asynchronous, side by side:")
    for row in run["move_pairs"]:
        print(f"  {row['synchronous']} vs {row['asynchronous']}: ratio {row['ratio']}")
    print("fault              | without primary | RTO    | 503s | acked | lost")
    for row in run["failovers"]:
        print(
            f"{row['fault']:<18} | {row['without_primary_s']:>13.2f} s | {row['rto_s']:>4.2f} s "
            f"| {row['unavailable_503']:>4} | {row['acknowledged_before']:>5} | {row['lost']}"
        )
    print(f"acknowledged {run['acknowledged']}, lost {run['lost_total']}")
    print(f"client failures: {run['client_failures']}")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
