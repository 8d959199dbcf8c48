"""End-to-end throughput and latency of bot games over HTTP, beside the machine's ceiling.

    .venv/bin/python -m bench.e2e [--games 64] [--seconds 20] [--workers 1] [--warmup 5]
                                  [--rate R|half] [--long-moves 2000]

Starts a throwaway PostgreSQL 15 and Redis (``tests/support/servers.py``; ``PG_DSN`` /
``REDIS_URL`` are used instead when set) and a fresh database, then measures, with one and the
same load generator (``--games`` concurrent keep-alive HTTP/1.1 clients on one asyncio loop,
hand-written so the client costs little of the CPU it shares with the server):

1. the ceiling: ``bench/ceiling.py`` (one asyncpg INSERT and one Redis SET per request) under
   uvicorn with ``--workers``, hammered with ``POST /ceiling`` for ``--seconds``;
2. end to end: ``manifest serve --workers N`` playing ``--games`` bot games of Tom Jolly's CARGO
   (2 players, random crate placement) at once. Each bot: ``GET /legal`` for the seat it expects
   to act (the seat of the last ``turn_began`` event in the previous answer, else the seat that
   moved last; the other seat when that one has nothing to do), then ``POST /commands`` with a
   uniformly random legal command and ``expected_version``. A move is one accepted
   ``POST /commands``. A finished game is replaced by a new one in its slot;
3. with ``--rate``, open loop on the same server: moves offered at R per second (``half``: half
   the moves/s just measured), evenly spaced, taken by the ``--games`` bots; a move's latency
   runs from its offer to its accepted answer, so queueing counts (p50/p99 reported);
4. with ``--long-moves N`` (default 2,000; 0 skips), one game played alone past move N, and
   the server's CPU per move at moves 10–109, 500–599, 1000–1099, 1900–1999 (flat or not;
   counted to the nanosecond from ``schedstat`` where the kernel keeps it).

Phases 1–3 run ``--warmup`` seconds before the measured window. The servers are probed only once
every worker listens (``--workers``: one ``SO_REUSEPORT`` socket each), so the load's
connections are spread over all of them; the report gives each server process's CPU and the
connections each holds. The report gives requests/s, moves/s, p50/p99 latencies, the ratio
moves/s ÷ ceiling requests/s against issue 16's targets (≥ 1,000 moves/s, ≥ 0.40 of the ceiling,
server CPU above 1.3 cores with two workers), and
where the CPU went during each window (client, server processes, PostgreSQL, Redis). The numbers
are also written, per worker count, to ``bench/results/e2e-latest.json``. After the phases,
``bench.move_work`` times the pure work of a move in this process and the report gives the ratio
this workload allows at best: a move's requests each as cheap as a ceiling request, plus that
work (``bound``). ``--only ceiling|e2e`` runs one phase and prints it as JSON (nothing saved).
Nothing is asserted; every process started is stopped, also on failure or SIGTERM. The machine
is shared with whatever else runs: the report warns when other processes took CPU during a
window.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import json
import os
import platform
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from bench import move_work
from tests.support.servers import free_port, fresh_database, postgres_dsn, redis_url
from tests.support.sockets import connections_by_process, listeners

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "e2e-latest.json"
#: Issue 16's targets for ``--workers 2`` (issue 3 had asked for half the ceiling, which its
#: note showed out of reach for a move's work on this stack: 0.46 at best, then).
TARGET_MOVES_PER_S = 1000.0
TARGET_RATIO = 0.40
TARGET_SERVER_CORES = 1.3
GAME = "jolly-cargo"
START_TIMEOUT_S = 90.0
DRAIN_TIMEOUT_S = 30.0
#: Cores used by processes other than ours during a window above which the report warns
#: (per-process and machine CPU times come from different kernel clocks: ±0.2 is noise).
NOISE_CORES = 0.25

#: A load client: runs requests on its connection until the given perf_counter time.
Client = Callable[["Connection", "Recorder", float], Coroutine[Any, Any, None]]

_encode = msgspec.json.encode
_decode = msgspec.json.decode


# --- a cheap HTTP/1.1 keep-alive client ------------------------------------------------------
class HttpError(RuntimeError):
    pass


class Connection:
    """One keep-alive HTTP/1.1 connection; one request at a time. Only what the two servers
    send is understood: responses with ``Content-Length``."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def _open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    async def request(
        self, method: str, path: str, body: bytes | None = None, token: str | None = None
    ) -> tuple[int, bytes]:
        if self.writer is None:
            await self._open()
        assert self.reader is not None and self.writer is not None
        head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\n"
        if token is not None:
            head += f"Authorization: Bearer {token}\r\n"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        self.writer.write(head.encode() + b"\r\n" + body if body else head.encode() + b"\r\n")
        raw = await self.reader.readuntil(b"\r\n\r\n")
        status = int(raw[9:12])
        lower = raw.lower()
        at = lower.find(b"\r\ncontent-length:")
        if at < 0:
            raise HttpError(f"{method} {path}: response without Content-Length: {raw[:200]!r}")
        end = lower.index(b"\r\n", at + 2)
        length = int(lower[at + 17 : end])
        payload = await self.reader.readexactly(length) if length else b""
        if b"\r\nconnection: close" in lower:
            await self.close()
        return status, payload

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(Exception):
                await self.writer.wait_closed()
        self.reader = self.writer = None


