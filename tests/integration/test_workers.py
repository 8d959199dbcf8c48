"""``manifest serve --workers N``: every worker listens on its own SO_REUSEPORT socket, so the
kernel spreads connections over all of them (not to whichever worker accepts first), a worker
that dies is replaced, and a port in use stops the server at once."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest

from tests.support.servers import free_port
from tests.support.sockets import connections_by_process, listeners

from .serverproc import ROOT, ServerProcess, server_env

pytestmark = pytest.mark.integration


def _workers(proc: ServerProcess) -> set[int]:
    """The supervisor's worker processes (multiprocessing's resource tracker is not one)."""
    assert proc.proc is not None
    out = subprocess.run(
        ["ps", "-ww", "-o", "pid=,args=", "--ppid", str(proc.proc.pid)],
        capture_output=True,
        text=True,
    ).stdout
    return {int(line.split()[0]) for line in out.splitlines() if "spawn_main" in line}


def _wait_listeners(port: int, n: int) -> None:
    deadline = time.monotonic() + 90
    while listeners(port) < n:
        assert time.monotonic() < deadline, f"{listeners(port)} of {n} workers listen"
        time.sleep(0.1)


def test_connections_are_spread_over_every_worker(server_two_workers: ServerProcess) -> None:
    port = server_two_workers.port
    _wait_listeners(port, 2)
    assert listeners(port) == 2  # one socket per worker, not one shared socket
    clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(32)]
    try:
        for c in clients:  # a request each, so every connection has been accepted
            c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        for c in clients:
            assert c.recv(4096).startswith(b"HTTP/1.1 200")
        spread = connections_by_process(port, _workers(server_two_workers))
        # 32 connections hashed over two sockets: both workers hold some (all on one: 2^-31).
        assert len(spread) == 2 and sum(spread) == 32, spread
    finally:
        for c in clients:
            c.close()


def test_a_dead_worker_is_replaced(server_two_workers: ServerProcess) -> None:
    port = server_two_workers.port
    _wait_listeners(port, 2)
    victim = min(_workers(server_two_workers))
    os.kill(victim, signal.SIGKILL)
    deadline = time.monotonic() + 90
    while victim in _workers(server_two_workers) or len(_workers(server_two_workers)) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    _wait_listeners(port, 2)
    assert httpx.get(server_two_workers.url + "/readyz", timeout=10).status_code == 200


def test_a_port_in_use_stops_the_server_at_once(fresh_database: str, redis_url: str) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        done = subprocess.run(
            [sys.executable, "-m", "service.cli", "serve", "--port", str(port), "--workers", "2"],
            cwd=ROOT,
            env=server_env(fresh_database, redis_url, "tport"),
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        taken.close()
    assert done.returncode == 7  # service.cli.EXIT_PORT
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr


def test_sigterm_stops_every_worker(server_two_workers: ServerProcess) -> None:
    _wait_listeners(server_two_workers.port, 2)
    workers = _workers(server_two_workers)
    assert len(workers) == 2
    assert server_two_workers.stop(timeout=60) == 0  # an orderly exit, not a kill
    for pid in workers:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert listeners(server_two_workers.port) == 0


def test_workers_that_cannot_start_stop_the_server(redis_url: str) -> None:
    """No database: each worker's start-up fails; the server exits (3), it does not respawn
    failing workers for ever."""
    nowhere = f"postgresql://postgres@127.0.0.1:{free_port()}/none"
    port = str(free_port())
    done = subprocess.run(
        [sys.executable, "-m", "service.cli", "serve", "--port", port, "--workers", "2"],
        cwd=ROOT,
        env=server_env(nowhere, redis_url, "tnodb"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 3, done.stderr[-2000:]
    assert "failed to start" in done.stderr


def _healthz_served(metrics: str) -> float:
    """The count of answered ``GET /healthz`` in a /metrics body."""
    prefix = 'manifest_http_requests_total{method="GET",route="/healthz",status="200"} '
    return sum(
        float(line[len(prefix) :]) for line in metrics.splitlines() if line.startswith(prefix)
    )


def test_metrics_sum_every_worker(server_two_workers: ServerProcess) -> None:
    """Prometheus multiprocess mode (issue 29): one scrape of /metrics counts the requests of
    both workers, not only those of the worker that answers the scrape."""
    port = server_two_workers.port
    _wait_listeners(port, 2)
    scrape = server_two_workers.url + "/metrics"
    before = _healthz_served(httpx.get(scrape, timeout=10).text)
    clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(32)]
    try:
        for c in clients:  # one request per connection: the kernel spreads them over both
            c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        for c in clients:
            assert c.recv(4096).startswith(b"HTTP/1.1 200")
        spread = connections_by_process(port, _workers(server_two_workers))
        assert len(spread) == 2, spread  # both workers answered some (all on one: 2^-31)
    finally:
        for c in clients:
            c.close()
    # every scrape, whichever worker answers it, sees all 32
    for _ in range(4):
        with httpx.Client(timeout=10) as fresh:  # a new connection: either worker
            body = fresh.get(scrape).text
        assert _healthz_served(body) == before + 32, body[-2000:]


def _answer_to(port: int, header_bytes: int) -> bytes:
    """The status line answered to a request with one header of ``header_bytes`` bytes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        head = b"GET /healthz HTTP/1.1\r\nhost: x\r\nx-big: " + b"a" * header_bytes + b"\r\n\r\n"
        with contextlib.suppress(OSError):  # the server may close before reading it all
            sock.sendall(head)
        return sock.recv(4096).split(b"\r\n", 1)[0]


def test_every_worker_gets_the_settings_read_at_start(fresh_database: str, redis_url: str) -> None:
    """Issue 27: settings reach the spawned workers as values (the app factory's and the HTTP
    protocol's arguments), not through the environment nor a read at import: a header bound
    below the default holds in both workers (16 connections, spread over both: all on one has
    chance 2^-15), and a header under it passes."""
    proc = ServerProcess(fresh_database, redis_url, workers=2, MANIFEST_MAX_HEADER_BYTES="4096")
    try:
        proc.start()
        _wait_listeners(proc.port, 2)
        for _ in range(16):
            assert _answer_to(proc.port, 5_000) == b"HTTP/1.1 400 Bad Request"
        assert _answer_to(proc.port, 3_000) == b"HTTP/1.1 200 OK"
    finally:
        proc.close()
