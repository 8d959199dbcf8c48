"""Heavy reads beside play (issue 25): a game's commands, quiet and while its server is
attacked with whole-game replay downloads and idle streams.

    .venv/bin/python -m bench.heavy_reads [--events 1600] [--commands 150] [--attackers 4]
                                          [--streams 150] [--workers 1] [--seed 1]

Starts ``manifest serve`` (``--workers``) on a fresh database of the PostgreSQL and Redis that
``PG_DSN`` / ``REDIS_URL`` name (else throwaway ones: ``tests/support/servers.py``), with the
default limits except ``MANIFEST_QUOTA_HEAVY=0`` (the replay quota off: the attack is as
if from many addresses, each within its quota) — the caps on heavy reads running at once stay
at their defaults, and each attacker connects from its own loopback address (127.0.0.2, …),
so each has its own per-client cap. Then:

1. the target: a 2-seat Empire Builder game played in-process (random legal commands, seeded)
   to ``--events`` events, left live; and a finished one (played to its end with a turn limit);
2. quiet: a seat plays ``--commands`` commands of a CARGO game alone (GET the game, GET
   ``/legal``, POST a random legal command); the POST's latency is the figure;
3. attacked, for each target (live: computed on every download; finished: kept): ``--streams``
   idle anonymous ``/stream``s on it, ``--attackers`` clients downloading its whole replay in a
   loop, and the same seat playing ``--commands`` more commands; its own ``/stream`` opened
   during the attack must deliver the event of its next command;
4. the kept replay of the finished game downloaded 20 times alone: its size, the server's
   time (the mean of the process's ``manifest_http_request_seconds`` for the route, from
   ``/metrics``) and the client's.

Prints median/p99 of the commands quiet and attacked, the statuses the attackers and the
player got, the replay's size and the targets of issue 25 (attacked median ≤ max(100 ms,
5 × quiet), p99 < 500 ms, no 5xx for the player, the seat's stream delivers; the kept replay
< 100 ms). Nothing is asserted; the machine is shared, so the figures are only as quiet as it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx

from service.application.bodies import CreateGame
from tests.integration.historyhelp import as_json, bot_command, in_process
from tests.integration.serverproc import ServerProcess
from tests.support.servers import fresh_database, postgres_dsn, redis_url

EB = "empire-builder"
CARGO = "jolly-cargo"


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


async def build_target(server: ServerProcess, events: int, seed: int, finish: bool) -> str:
    """An Empire Builder game of ``events`` events or more (left live), or played to its end
    with a turn limit (``finish``)."""
    options = {"turn_limit": 95} if finish else {}
    async with in_process(server) as manifest:
        created = as_json(
            await manifest.lobby.create(
                CreateGame(game=EB, seats=2, options=options, players=["ann", "bob"])
            )
        )
        tokens = [s["token"] for s in created["seats"]]
        rng = random.Random(seed)
        version = created["version"]
        while finish or version < events:
            answer = await bot_command(manifest, created["id"], tokens, rng)
            if answer is None:
                break
            version = answer["version"]
    game_id: str = created["id"]
    return game_id


class Player:
    """One seat's client playing CARGO games one after another (a new one when one ends)."""

    def __init__(self, client: httpx.AsyncClient, seed: int) -> None:
        self.client = client
        self.rng = random.Random(seed)
        self.game_id = ""
        self.tokens: list[str] = []
        self.statuses: Counter[int] = Counter()

    async def new_game(self) -> None:
        r = await self.client.post(
            "/v1/games", json={"game": CARGO, "seats": 2, "players": ["p", "q"]}
        )
        r.raise_for_status()
        body = r.json()
        self.game_id, self.tokens = body["id"], [s["token"] for s in body["seats"]]

    async def step(self) -> float | None:
        """One command; its POST's latency in seconds (None: not a command: a new game)."""
        base = f"/v1/games/{self.game_id}"
        doc = (await self.client.get(base)).json()
        if doc.get("status") != "active":
            await self.new_game()
            return None
        who = self.rng.choice(doc["to_act"])
        h = {"Authorization": f"Bearer {self.tokens[who]}"}
        legal = (await self.client.get(base + "/legal", headers=h)).json()
        body = {"command": self.rng.choice(legal["commands"]), "expected_version": legal["version"]}
        started = time.perf_counter()
        r = await self.client.post(base + "/commands", json=body, headers=h)
        took = time.perf_counter() - started
        self.statuses[r.status_code] += 1
        return took

    async def play(self, commands: int) -> list[float]:
        times: list[float] = []
        while len(times) < commands:
            took = await self.step()
            if took is not None:
                times.append(took)
        return times