# --- measurement -----------------------------------------------------------------------------
@dataclass
class Window:
    start: float
    end: float

    def __contains__(self, t: float) -> bool:
        return self.start <= t <= self.end


@dataclass
class Recorder:
    window: Window
    latencies: dict[str, list[float]] = field(default_factory=dict)
    statuses: dict[str, dict[int, int]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def request(self, kind: str, started: float, ended: float, status: int) -> None:
        if ended not in self.window:
            return
        self.latencies.setdefault(kind, []).append(ended - started)
        by_status = self.statuses.setdefault(kind, {})
        by_status[status] = by_status.get(status, 0) + 1

    def count(self, what: str, at: float) -> None:
        if at in self.window:
            self.counts[what] = self.counts.get(what, 0) + 1


def percentiles(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p99": None, "mean": None, "max": None}
    ordered = sorted(values)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 2)

    return {
        "p50": at(0.50),
        "p99": at(0.99),
        "mean": round(sum(ordered) / len(ordered) * 1000, 2),
        "max": round(ordered[-1] * 1000, 2),
    }


async def timed(
    rec: Recorder,
    kind: str,
    conn: Connection,
    method: str,
    path: str,
    body: bytes | None = None,
    token: str | None = None,
) -> tuple[int, bytes]:
    started = time.perf_counter()
    status, payload = await conn.request(method, path, body, token)
    rec.request(kind, started, time.perf_counter(), status)
    return status, payload


# --- CPU accounting from /proc (Linux) -------------------------------------------------------
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _processes() -> dict[int, tuple[int, str, float]]:
    """pid -> (ppid, comm, cpu seconds) of every process we can read."""
    found: dict[int, tuple[int, str, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        rest = stat[stat.rindex(")") + 2 :].split()
        # rest[0] is state (field 3); utime, stime are fields 14, 15
        found[int(entry)] = (int(rest[1]), comm, (int(rest[11]) + int(rest[12])) / _TICK)
    return found


def _machine_busy() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    total = sum(fields[:8])
    return (total - idle) / _TICK, total / _TICK


def _descendants(children: dict[int, list[int]], root: int) -> set[int]:
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, []))
    return found


def _trees(procs: dict[int, tuple[int, str, float]], server_pid: int) -> tuple[set[int], set[int]]:
    """(the server's process tree, the rest of this process's tree) among ``procs``."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    server_tree = _descendants(children, server_pid)
    return server_tree, _descendants(children, os.getpid()) - server_tree


def cpu_snapshot(server_pid: int) -> dict[str, float]:
    """CPU seconds so far of: this process (the client), the server's process tree, and the
    PostgreSQL and Redis this process started (not anyone else's); and of the whole machine."""
    procs = _processes()
    server_tree, ours = _trees(procs, server_pid)
    out = {"client": time.process_time(), "server": 0.0, "postgres": 0.0, "redis": 0.0}
    for pid, (_, comm, cpu) in procs.items():
        if pid in server_tree:
            out["server"] += cpu
            out[f"pid{pid}"] = cpu
        elif pid in ours and comm == "postgres":
            out["postgres"] += cpu
        elif pid in ours and comm.startswith("redis-server"):
            out["redis"] += cpu
    out["machine_busy"], out["machine_total"] = _machine_busy()
    return out


def exact_server_cpu(server_pid: int) -> float | None:
    """CPU seconds so far of the server's process tree, to the nanosecond: the sum of
    ``/proc/<pid>/task/<tid>/schedstat`` (time on a CPU) over every thread of every process
    (``/proc/<pid>/stat`` counts in clock ticks, 10 ms: ±10 % over a window of 100 moves).
    None where the kernel does not keep it."""
    if not Path("/proc/self/schedstat").exists():
        return None
    server_tree, _ = _trees(_processes(), server_pid)
    total_ns = 0
    for pid in server_tree:
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue  # gone meanwhile
        for tid in threads:
            try:
                total_ns += int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue  # a thread gone meanwhile
    return total_ns / 1e9


def cpu_report(before: dict[str, float], after: dict[str, float], seconds: float) -> dict[str, Any]:
    """Cores used per component over the window (1.0 = one core fully busy)."""
    used: dict[str, Any] = {
        k: round((after[k] - before[k]) / seconds, 2)
        for k in before
        if k != "machine_total" and not k.startswith("pid")
    }
    # Each server process's share (the supervisor and every worker): an idle worker shows here.
    used["server_processes"] = sorted(
        (round((after[k] - before.get(k, 0.0)) / seconds, 2) for k in after if k.startswith("pid")),
        reverse=True,
    )
    cores = os.cpu_count() or 1
    used["machine_cores"] = cores
    used["machine_busy"] = round((after["machine_busy"] - before["machine_busy"]) / seconds, 2)
    used["other"] = round(
        used["machine_busy"] - used["client"] - used["server"] - used["postgres"] - used["redis"],
        2,
    )
    return used


# --- processes -------------------------------------------------------------------------------
class Server:
    """A server subprocess in its own process group; stopped (with its workers) by ``stop``."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], port: int) -> None:
        self.name = name
        self.port = port
        self.log_path = Path(tempfile.mkstemp(prefix=f"bench-{name}-", suffix=".log")[1])
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def tail(self, lines: int = 40) -> str:
        self._log.flush()
        text = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])

    async def wait_ready(
        self, probe: Callable[[Connection], Awaitable[bool]], workers: int = 1
    ) -> None:
        """Until ``probe`` succeeds and ``workers`` sockets listen on the port: a worker
        listens once its application has started (``service.workers``), and connections
        opened before every worker listens would all stay with the ones that do."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited ({self.proc.returncode}):\n{self.tail()}")
            conn = Connection("127.0.0.1", self.port)
            try:
                if listeners(self.port) >= workers and await probe(conn):
                    return
            except (OSError, asyncio.IncompleteReadError, HttpError):
                pass
            finally:
                await conn.close()
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"{self.name} not ready after {START_TIMEOUT_S}s:\n{self.tail()}"
                )
            await asyncio.sleep(0.1)

    def stop(self) -> None:
        """SIGTERM to the uvicorn supervisor (it stops its workers), then SIGKILL to whatever is
        left of the process group."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=20)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        self._log.close()
        with contextlib.suppress(OSError):
            self.log_path.unlink()


def server_pids(root: int) -> set[int]:
    procs = _processes()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    return _descendants(children, root)


@contextlib.contextmanager
def server(name: str, argv: list[str], env: dict[str, str], port: int) -> Iterator[Server]:
    proc = Server(name, argv, env, port)
    try:
        yield proc
    except BaseException:
        print(f"--- {name} log (tail) ---\n{proc.tail()}", file=sys.stderr)
        raise
    finally:
        proc.stop()


# --- load ------------------------------------------------------------------------------------
async def run_load(
    clients: list[Client],
    port: int,
    warmup: float,
    seconds: float,
    server_pid: int,
) -> tuple[Recorder, dict[str, Any]]:
    now = time.perf_counter()
    window = Window(now + warmup, now + warmup + seconds)
    rec = Recorder(window)
    conns = [Connection("127.0.0.1", port) for _ in clients]
    tasks = [
        asyncio.create_task(client(conn, rec, window.end))
        for client, conn in zip(clients, conns, strict=True)
    ]

    async def sample() -> dict[str, Any]:
        await asyncio.sleep(max(0.0, window.start - time.perf_counter()))
        before = cpu_snapshot(server_pid)
        await asyncio.sleep(max(0.0, window.end - time.perf_counter()))
        return cpu_report(before, cpu_snapshot(server_pid), seconds)

    cpu = await sample()
    cpu["connections_by_process"] = connections_by_process(port, server_pids(server_pid))
    done, pending = await asyncio.wait(tasks, timeout=DRAIN_TIMEOUT_S)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    for conn in conns:
        await conn.close()
    failures = [t.exception() for t in done if t.exception() is not None]
    if failures:
        raise RuntimeError(f"{len(failures)} load clients failed; first: {failures[0]!r}")
    return rec, cpu


def ceiling_client(slot: int) -> Client:
    async def client(conn: Connection, rec: Recorder, until: float) -> None:
        n = 0
        while time.perf_counter() < until:
            body = _encode({"slot": slot, "n": n, "note": "ceiling"})
            status, _ = await timed(rec, "ceiling", conn, "POST", "/ceiling", body)
            if status != 200:
                raise HttpError(f"POST /ceiling answered {status}")
            n += 1

    return client


class Bot:
    """One bot slot: plays CARGO games one after another on its connection. ``move`` makes
    one move: ``GET /legal`` for the seat it expects to act (the seat of the last
    ``turn_began`` in the previous answer, else the seat that moved last; the other seat when
    that one has nothing to do), then ``POST /commands`` with a legal command and
    ``expected_version``; a finished game is replaced by a new one. ``prefer`` (a command
    type) is chosen whenever legal, else a uniformly random legal command."""

    def __init__(self, slot: int, seed: int, prefer: str | None = None) -> None:
        self.rng = random.Random(seed)
        self.prefer = prefer
        self.create = _encode(
            {
                "game": GAME,
                "seats": 2,
                "options": {"crate_placement": "random"},
                "players": [f"bot{slot}a", f"bot{slot}b"],
            }
        )
        self.base: str | None = None
        self.tokens: list[str] = []
        self.seat = 0
        self.known: _Legal | None = None
        #: Accepted moves in the current game (the last one made is move number ``moves``).
        self.moves = 0

    async def new_game(self, conn: Connection, rec: Recorder) -> None:
        status, payload = await timed(rec, "create", conn, "POST", "/v1/games", self.create)
        if status != 201:
            raise HttpError(f"POST /v1/games answered {status}: {payload[:300]!r}")
        game = _decode(payload)
        rec.count("games_started", time.perf_counter())
        self.base = f"/v1/games/{game['id']}"
        self.tokens = [s["token"] for s in game["seats"]]
        self.seat, self.known, self.moves = 0, None, 0

    def choose(self, commands: list[msgspec.Raw]) -> msgspec.Raw:
        if self.prefer is not None:
            for command in commands:
                if _TYPED.decode(command).type == self.prefer:
                    return command
        return self.rng.choice(commands)

    async def move(self, conn: Connection, rec: Recorder) -> None:
        """Until one command is accepted."""
        while True:
            if self.base is None:
                await self.new_game(conn, rec)
            assert self.base is not None
            legal: _Legal | None = self.known
            self.known = None
            order = [self.seat] + [s for s in range(len(self.tokens)) if s != self.seat]
            for candidate in [] if legal else order:
                status, payload = await timed(
                    rec, "legal", conn, "GET", self.base + "/legal", token=self.tokens[candidate]
                )
                if status != 200:
                    raise HttpError(f"GET legal answered {status}: {payload[:300]!r}")
                doc = _LEGAL.decode(payload)
                if doc.commands:
                    self.seat, legal = candidate, doc
                    break
            if legal is None:  # nobody can act: over (or a projection behind: look again)
                status, payload = await timed(
                    rec, "game", conn, "GET", self.base, token=self.tokens[0]
                )
                if _decode(payload)["status"] == "finished":
                    rec.count("games_finished", time.perf_counter())
                    self.base = None
                continue
            body = _encode(
                {"command": self.choose(legal.commands), "expected_version": legal.version}
            )
            status, payload = await timed(
                rec, "command", conn, "POST", self.base + "/commands", body, self.tokens[self.seat]
            )
            if status == 200:
                rec.count("moves", time.perf_counter())
                self.moves += 1
                # The answer says who acts next and, if it is still this seat, what it may do:
                # only when the turn passes does the bot need GET /legal.
                answer = _ACCEPTED.decode(payload)
                if self.seat in answer.to_act and answer.legal:
                    self.known = _Legal(answer.version, answer.legal)
                elif answer.to_act:
                    self.seat = answer.to_act[0]
                return
            if status >= 500:
                raise HttpError(f"POST commands answered {status}: {payload[:300]!r}")


def bot_client(slot: int, seed: int) -> Client:
    """Closed loop: the next move as soon as the last one is answered."""
    bot = Bot(slot, seed)

    async def client(conn: Connection, rec: Recorder, until: float) -> None:
        while time.perf_counter() < until:
            await bot.move(conn, rec)

    return client


def open_loop_client(slot: int, seed: int, offers: asyncio.Queue[float]) -> Client:
    """Open loop: takes the time a move was offered from ``offers`` and makes that move; its
    latency runs from the offer (so time spent waiting for a free bot counts)."""
    bot = Bot(slot, seed)

    async def client(conn: Connection, rec: Recorder, until: float) -> None:
        while True:
            offered = await offers.get()
            if offered > until:
                return
            await bot.move(conn, rec)
            rec.request("offered_move", offered, time.perf_counter(), 200)

    return client


class _Accepted(msgspec.Struct):
    """What a bot reads of an accepted command's answer (the rest, events and receipt, is
    skipped unparsed: the load generator shares the machine with the server)."""

    version: int
    to_act: list[int] = []
    legal: list[msgspec.Raw] = []


class _Legal(msgspec.Struct):
    """A seat's legal commands as a bot reads them: each command kept as its JSON text (it
    sends one back as it came, and builds no objects for the others)."""

    version: int
    commands: list[msgspec.Raw]


class _Typed(msgspec.Struct):
    type: str


_ACCEPTED = msgspec.json.Decoder(_Accepted)
_LEGAL = msgspec.json.Decoder(_Legal)
_TYPED = msgspec.json.Decoder(_Typed)


# --- phases ----------------------------------------------------------------------------------
async def _probe_ceiling(conn: Connection) -> bool:
    status, _ = await conn.request("POST", "/ceiling", b'{"probe": true}')
    return status == 200


async def _probe_manifest(conn: Connection) -> bool:
    status, _ = await conn.request("GET", "/readyz")
    return status == 200


async def _create_ceiling_table(dsn: str) -> None:
    import asyncpg  # type: ignore[import-untyped]

    from bench.ceiling import CREATE_TABLE

    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(CREATE_TABLE)
    finally:
        await conn.close()


T = TypeVar("T")


def _client_loop(main: Coroutine[Any, Any, T]) -> T:
    """Run the load generator on uvloop, the loop the servers run on: it shares the two cores
    with what it measures, so the less CPU it takes per request, the less it skews either
    phase (both phases run on it)."""
    import uvloop

    return uvloop.run(main)


def measure_ceiling(args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "bench.ceiling",
        "--port",
        str(port),
        "--workers",
        str(args.workers),
    ]
    with server("ceiling", argv, env, port) as proc:

        async def go() -> tuple[Recorder, dict[str, Any]]:
            await proc.wait_ready(_probe_ceiling, args.workers)
            clients = [ceiling_client(i) for i in range(args.games)]
            return await run_load(clients, port, args.warmup, args.seconds, proc.pid)

        rec, cpu = _client_loop(go())
    latencies = rec.latencies.get("ceiling", [])
    return {
        "requests": len(latencies),
        "requests_per_s": round(len(latencies) / args.seconds, 1),
        "latency_ms": percentiles(latencies),
        "statuses": rec.statuses.get("ceiling", {}),
        "cpu_cores": cpu,
    }


def measure_e2e(args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "service.cli",
        "serve",
        "--port",
        str(port),
        "--workers",
        str(args.workers),
    ]
    with server("manifest", argv, env, port) as proc:

        async def go() -> tuple[Recorder, dict[str, Any]]:
            await proc.wait_ready(_probe_manifest, args.workers)
            clients = [bot_client(i, args.seed * 100_003 + i) for i in range(args.games)]
            return await run_load(clients, port, args.warmup, args.seconds, proc.pid)

        rec, cpu = _client_loop(go())
        closed = _closed_loop_result(args, rec, cpu)
        rate = _offered_rate(args.rate, closed["moves_per_s"])
        if rate:
            closed["open_loop"] = _client_loop(open_loop(args, port, proc.pid, rate))
        if args.long_moves:
            closed["long_game"] = _client_loop(long_game(port, proc.pid, args.long_moves))
    return closed


def _closed_loop_result(
    args: argparse.Namespace, rec: Recorder, cpu: dict[str, Any]
) -> dict[str, Any]:
    moves = rec.counts.get("moves", 0)
    requests = sum(len(v) for v in rec.latencies.values())
    return {
        "moves": moves,
        "moves_per_s": round(moves / args.seconds, 1),
        "requests_per_s": round(requests / args.seconds, 1),
        "requests_per_move": round(requests / moves, 2) if moves else None,
        "games_started": rec.counts.get("games_started", 0),
        "games_finished": rec.counts.get("games_finished", 0),
        "command_latency_ms": percentiles(rec.latencies.get("command", [])),
        "legal_latency_ms": percentiles(rec.latencies.get("legal", [])),
        "create_latency_ms": percentiles(rec.latencies.get("create", [])),
        "statuses": {k: v for k, v in rec.statuses.items()},
        "cpu_cores": cpu,
    }


def _offered_rate(option: str | None, closed_moves_per_s: float) -> float | None:
    """``--rate``: moves/s, or ``half`` (half the closed loop's moves/s measured just now)."""
    if not option:
        return None
    if option == "half":
        return round(closed_moves_per_s / 2, 1) or None
    return float(option)


async def open_loop(
    args: argparse.Namespace, port: int, server_pid: int, rate: float
) -> dict[str, Any]:
    """Moves offered at ``rate`` per second, evenly spaced, whether or not earlier ones were
    answered; ``--games`` bots take them. A move's latency runs from its offer to its
    accepted answer (GET /legal included), so a server that falls behind shows as latency
    rather than as a lower rate (no coordinated omission)."""
    offers: asyncio.Queue[float] = asyncio.Queue()
    bots = [open_loop_client(i, args.seed * 7_919 + i, offers) for i in range(args.games)]

    async def offer(conn: Connection, rec: Recorder, until: float) -> None:
        start, i = time.perf_counter(), 0
        while (at := start + i / rate) <= until:
            if (wait := at - time.perf_counter()) > 0:
                await asyncio.sleep(wait)
            offers.put_nowait(at)
            i += 1
        for _ in bots:
            offers.put_nowait(float("inf"))

    rec, cpu = await run_load([*bots, offer], port, args.warmup, args.seconds, server_pid)
    return {
        "offered_moves_per_s": rate,
        "moves_per_s": round(rec.counts.get("moves", 0) / args.seconds, 1),
        "move_latency_ms": percentiles(rec.latencies.get("offered_move", [])),
        "command_latency_ms": percentiles(rec.latencies.get("command", [])),
        "cpu_cores": cpu,
    }


#: Moves of one long game whose cost ``long_game`` reports: 50 moves starting at each.
LONG_GAME_BUCKETS = (10, 500, 1000, 1900)
LONG_GAME_BUCKET = 100


async def long_game(port: int, server_pid: int, moves: int) -> dict[str, Any]:
    """One game played move after move by one client, nothing else running: the cost of its
    moves number 10–109, 500–599, 1000–1099, 1900–1999 (those within ``moves``): the server's
    CPU per move and the POST /commands latency. The bot ends its turn whenever it may, so the
    game outlasts ``moves`` (a random CARGO game ends after 1,300–2,200 events)."""
    bot = Bot(0, 4_242, prefer="end_turn")

    def server_cpu() -> float:
        seconds = exact_server_cpu(server_pid)
        return cpu_snapshot(server_pid)["server"] if seconds is None else seconds

    conn = Connection("127.0.0.1", port)
    rec = Recorder(Window(0.0, float("inf")))
    buckets: list[dict[str, Any]] = []
    try:
        await bot.new_game(conn, rec)
        game = bot.base
        for first in (b for b in LONG_GAME_BUCKETS if b + LONG_GAME_BUCKET <= moves + 1):
            while bot.moves < first - 1:
                await bot.move(conn, rec)
            rec.latencies.clear()
            before = server_cpu()
            while bot.moves < first - 1 + LONG_GAME_BUCKET:
                await bot.move(conn, rec)
            if bot.base != game:
                raise RuntimeError(f"the long game ended before move {bot.moves}")
            cpu = server_cpu() - before
            buckets.append(
                {
                    "moves": f"{first}-{first + LONG_GAME_BUCKET - 1}",
                    "server_cpu_us_per_move": round(cpu / LONG_GAME_BUCKET * 1e6),
                    "command_latency_ms": percentiles(rec.latencies.get("command", [])),
                }
            )
    finally:
        await conn.close()
    first_cost, last_cost = (
        buckets[0]["server_cpu_us_per_move"],
        buckets[-1]["server_cpu_us_per_move"],
    )
    return {
        "buckets": buckets,
        "last_over_first_cpu": round(last_cost / first_cost, 2) if first_cost else None,
    }


# --- report ----------------------------------------------------------------------------------
def _lat(d: dict[str, Any]) -> str:
    if d["p50"] is None:
        return "(none in the window)"
    return f"p50 {d['p50']} ms  p99 {d['p99']} ms  (mean {d['mean']}, max {d['max']})"


def _cpu(d: dict[str, Any]) -> str:
    return (
        f"client {d['client']}  server {d['server']} (by process {d['server_processes']}, "
        f"connections {d['connections_by_process']})  postgres {d['postgres']}  "
        f"redis {d['redis']}  other processes {d['other']}  = {d['machine_busy']} of "
        f"{d['machine_cores']} cores"
    )


def _noise(result: dict[str, Any]) -> float:
    phases = [p for p in (result["ceiling"], result["e2e"]) if p is not None]
    return max(float(p["cpu_cores"]["other"]) for p in phases)


def report(result: dict[str, Any]) -> str:
    c, e = result["ceiling"], result["e2e"]
    t = result["targets"]
    lines = [
        f"bench.e2e  workers={result['workers']}  games={result['games']}  "
        f"window={result['seconds']}s (after {result['warmup']}s warm-up)  "
        f"cpus={result['machine']['cpus']}",
        "",
        f"ceiling   {c['requests_per_s']:>9,.1f} req/s     POST /ceiling     "
        f"{_lat(c['latency_ms'])}",
        f"          cpu cores: {_cpu(c['cpu_cores'])}",
        f"e2e       {e['moves_per_s']:>9,.1f} moves/s   POST /commands    "
        f"{_lat(e['command_latency_ms'])}",
        f"          {'':>9} {'':7}   GET /legal        {_lat(e['legal_latency_ms'])}",
        f"          {'':>9} {'':7}   POST /v1/games    {_lat(e['create_latency_ms'])}",
        f"          {e['requests_per_s']:,.1f} req/s, {e['requests_per_move']} requests per move; "
        f"games started {e['games_started']}, finished {e['games_finished']}",
        f"          statuses: {json.dumps(e['statuses'])}",
        f"          cpu cores: {_cpu(e['cpu_cores'])}",
        "",
        *_open_loop_lines(e.get("open_loop")),
        *_long_game_lines(e.get("long_game")),
        f"ratio     e2e moves/s ÷ ceiling req/s = {result['ratio']:.3f}   server cores: "
        f"ceiling {c['cpu_cores']['server']}, e2e {e['cpu_cores']['server']} "
        f"(workers={result['workers']})",
        *_bound_lines(result["bound"]),
        *(
            [
                f"WARNING   other processes used {noise} cores during a window: the machine "
                "was shared, the numbers are disturbed"
            ]
            if (noise := _noise(result)) >= NOISE_CORES
            else []
        ),
        f"target: ≥ {TARGET_MOVES_PER_S:,.0f} moves/s, ≥ {TARGET_RATIO} of the ceiling and server "
        f"CPU > {TARGET_SERVER_CORES} cores (--workers 2)  ->  "
        f"moves/s {'MET' if t['moves_per_s_met'] else 'NOT MET'}, "
        f"ratio {'MET' if t['ratio_met'] else 'NOT MET'}, "
        f"server cores {'MET' if t['server_cores_met'] else 'NOT MET'}",
    ]
    return "\n".join(lines)


def _open_loop_lines(o: dict[str, Any] | None) -> list[str]:
    if not o:
        return []
    return [
        f"open loop {o['offered_moves_per_s']:>9,.1f} moves/s offered, {o['moves_per_s']:,.1f} "
        f"answered   move from offer   {_lat(o['move_latency_ms'])}",
        f"          {'':>9} {'':7}   POST /commands    {_lat(o['command_latency_ms'])}",
        f"          cpu cores: {_cpu(o['cpu_cores'])}",
    ]


def _long_game_lines(g: dict[str, Any] | None) -> list[str]:
    if not g:
        return []
    parts = [
        f"{b['moves']}: {b['server_cpu_us_per_move']} µs, p50 {b['command_latency_ms']['p50']} ms"
        for b in g["buckets"]
    ]
    return [
        "long game server cpu per move, POST /commands p50 (one game alone): " + "; ".join(parts),
        f"          last ÷ first = {g['last_over_first_cpu']} (1.0 = flat)",
    ]


def _bound_lines(b: dict[str, Any] | None) -> list[str]:
    if not b:
        return []
    return [
        f"server cpu per ceiling request {b['ceiling_server_us_per_request']} µs, per move "
        f"{b['e2e_server_us_per_move']} µs; pure work of a move "
        f"{b['pure_work_us_per_move']} µs {json.dumps(b['pure_work_us_by_part'])}",
        f"bound     {b['requests_per_move']} ceiling-cost requests + the pure work per move "
        f"-> ratio ≤ {b['ratio_bound']:.3f}",
    ]


def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def write_results(result: dict[str, Any], path: Path) -> None:
    """Keep one entry per worker count in ``path`` (the latest run of each)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        existing = json.loads(path.read_text())
        runs = existing.get("runs", {}) if isinstance(existing, dict) else {}
    except (OSError, ValueError):
        runs = {}
    runs[f"workers={result['workers']}"] = result
    path.write_text(json.dumps({"runs": dict(sorted(runs.items()))}, indent=2) + "\n")


# --- main ------------------------------------------------------------------------------------
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=64, help="concurrent clients / games")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured window per phase")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds before the window")
    parser.add_argument("--workers", type=int, default=1, help="uvicorn workers (both servers)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the bots' choices")
    parser.add_argument(
        "--rate",
        help="also run open loop: moves offered per second, or 'half' (of the closed loop's)",
    )
    parser.add_argument(
        "--long-moves",
        type=int,
        default=2000,
        help="also play one game this many moves long, alone, and report its cost (0: skip)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="JSON results file")
    parser.add_argument(
        "--only", choices=["ceiling", "e2e"], help="run one phase (printed as JSON, not saved)"
    )
    args = parser.parse_args()
    # SIGTERM unwinds like Ctrl-C, so every server below is stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    load_before = os.getloadavg()[0]
    data_dir = tempfile.mkdtemp(prefix="bench-e2e-")
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(shutil.rmtree, data_dir, ignore_errors=True)
        ceiling, e2e = _measure(args, data_dir)
    _report(args, load_before, ceiling, e2e)


def _measure(
    args: argparse.Namespace, data_dir: str
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    with postgres_dsn() as base_dsn, redis_url() as redis, fresh_database(base_dsn) as dsn:
        prefix = f"bench{uuid.uuid4().hex[:8]}"
        env = {
            **os.environ,
            "PG_DSN": dsn,
            "REDIS_URL": redis,
            "MANIFEST_REDIS_PREFIX": prefix,
            "MANIFEST_ACCESS_LOG": "0",
            "MANIFEST_LOG_LEVEL": "warning",
            "MANIFEST_DATA_DIR": data_dir,
            # 64 bot games from one address: the load generator is not a hostile client
            **{f"MANIFEST_QUOTA_{k}": "0" for k in ("CREATE", "COMMANDS", "MESSAGES", "READS")},
            **{f"MANIFEST_QUOTA_{k}_PER_ADDRESS": "0" for k in ("COMMANDS", "MESSAGES")},
            # A throwaway database: the generated key kept in it signs (as in development).
            "MANIFEST_SIGNING_KEY_SOURCE": "database",
        }
        try:
            asyncio.run(_create_ceiling_table(dsn))
            ceiling = None if args.only == "e2e" else measure_ceiling(args, env)
            e2e = None if args.only == "ceiling" else measure_e2e(args, env)
        finally:
            if os.environ.get("REDIS_URL"):  # someone else's Redis: leave nothing behind
                asyncio.run(_clear_redis(redis, prefix))
    return ceiling, e2e


def _report(args: argparse.Namespace, load_before: float, ceiling: Any, e2e: Any) -> None:
    if ceiling is None or e2e is None:
        print(json.dumps(ceiling or e2e, indent=2))
        return
    ceiling_rps = ceiling["requests_per_s"] if ceiling else None
    ratio = e2e["moves_per_s"] / ceiling_rps if ceiling_rps else 0.0
    result: dict[str, Any] = {
        "at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "commit": _git_commit(),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_before": round(load_before, 2),
        },
        "workers": args.workers,
        "games": args.games,
        "seconds": args.seconds,
        "warmup": args.warmup,
        "ceiling": ceiling,
        "e2e": e2e,
        "ratio": round(ratio, 3),
        "targets": {
            "moves_per_s": TARGET_MOVES_PER_S,
            "ratio": TARGET_RATIO,
            "moves_per_s_met": e2e["moves_per_s"] >= TARGET_MOVES_PER_S,
            "ratio_met": ratio >= TARGET_RATIO,
            "server_cores": TARGET_SERVER_CORES,
            "server_cores_met": e2e["cpu_cores"]["server"] > TARGET_SERVER_CORES,
        },
    }
    result["bound"] = _bound(ceiling, e2e)
    # Another process's CPU use in a window makes the figures unrepresentative: say so.
    result["disturbed_by_other_processes"] = _noise(result) >= NOISE_CORES
    print(report(result))
    write_results(result, args.out)
    shown = args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out
    print(f"\nwritten: {shown}")


def _bound(ceiling: dict[str, Any], e2e: dict[str, Any]) -> dict[str, Any]:
    """The best ratio this workload allows (``bench.move_work``): every request as cheap as a
    ceiling request, plus the pure work of a move measured now, in this process."""
    work = move_work.measure()
    ceiling_s = ceiling["cpu_cores"]["server"] / ceiling["requests_per_s"]
    return {
        "ceiling_server_us_per_request": round(ceiling_s * 1e6, 1),
        "e2e_server_us_per_move": round(e2e["cpu_cores"]["server"] / e2e["moves_per_s"] * 1e6, 1),
        "pure_work_us_per_move": work["us_per_move"],
        "pure_work_us_by_part": work["us_by_part"],
        "requests_per_move": e2e["requests_per_move"],
        "ratio_bound": round(
            move_work.ratio_bound(e2e["requests_per_move"], work["seconds_per_move"], ceiling_s),
            3,
        ),
    }


async def _clear_redis(url: str, prefix: str) -> None:
    from redis.asyncio import Redis

    client = Redis.from_url(url)
    try:
        keys = [k async for k in client.scan_iter(match=f"{prefix}:*", count=1000)]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()


if __name__ == "__main__":
    main()
