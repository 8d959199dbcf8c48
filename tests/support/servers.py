"""Throwaway PostgreSQL 15 and Redis servers for the integration tests.

Resolution order (see ``tests/conftest.py``):

1. ``PG_DSN`` / ``REDIS_URL`` from the environment (``scripts/test`` sets both);
2. testcontainers, only when a Docker engine answers within a few seconds;
3. local server binaries (``/usr/lib/postgresql/15/bin``, ``redis-server``) started on a free
   loopback port in a temporary directory and stopped again afterwards.

PostgreSQL refuses to run as root, so when this process is root the cluster is created and run as
the ``postgres`` system user (``runuser -u postgres --``). Nothing here imports project code.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

PG_VERSION = "15"
PG_SUPERUSER = "postgres"
PG_TEST_DB = "manifest_test"
DOCKER_TIMEOUT_S = 3.0
START_TIMEOUT_S = 30.0


class ServerUnavailable(RuntimeError):
    """No way to get the requested server: no env var, no Docker engine, no local binaries."""


# --------------------------------------------------------------------------- helpers


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def docker_available(timeout: float = DOCKER_TIMEOUT_S) -> bool:
    """True when the docker CLI exists and a Docker engine answers within ``timeout`` seconds."""
    if shutil.which("docker") is None:
        return False
    try:
        result = subprocess.run(
            ["docker", "info", "--format", "{{.ServerVersion}}"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return result.returncode == 0 and bool(result.stdout.strip())


def pg_bindir() -> Path | None:
    """The directory holding the PostgreSQL 15 server binaries (postgres, initdb), if any."""
    candidates = [os.environ.get("MANIFEST_PG_BINDIR", ""), f"/usr/lib/postgresql/{PG_VERSION}/bin"]
    for candidate in filter(None, candidates):
        bindir = Path(candidate)
        if all((bindir / b).is_file() for b in ("postgres", "initdb", "pg_isready", "createdb")):
            return bindir
    return None


def _is_root() -> bool:
    return os.geteuid() == 0


def _as_pg_user(argv: list[str]) -> list[str]:
    return ["runuser", "-u", PG_SUPERUSER, "--", *argv] if _is_root() else argv


def _run(argv: list[str], what: str, cwd: Path) -> None:
    result = subprocess.run(
        argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise ServerUnavailable(
            f"{what} failed (exit {result.returncode}): {' '.join(argv)}\n"
            f"{result.stdout}{result.stderr}"
        )


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def with_database(dsn: str, database: str) -> str:
    """``dsn`` pointing at another database on the same server."""
    parts = urlsplit(dsn)
    return urlunsplit((parts.scheme, parts.netloc, "/" + database, parts.query, parts.fragment))


# --------------------------------------------------------------------------- local binaries


@contextlib.contextmanager
def local_postgres() -> Iterator[str]:
    """Start a throwaway PostgreSQL 15 cluster on a free loopback port; yield its DSN.

    ``postgres`` runs as a direct child process (not daemonized by ``pg_ctl``) so that this
    process reaps it on shutdown and leaves nothing behind.
    """
    bindir = pg_bindir()
    if bindir is None:
        raise ServerUnavailable(
            f"PostgreSQL {PG_VERSION} binaries not found in /usr/lib/postgresql/{PG_VERSION}/bin "
            f"(install the Debian package postgresql-{PG_VERSION}, set MANIFEST_PG_BINDIR, "
            "or set PG_DSN)"
        )
    if _is_root() and shutil.which("runuser") is None:
        raise ServerUnavailable("running as root but `runuser` is missing; cannot start postgres")
    tmp = Path(tempfile.mkdtemp(prefix="manifest-pg-"))
    data = tmp / "data"
    proc: subprocess.Popen[bytes] | None = None
    log = (tmp / "postgres.log").open("wb")
    try:
        if _is_root():
            shutil.chown(tmp, PG_SUPERUSER, PG_SUPERUSER)
        initdb = [str(bindir / "initdb"), "-D", str(data), "-U", PG_SUPERUSER, "-A", "trust"]
        _run(_as_pg_user([*initdb, "-E", "UTF8", "--no-locale", "--no-sync"]), "initdb", tmp)
        port = free_port()
        proc = _start_postgres(bindir, data, tmp, log, port)
        createdb = [str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port)]
        _run([*createdb, "-U", PG_SUPERUSER, PG_TEST_DB], "createdb", tmp)
        yield f"postgresql://{PG_SUPERUSER}@127.0.0.1:{port}/{PG_TEST_DB}"
    finally:
        if proc is not None:
            _stop_postgres(proc, data)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def _start_postgres(
    bindir: Path, data: Path, tmp: Path, log: Any, port: int
) -> subprocess.Popen[bytes]:
    """``postgres`` on ``data`` (a primary, or a standby if it holds standby.signal), listening
    on 127.0.0.1:``port``; returns once it accepts connections."""
    settings = {
        "listen_addresses": "127.0.0.1",
        "port": str(port),
        "unix_socket_directories": str(tmp),
        "max_connections": "200",
        "fsync": "off",
        "synchronous_commit": "off",
        "full_page_writes": "off",
    }
    argv = [str(bindir / "postgres"), "-D", str(data)]
    for key, value in settings.items():
        argv += ["-c", f"{key}={value}"]
    proc = subprocess.Popen(
        _as_pg_user(argv), cwd=tmp, stdin=subprocess.DEVNULL, stdout=log, stderr=log
    )
    deadline = time.monotonic() + START_TIMEOUT_S
    while not _pg_ready(bindir, port):
        if proc.poll() is not None or time.monotonic() > deadline:
            log.flush()
            _stop_postgres(proc, data)
            raise ServerUnavailable(
                f"postgres did not come up on 127.0.0.1:{port}\n{_tail(tmp / 'postgres.log')}"
            )
        time.sleep(0.05)
    return proc


@contextlib.contextmanager
def streaming_replica(primary_dsn: str) -> Iterator[str]:
    """A hot standby of ``primary_dsn``'s server (one this harness started: local binaries,
    trust authentication): ``pg_basebackup -X stream -R`` into a temporary directory, then
    ``postgres`` on it, streaming WAL from the primary. Yields the DSN of the same database on
    the replica. Pause it with ``SELECT pg_wal_replay_pause()`` (on the replica) to make it lag.
    """
    bindir = pg_bindir()
    if bindir is None:
        raise ServerUnavailable(f"PostgreSQL {PG_VERSION} binaries not found")
    primary = urlsplit(primary_dsn)
    tmp = Path(tempfile.mkdtemp(prefix="manifest-pg-replica-"))
    data = tmp / "data"
    proc: subprocess.Popen[bytes] | None = None
    log = (tmp / "postgres.log").open("wb")
    try:
        if _is_root():
            shutil.chown(tmp, PG_SUPERUSER, PG_SUPERUSER)
        backup = [
            str(bindir / "pg_basebackup"),
            *("-h", "127.0.0.1", "-p", str(primary.port), "-U", PG_SUPERUSER),
            *("-D", str(data), "-X", "stream", "-R", "-c", "fast", "--no-sync"),
        ]
        _run(_as_pg_user(backup), "pg_basebackup", tmp)
        port = free_port()
        proc = _start_postgres(bindir, data, tmp, log, port)
        yield urlunsplit(primary._replace(netloc=f"{PG_SUPERUSER}@127.0.0.1:{port}"))
    finally:
        if proc is not None:
            _stop_postgres(proc, data)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def _pg_ready(bindir: Path, port: int) -> bool:
    argv = [str(bindir / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(port), "-t", "1"]
    return subprocess.run(argv, stdin=subprocess.DEVNULL, check=False).returncode == 0


def _postmaster_pid(data: Path) -> int | None:
    try:
        return int((data / "postmaster.pid").read_text().splitlines()[0])
    except (OSError, ValueError, IndexError):
        return None


def _stop_postgres(proc: subprocess.Popen[bytes], data: Path) -> None:
    """Fast shutdown (SIGINT to the postmaster; as root ``proc`` is runuser), then reap ``proc``."""
    if proc.poll() is None:
        postmaster = _postmaster_pid(data) or proc.pid
        with contextlib.suppress(OSError):
            os.kill(postmaster, signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.kill(postmaster, signal.SIGKILL)
            proc.kill()
    proc.wait()


def _redis_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


@contextlib.contextmanager
def local_redis(*extra: str) -> Iterator[str]:
    """Start a throwaway redis-server (no persistence) on a free loopback port; yield its URL.
    ``extra``: further redis-server options."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise ServerUnavailable(
            "redis-server not found on PATH (install the Debian package redis-server, "
            "or set REDIS_URL)"
        )
    tmp = Path(tempfile.mkdtemp(prefix="manifest-redis-"))
    port = free_port()
    log = (tmp / "redis.log").open("wb")
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--daemonize",
            "no",
            "--dir",
            str(tmp),
            *extra,
        ],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _redis_ping(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                raise ServerUnavailable(
                    f"redis-server did not come up on 127.0.0.1:{port}\n{_tail(tmp / 'redis.log')}"
                )
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


CLUSTER_PRIMARIES = 3


def _cluster_ok(port: int) -> bool:
    info = subprocess.run(
        ["redis-cli", "-p", str(port), "cluster", "info"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    return "cluster_state:ok" in info


@contextlib.contextmanager
def local_redis_cluster() -> Iterator[str]:
    """Start a real Redis Cluster of three primaries (no replicas) on loopback from the
    redis-server binary, and yield the URL of its first node (the client discovers the rest)."""
    if shutil.which("redis-cli") is None:
        raise ServerUnavailable("redis-cli not found on PATH (Debian package redis-tools)")
    with contextlib.ExitStack() as stack:
        urls = [
            stack.enter_context(
                local_redis(
                    "--cluster-enabled",
                    "yes",
                    "--cluster-node-timeout",
                    "2000",
                    # the bus port is explicit: the default (port + 10000) overflows for high ports
                    "--cluster-port",
                    str(free_port()),
                )
            )
            for _ in range(CLUSTER_PRIMARIES)
        ]
        ports = [int(urlsplit(url).port or 0) for url in urls]
        create = subprocess.run(
            ["redis-cli", "--cluster", "create"]
            + [f"127.0.0.1:{port}" for port in ports]
            + ["--cluster-replicas", "0", "--cluster-yes"],
            capture_output=True,
            text=True,
            check=False,
        )
        if create.returncode != 0:
            raise ServerUnavailable(
                f"redis-cli --cluster create failed:\n{create.stdout}{create.stderr}"
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while not all(_cluster_ok(port) for port in ports):
            if time.monotonic() > deadline:
                raise ServerUnavailable("the Redis Cluster did not reach cluster_state:ok")
            time.sleep(0.1)
        yield f"redis://127.0.0.1:{ports[0]}/0"


@contextlib.contextmanager
def redis_cluster_url() -> Iterator[str]:
    """REDIS_CLUSTER_URL (one node of a running cluster), else a local three-primary cluster."""
    if url := os.environ.get("REDIS_CLUSTER_URL"):
        yield url
    else:
        with local_redis_cluster() as url:
            yield url


# --------------------------------------------------------------------------- docker


@contextlib.contextmanager
def docker_postgres() -> Iterator[str]:
    module: Any = importlib.import_module("testcontainers.postgres")
    container: Any = module.PostgresContainer(f"postgres:{PG_VERSION}", driver=None)
    container.start()
    try:
        yield str(container.get_connection_url())
    finally:
        container.stop()


@contextlib.contextmanager
def docker_redis() -> Iterator[str]:
    module: Any = importlib.import_module("testcontainers.redis")
    container: Any = module.RedisContainer()
    container.start()
    try:
        host = container.get_container_host_ip()
        port = container.get_exposed_port(6379)
        yield f"redis://{host}:{port}/0"
    finally:
        container.stop()


# --------------------------------------------------------------------------- resolution


@contextlib.contextmanager
def postgres_dsn() -> Iterator[str]:
    """PG_DSN, else a testcontainers PostgreSQL 15 if Docker answers, else local binaries."""
    if dsn := os.environ.get("PG_DSN"):
        yield dsn
    elif docker_available():
        with docker_postgres() as dsn:
            yield dsn
    else:
        with local_postgres() as dsn:
            yield dsn


@contextlib.contextmanager
def redis_url() -> Iterator[str]:
    """REDIS_URL, else a testcontainers Redis if Docker answers, else a local redis-server."""
    if url := os.environ.get("REDIS_URL"):
        yield url
    elif docker_available():
        with docker_redis() as url:
            yield url
    else:
        with local_redis() as url:
            yield url


# --------------------------------------------------------------------------- per-test databases


async def _admin(dsn: str, sql: str) -> None:
    asyncpg: Any = importlib.import_module("asyncpg")
    conn = await asyncpg.connect(with_database(dsn, "postgres"), timeout=10)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@contextlib.contextmanager
def fresh_database(dsn: str) -> Iterator[str]:
    """Create a uniquely named empty database on ``dsn``'s server; yield its DSN; drop it after."""
    name = f"manifest_t_{uuid.uuid4().hex[:16]}"
    asyncio.run(_admin(dsn, f'CREATE DATABASE "{name}"'))
    try:
        yield with_database(dsn, name)
    finally:
        asyncio.run(_admin(dsn, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
