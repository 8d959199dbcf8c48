"""PostgreSQL and Redis servers that the fault-injection tests own, and may therefore pause,
kill, fill, restart and restore — never the shared development servers.

Both run from the local binaries (as :mod:`tests.support.servers` does), on a free loopback
port kept across restarts, in a temporary directory kept until :meth:`close`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from .servers import (
    PG_SUPERUSER,
    PG_TEST_DB,
    START_TIMEOUT_S,
    ServerUnavailable,
    _as_pg_user,
    _is_root,
    _pg_ready,
    _postmaster_pid,
    _redis_ping,
    _run,
    _stop_postgres,
    _tail,
    free_port,
    pg_bindir,
)


class RedisServer:
    """A redis-server whose snapshot file (``dump.rdb``) survives restarts: :meth:`save`
    writes it, and a :meth:`kill` then :meth:`start` comes back with that older data."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise ServerUnavailable("redis-server not found on PATH")
        self.binary = binary
        self.dir = Path(tempfile.mkdtemp(prefix="manifest-faulty-redis-"))
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> RedisServer:
        log = (self.dir / "redis.log").open("ab")
        self.proc = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.dir),
                "--dbfilename",
                "dump.rdb",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _redis_ping(self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise ServerUnavailable(f"redis did not start\n{_tail(self.dir / 'redis.log')}")
            time.sleep(0.05)
        return self

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def pause(self) -> None:
        """SIGSTOP: connections stay open, nothing answers (a long fork, a partition)."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGCONT)

    def kill(self) -> None:
        """SIGKILL: gone at once, nothing saved."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
            self.proc.kill()
            self.proc.wait(timeout=10)

    def client(self) -> Any:
        import redis

        return redis.Redis(port=self.port, socket_timeout=5, socket_connect_timeout=5)

    def save(self) -> None:
        with contextlib.closing(self.client()) as r:
            r.save()

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class PostgresServer:
    """A PostgreSQL 15 cluster that can be stopped (fast shutdown) and started again."""

    def __init__(self) -> None:
        bindir = pg_bindir()
        if bindir is None:
            raise ServerUnavailable("PostgreSQL 15 binaries not found")
        self.bindir = bindir
        self.tmp = Path(tempfile.mkdtemp(prefix="manifest-faulty-pg-"))
        self.data = self.tmp / "data"
        if _is_root():
            shutil.chown(self.tmp, PG_SUPERUSER, PG_SUPERUSER)
        initdb = [str(bindir / "initdb"), "-D", str(self.data), "-U", PG_SUPERUSER, "-A", "trust"]
        _run(_as_pg_user([*initdb, "-E", "UTF8", "--no-locale", "--no-sync"]), "initdb", self.tmp)
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.dsn = f"postgresql://{PG_SUPERUSER}@127.0.0.1:{self.port}/{PG_TEST_DB}"
        self._created = False

    def start(self) -> PostgresServer:
        settings = {
            "listen_addresses": "127.0.0.1",
            "port": str(self.port),
            "unix_socket_directories": str(self.tmp),
            "max_connections": "100",
            "fsync": "off",
            "synchronous_commit": "off",
            "full_page_writes": "off",
        }
        argv = [str(self.bindir / "postgres"), "-D", str(self.data)]
        for key, value in settings.items():
            argv += ["-c", f"{key}={value}"]
        log = (self.tmp / "postgres.log").open("ab")
        self.proc = subprocess.Popen(
            _as_pg_user(argv), cwd=self.tmp, stdin=subprocess.DEVNULL, stdout=log, stderr=log
        )
        log.close()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _pg_ready(self.bindir, self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise ServerUnavailable(
                    f"postgres did not start\n{_tail(self.tmp / 'postgres.log')}"
                )
            time.sleep(0.05)
        if not self._created:
            createdb = [str(self.bindir / "createdb"), "-h", "127.0.0.1", "-p", str(self.port)]
            _run([*createdb, "-U", PG_SUPERUSER, PG_TEST_DB], "createdb", self.tmp)
            self._created = True
        return self

    def _processes(self) -> list[int]:
        """The postmaster and every process it started (backends, background workers)."""
        postmaster = _postmaster_pid(self.data)
        if postmaster is None:
            return []
        children = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == postmaster:
                    children.append(int(entry.name))
        return [postmaster, *children]

    def pause(self) -> None:
        """SIGSTOP on every process of the cluster (a frozen host, a partition): connections
        stay open, nothing answers."""
        self.paused = self._processes()
        for pid in self.paused:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGSTOP)

    def resume(self) -> None:
        for pid in getattr(self, "paused", []):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGCONT)
        self.paused = []

    def stop(self) -> None:
        """Fast shutdown: open sessions are terminated, running transactions roll back."""
        if self.proc is not None:
            _stop_postgres(self.proc, self.data)

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)
