"""The real server as a subprocess: ``python -m service.cli serve`` on a free loopback port,
against a given PostgreSQL database and Redis (with a key prefix of its own) — or, where a
process is not what a test is about, the same app served in this process (:class:`InProcessServer`).

``ServerProcess.start()`` waits for ``/healthz``; ``kill()`` is SIGKILL (a crash), ``stop()`` is
SIGTERM and a wait (an orderly shutdown), ``restart()`` starts it again on the same port. The
server's stderr goes to a file; :meth:`ServerProcess.log_tail` shows it when a test fails.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 30.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def server_env(pg_dsn: str, redis_url: str, prefix: str, **extra: str) -> dict[str, str]:
    """The environment the server (and ``manifest rebuild``) run with in these tests."""
    env = dict(os.environ)
    env.update(
        {
            "PG_DSN": pg_dsn,
            "REDIS_URL": redis_url,
            "MANIFEST_REDIS_PREFIX": prefix,
            "MANIFEST_ACCESS_LOG": "0",
            "MANIFEST_CATCHUP_SECONDS": "0.5",
            "MANIFEST_LOG_LEVEL": "warning",
            # 32 clients race on one game in test_api_play: raised, not tripped over
            "MANIFEST_GAME_WRITERS": "64",
            "PYTHONUNBUFFERED": "1",
            # the suite's explicit opt-in to the database-stored key (PG_DSN alone would
            # demand a configured one); tests of configured keys pass their own
            "MANIFEST_SIGNING_KEY_SOURCE": "database",
            # Tests play fast: quotas far above what any test sends (a test of the quotas
            # sets its own).
            "MANIFEST_QUOTA_CREATE": "1000000",
            "MANIFEST_QUOTA_COMMANDS": "1000000",
            "MANIFEST_QUOTA_MESSAGES": "1000000",
            "MANIFEST_QUOTA_QUERIES": "1000000",
            "MANIFEST_QUOTA_AUDIT": "1000000",
            "MANIFEST_QUOTA_READS": "1000000",
            "MANIFEST_REFUSALS_PER_CLIENT": "1000000",
            "MANIFEST_REFUSAL_BYTES": "1000000000000",
            "MANIFEST_QUOTA_STREAMS": "1000000",
            "MANIFEST_QUOTA_COMMANDS_PER_ADDRESS": "1000000",
            "MANIFEST_QUOTA_MESSAGES_PER_ADDRESS": "1000000",
            "MANIFEST_QUOTA_QUERIES_PER_ADDRESS": "1000000",
            "MANIFEST_QUOTA_STREAMS_PER_ADDRESS": "1000000",
            # open live streams: far above any test but the caps' own (one address, 127.0.0.1)
            "MANIFEST_STREAMS_PER_CLIENT": "10000",
            "MANIFEST_STREAMS_PER_PROCESS": "20000",
            "MANIFEST_STREAMS_SEATS_PER_ADDRESS": "10000",
        }
    )
    env.pop("MANIFEST_SIGNING_KEY", None)
    env.update(extra)
    return env


class ServerProcess:
    def __init__(
        self,
        pg_dsn: str,
        redis_url: str,
        prefix: str | None = None,
        workers: int = 1,
        **env: str,
    ) -> None:
        self.workers = workers
        self.pg_dsn = pg_dsn
        self.redis_url = redis_url
        self.prefix = prefix or f"t{uuid.uuid4().hex[:12]}"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = server_env(pg_dsn, redis_url, self.prefix, **env)
        self._dir = Path(tempfile.mkdtemp(prefix="manifest-server-"))
        self.log_path = self._dir / "server.stderr"
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    # --- lifecycle -------------------------------------------------------------------------
    def start(self) -> ServerProcess:
        assert self.proc is None or self.proc.poll() is not None, "already running"
        self.starts += 1
        with self.log_path.open("ab") as log:
            log.write(f"--- start #{self.starts} on port {self.port}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "service.cli",
                    "serve",
                    "--port",
                    str(self.port),
                    "--workers",
                    str(self.workers),
                ],
                cwd=ROOT,
                start_new_session=True,  # its own process group: kill() takes every worker
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        self._wait_healthy()
        return self

    def _wait_healthy(self) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"server exited with {self.proc.returncode} before /healthz answered\n"
                    + self.log_tail()
                )
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.url + "/healthz", timeout=1.0).status_code == 200:
                    return
            if time.monotonic() > deadline:
                raise RuntimeError("server did not answer /healthz in time\n" + self.log_tail())
            time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL: the process dies at once, mid-request if need be (a crash)."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM and wait for an orderly exit (SIGKILL if it takes too long)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def restart(self) -> ServerProcess:
        self.stop()
        return self.start()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log_path.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            return "(no server log)"
        return f"--- server stderr ({self.log_path}):\n" + "\n".join(text)

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self._dir, ignore_errors=True)

    # --- conveniences ----------------------------------------------------------------------
    def client(self, **kw: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=kw.pop("timeout", 30.0), **kw)

    def async_client(self, **kw: Any) -> httpx.AsyncClient:
        limits = kw.pop("limits", httpx.Limits(max_connections=64, max_keepalive_connections=64))
        return httpx.AsyncClient(
            base_url=self.url, timeout=kw.pop("timeout", 30.0), limits=limits, **kw
        )

    def run_cli(self, *args: str, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
        """``python -m service.cli <args>`` with this server's environment."""
        return subprocess.run(
            [sys.executable, "-m", "service.cli", *args],
            cwd=ROOT,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


class InProcessServer:
    """The real app — ``create_app`` over the settings :func:`server_env` gives a subprocess —
    served by uvicorn (httptools, header-bounded, as ``manifest serve`` runs it) in a thread of
    the test process, on a free loopback port, against the real PostgreSQL and Redis. Tests talk
    to it over HTTP exactly as to a :class:`ServerProcess` (``url``, ``client()``,
    ``run_cli``), without the ~1.5 s of CPU a new interpreter spends importing the service.

    What it cannot do is be a process: no ``kill()``, no signals, one worker. Modules that test
    those are marked ``real_process`` (``tests/integration/conftest.py``). Metrics are this
    process's (``/metrics`` counts every in-process app's requests): compare before and after.
    """

    workers = 1
    proc = None  # no process: see the class docstring

    def __init__(self, pg_dsn: str, redis_url: str, prefix: str | None = None, **env: str) -> None:
        self.pg_dsn = pg_dsn
        self.redis_url = redis_url
        self.prefix = prefix or f"t{uuid.uuid4().hex[:12]}"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = server_env(pg_dsn, redis_url, self.prefix, **env)
        self.starts = 0
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def start(self) -> InProcessServer:
        import uvicorn

        from service import workers
        from service.http.app import create_app
        from service.http.hardening import bounded_protocol
        from service.settings import Settings

        assert not self.running, "already running"
        self.starts += 1
        settings = Settings.from_env(self.env)
        options: dict[str, Any] = {  # as service.cli's serve gives uvicorn
            "log_level": "warning",
            "access_log": False,
            "http": bounded_protocol(settings.max_header_bytes),
            **workers.proxy_options(settings.trusted_proxies),
        }
        config = uvicorn.Config(
            create_app(settings), host="127.0.0.1", port=self.port, lifespan="on", **options
        )
        self._server = uvicorn.Server(config)
        self._error = None

        def run() -> None:
            try:
                self._server.run()
            except BaseException as error:  # reported by start(), not lost in the thread
                self._error = error

        self._thread = threading.Thread(target=run, name=f"manifest-{self.port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the in-process server did not start: {self._error!r}")
            time.sleep(0.01)
        return self

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout: float = 15.0) -> None:
        """An orderly shutdown: uvicorn finishes its requests and runs the app's lifespan end."""
        if self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout)
            if self._thread.is_alive():
                self._server.force_exit = True
                self._thread.join(timeout)
            self._thread = None

    def restart(self) -> InProcessServer:
        self.stop()
        return self.start()

    def close(self) -> None:
        self.stop()

    def kill(self) -> None:
        raise TypeError("an in-process server cannot be killed: mark the module real_process")

    def log_tail(self, lines: int = 60) -> str:
        return "(the server ran in process: its log lines are in the captured output)"

    client = ServerProcess.client
    async_client = ServerProcess.async_client
    run_cli = ServerProcess.run_cli