async def own_stream_delivers(server: ServerProcess, player: Player) -> str:
    """The seat's own stream of its game, opened now: does it deliver its next command's event?"""
    base = f"/v1/games/{player.game_id}"
    h = {"Authorization": f"Bearer {player.tokens[0]}"}
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
        try:
            async with client.stream("GET", base + "/stream", headers=h) as r:
                if r.status_code != 200:
                    return f"refused: {r.status_code}"
                lines = r.aiter_lines()
                first = await _next_version(lines)
                await player.step()
                for _ in range(50):
                    version = await asyncio.wait_for(_next_version(lines), 10)
                    if version > first:
                        return "opened and delivered the next event"
                return "opened, nothing new delivered"
        except (httpx.HTTPError, TimeoutError) as error:
            return f"failed: {type(error).__name__}"


async def _next_version(lines: AsyncIterator[str]) -> int:
    async for line in lines:
        if line.startswith("data:"):
            version: int = json.loads(line[5:])["version"]
            return version
    raise EOFError


@contextlib.asynccontextmanager
async def attack(
    server: ServerProcess, game_id: str, attackers: int, streams: int
) -> AsyncIterator[dict[str, Any]]:
    """``streams`` idle anonymous streams and ``attackers`` replay downloaders, until exit."""
    stop = asyncio.Event()
    seen: dict[str, Any] = {"downloads": Counter(), "streams": Counter(), "bytes": 0}

    async def idle_stream(client: httpx.AsyncClient) -> None:
        try:
            async with client.stream("GET", f"/v1/games/{game_id}/stream") as r:
                seen["streams"][r.status_code] += 1
                if r.status_code == 200:
                    await stop.wait()
        except httpx.HTTPError as error:
            seen["streams"][type(error).__name__] += 1

    async def downloader(i: int) -> None:
        transport = httpx.AsyncHTTPTransport(local_address=f"127.0.0.{2 + i}")
        async with httpx.AsyncClient(base_url=server.url, timeout=60, transport=transport) as c:
            while not stop.is_set():
                try:
                    r = await c.get(f"/v1/games/{game_id}/replay")
                except httpx.HTTPError as error:
                    seen["downloads"][type(error).__name__] += 1
                    continue
                seen["downloads"][r.status_code] += 1
                if r.status_code == 200:
                    seen["bytes"] = len(r.content)
                else:  # a hostile client would not wait long: a tenth of Retry-After
                    await asyncio.sleep(0.1 * float(r.headers.get("retry-after", "1")))

    limits = httpx.Limits(max_connections=streams + 10, max_keepalive_connections=streams + 10)
    async with httpx.AsyncClient(base_url=server.url, timeout=None, limits=limits) as streamer:
        tasks = [asyncio.create_task(idle_stream(streamer)) for _ in range(streams)]
        tasks += [asyncio.create_task(downloader(i)) for i in range(attackers)]
        while sum(seen["downloads"].values()) < attackers:  # the attack is under way
            await asyncio.sleep(0.05)
        try:
            yield seen
        finally:
            stop.set()
            await asyncio.gather(*tasks, return_exceptions=True)


async def replay_seconds(client: httpx.AsyncClient) -> tuple[float, float]:
    """The server's (sum of seconds, count) of ``GET /replay`` answers so far (/metrics)."""
    text = (await client.get("/metrics")).text
    found = {"sum": 0.0, "count": 0.0}
    for line in text.splitlines():
        for kind in found:
            if line.startswith(f"manifest_http_request_seconds_{kind}{{") and (
                'route="/v1/games/{id}/replay"' in line
            ):
                found[kind] = float(line.rsplit(" ", 1)[1])
    return found["sum"], found["count"]


def figures(times: list[float]) -> dict[str, float]:
    return {
        "median_ms": statistics.median(times) * 1000,
        "p99_ms": pct(times, 0.99) * 1000,
        "max_ms": max(times) * 1000,
    }


