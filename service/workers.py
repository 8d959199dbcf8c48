"""Several uvicorn workers, each with its own listening socket (``SO_REUSEPORT``).

uvicorn's own multi-worker mode binds one socket in the supervisor and shares it: a connection
belongs to whichever worker calls ``accept`` first, and asyncio accepts everything queued in one
go. Keep-alive clients open their connections once, so whatever split happens at that moment
lasts for the whole life of the connections — and a burst of connections that arrives while one
worker is still starting (its lifespan opening pools) all lands on the workers already
serving. ``bench.e2e --workers 2`` measured exactly that: one busy worker, one idle.

Here every worker binds its own socket to the same address with ``SO_REUSEPORT`` and listens
only once its application has started, and the kernel spreads new connections over the sockets
that listen by a hash of the connection's addresses — independent of which process wakes first.
``ss -ltn sport = :PORT`` lists one listening socket per serving worker (``bench.e2e`` waits for
all of them before it connects). Linux ≥ 3.9; every worker runs under the same user.

The supervisor binds the address first (also with ``SO_REUSEPORT``, never listening, after a
plain bind that fails if anything listens there) so that a port in use fails at once,
restarts a worker that dies, and on SIGTERM/SIGINT stops them all (each finishes its
requests: uvicorn's graceful shutdown).
"""

from __future__ import annotations

import contextlib
import ipaddress
import multiprocessing
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

#: Seconds a stopping worker gets for its graceful shutdown before it is killed.
STOP_TIMEOUT_S = 30.0


def reuseport_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to (host, port) with SO_REUSEADDR and SO_REUSEPORT, not listening.

    Created with ``IPPROTO_TCP`` so that asyncio sets TCP_NODELAY on accepted connections
    (with protocol 0 it does not, and every keep-alive response waits for a delayed ACK)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    return sock


def plain_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to (host, port) with SO_REUSEADDR only, not listening: binding it
    fails (``OSError``) when anything listens on the port — another Manifest's
    ``SO_REUSEPORT`` workers included, which a ``SO_REUSEPORT`` bind would join instead."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def _worker(app: str | Callable[[], Any], host: str, port: int, options: dict[str, Any]) -> None:
    import uvicorn
    from uvicorn.config import STARTUP_FAILURE

    sock = reuseport_socket(host, port)
    server = uvicorn.Server(uvicorn.Config(app, **options))
    # Server.run listens on the socket after the application's startup, and handles SIGTERM.
    server.run(sockets=[sock])
    if not server.started:  # the application did not start (its lifespan failed)
        sys.exit(STARTUP_FAILURE)


def serve(
    app: str | Callable[[], Any],
    *,
    host: str,
    port: int,
    workers: int = 1,
    bound: Callable[[], None] = lambda: None,
    **options: Any,
) -> None:
    """``uvicorn.run(app, host=..., port=..., workers=..., **options)``, except that the
    address is bound first — ``OSError`` at once if it is taken, then ``bound()`` (where the
    CLI says it listens) — and that several workers each listen on their own socket
    (:func:`run`). ``app`` is an import string or, with ``factory=True``, a picklable callable
    that makes the app (``functools.partial(create_app, settings)``: spawned workers get it, and
    the settings in it, by pickling). ``options`` go to ``uvicorn.Config`` (``factory``,
    ``log_level``, ``http``, ...)."""
    import uvicorn
    from uvicorn.config import STARTUP_FAILURE

    if workers > 1:
        run(app, host, port, workers, bound=bound, **options)
        return
    sock = plain_socket(host, port)
    bound()
    server = uvicorn.Server(uvicorn.Config(app, **options))
    try:
        server.run(sockets=[sock])  # listens once the application has started
    finally:
        sock.close()
    if not server.started:  # the application did not start (its lifespan failed)
        sys.exit(STARTUP_FAILURE)


@contextlib.contextmanager
def multiprocess_metrics(workers: int, given: str | None) -> Iterator[str | None]:
    """Where the workers keep their metrics: Prometheus multiprocess mode when ``workers`` > 1
    (each writes its metrics to files in one directory, and ``/metrics`` in any worker sums
    them: :func:`service.observability.metrics_body`), else ``given`` as it is. With several
    workers: ``given`` (``Settings.metrics_dir``, ``PROMETHEUS_MULTIPROC_DIR``) emptied of an
    earlier run's files, or a new temporary directory, removed on leaving."""
    from service.observability import MULTIPROC_ENV

    if workers <= 1:
        yield given
        return
    if given:
        os.makedirs(given, exist_ok=True)
        for name in os.listdir(given):
            if name.endswith(".db"):
                os.unlink(os.path.join(given, name))
    directory = given or tempfile.mkdtemp(prefix="manifest-metrics-")
    # The one setting handed on through the environment: prometheus_client chooses its
    # multiprocess value class when it is *imported*, from this variable, so a spawned worker
    # must find it set before its first import — no value passed to the worker's app comes
    # early enough. (Every other setting reaches the workers as the Settings value itself.)
    os.environ[MULTIPROC_ENV] = directory
    try:
        yield directory
    finally:
        if not given:
            shutil.rmtree(directory, ignore_errors=True)


def _forget_worker(pid: int | None) -> None:
    """A dead worker's live gauges leave /metrics (its counters stay: they happened)."""
    if pid is not None:
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]


def run(
    app: str | Callable[[], Any],
    host: str,
    port: int,
    workers: int,
    bound: Callable[[], None] = lambda: None,
    **options: Any,
) -> None:
    """Run ``workers`` processes serving ``app`` (an import string; ``options`` go to
    ``uvicorn.Config``) on host:port until SIGTERM or SIGINT: ``OSError`` at once if the port
    is taken, else ``bound()``. A worker whose application fails to start stops them all (exit
    status 3, as uvicorn's). With several workers, run it inside :func:`multiprocess_metrics`."""
    from uvicorn.config import STARTUP_FAILURE

    plain_socket(host, port).close()  # taken, even by SO_REUSEPORT listeners: OSError now
    holder = reuseport_socket(host, port)
    port = holder.getsockname()[1]
    bound()
    context = multiprocessing.get_context("spawn")
    stopping = failed = False

    def start() -> Any:
        proc = context.Process(
            target=_worker, args=(app, host, port, options), name="manifest-worker"
        )
        proc.start()
        return proc

    def stop(*_: Any) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    procs = [start() for _ in range(workers)]
    try:
        while not stopping:
            time.sleep(0.2)
            for i, proc in enumerate(procs):
                if not proc.is_alive() and proc.exitcode == STARTUP_FAILURE:
                    print(f"manifest: worker {proc.pid} failed to start", file=sys.stderr)
                    stopping = failed = True
                elif not proc.is_alive() and not stopping:
                    _forget_worker(proc.pid)
                    print(
                        f"manifest: worker {proc.pid} exited ({proc.exitcode}); starting another",
                        file=sys.stderr,
                    )
                    procs[i] = start()
    finally:
        for proc in procs:
            if proc.is_alive() and proc.pid is not None:
                proc.terminate()  # SIGTERM: uvicorn's graceful shutdown
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for proc in procs:
            proc.join(max(0.0, deadline - time.monotonic()))
            if proc.is_alive():
                proc.kill()
                proc.join()
        holder.close()
    if failed:
        sys.exit(STARTUP_FAILURE)


def proxy_options(trusted: tuple[str, ...]) -> dict[str, Any]:
    """uvicorn's proxy-header options for these trusted proxies: none, no proxy headers. An
    IPv4 proxy is trusted also as an IPv6 socket sees it (``::ffff:a.b.c.d``): uvicorn
    compares the peer as written, and a server listening on ``::`` would otherwise trust no
    IPv4 proxy named in ``MANIFEST_TRUSTED_PROXIES``."""
    if not trusted:
        return {"proxy_headers": False}
    allowed = list(trusted)
    for item in trusted:
        net = ipaddress.ip_network(item)
        if isinstance(net, ipaddress.IPv4Network):
            mapped = ipaddress.IPv6Network(
                (int(ipaddress.IPv6Address(f"::ffff:{net.network_address}")), 96 + net.prefixlen)
            )
            allowed.append(str(mapped))
    return {"proxy_headers": True, "forwarded_allow_ips": allowed}