async def run(server: ServerProcess, args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    started = time.perf_counter()
    live = await build_target(server, args.events, args.seed, finish=False)
    finished = await build_target(server, args.events, args.seed + 1, finish=True)
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as c:
        for name, game_id in (("live", live), ("finished", finished)):
            doc = (await c.get(f"/v1/games/{game_id}")).json()
            out[f"{name}_target"] = {"events": doc["version"], "status": doc["status"]}
    out["setup_s"] = time.perf_counter() - started

    async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
        player = Player(client, args.seed)
        await player.new_game()
        await player.play(20)  # warm-up
        out["quiet"] = figures(await player.play(args.commands))
        for name, game_id in (("live", live), ("finished", finished)):
            player.statuses.clear()
            async with attack(server, game_id, args.attackers, args.streams) as seen:
                times = await player.play(args.commands)
                stream = await own_stream_delivers(server, player)
                seen = {k: dict(v) if isinstance(v, Counter) else v for k, v in seen.items()}
            out[f"attacked_{name}"] = {
                **figures(times),
                "player_statuses": dict(player.statuses),
                "own_stream": stream,
                "attackers": seen,
            }

        # The kept replay, alone: client time, and server time from the process's latency
        # histogram (/metrics: one worker answers them all with --workers 1).
        took: list[float] = []
        size = 0
        before = await replay_seconds(client)
        for _ in range(20):
            t = time.perf_counter()
            r = await client.get(f"/v1/games/{finished}/replay")
            took.append(time.perf_counter() - t)
            size = len(r.content)
        after = await replay_seconds(client)
        server_ms = (after[0] - before[0]) / max(1, after[1] - before[1]) * 1000
        out["kept_replay"] = {"bytes": size, "server_mean_ms": server_ms, **figures(took)}
        t = time.perf_counter()
        r = await client.get(f"/v1/games/{live}/replay")
        out["live_replay"] = {"bytes": len(r.content), "ms": (time.perf_counter() - t) * 1000}
    return out


def report(out: dict[str, Any], args: argparse.Namespace) -> str:
    quiet = out["quiet"]
    lines = [
        f"targets: live {out['live_target']}, finished {out['finished_target']}"
        f" (set up in {out['setup_s']:.0f} s)",
        f"live replay: {out['live_replay']['bytes']:,} bytes, {out['live_replay']['ms']:.0f} ms"
        " (computed)",
        f"kept replay (finished game): {out['kept_replay']['bytes']:,} bytes, server time"
        f" {out['kept_replay']['server_mean_ms']:.1f} ms (mean of 20, /metrics; target < 100);"
        f" client time median {out['kept_replay']['median_ms']:.1f} ms,"
        f" p99 {out['kept_replay']['p99_ms']:.1f} ms",
        f"quiet commands: median {quiet['median_ms']:.1f} ms, p99 {quiet['p99_ms']:.1f} ms",
    ]
    bound = max(100.0, 5 * quiet["median_ms"])
    for name in ("live", "finished"):
        a = out[f"attacked_{name}"]
        fives = sum(n for s, n in a["player_statuses"].items() if s >= 500)
        lines.append(
            f"attacked ({name} target): median {a['median_ms']:.1f} ms (target ≤ {bound:.0f}),"
            f" p99 {a['p99_ms']:.1f} ms (target < 500), max {a['max_ms']:.0f} ms;"
            f" player statuses {a['player_statuses']} ({fives} 5xx); own stream: {a['own_stream']}"
        )
        lines.append(
            f"  attackers: downloads {a['attackers']['downloads']},"
            f" idle streams {a['attackers']['streams']}"
        )
    lines.append(
        f"({args.attackers} downloaders, {args.streams} idle streams, {args.commands} commands"
        f" per phase, --workers {args.workers})"
    )
    return "\n".join(lines)


@contextlib.contextmanager
def serving(args: argparse.Namespace) -> Iterator[ServerProcess]:
    with postgres_dsn() as pg, redis_url() as redis, fresh_database(pg) as dsn:
        server = ServerProcess(
            dsn,
            redis,
            workers=args.workers,
            MANIFEST_QUOTA_HEAVY="0",
            MANIFEST_QUOTA_READS="12000",
            MANIFEST_LOG_LEVEL="error",
        )
        server.start()
        try:
            yield server
        finally:
            server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=1600)
    parser.add_argument("--commands", type=int, default=150)
    parser.add_argument("--attackers", type=int, default=4)
    parser.add_argument("--streams", type=int, default=150)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    with serving(args) as server:
        out = asyncio.run(run(server, args))
    print(report(out, args))
    print(f"(load average before the run: {load:.2f})")
    if args.json:
        print(json.dumps(out, indent=2, default=str))


if __name__ == "__main__":
    main()
