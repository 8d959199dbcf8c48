"""``pip install .`` with no extras, into a fresh virtual environment, gives a ``manifest serve``
that answers ``/healthz`` (issue 11) — with nothing configured: the embedded PostgreSQL, the
migrations shipped in the wheel, in-process projections.

Slow (a fresh install takes 30-90 s): left out of a local run, run by CI (``tests/conftest.py``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest

from tests.integration.serverproc import free_port

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_pip_install_without_extras_gives_a_working_serve() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        # A copy of the sources, so the build leaves nothing in the worktree.
        src = work / "src"
        shutil.copytree(
            ROOT,
            src,
            ignore=shutil.ignore_patterns(
                ".git", ".venv", ".manifest", "__pycache__", ".*_cache", "build", "*.egg-info"
            ),
        )
        venv = work / "v"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
        done = subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", str(src)],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr

        port = free_port()
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("MANIFEST_") and k not in ("PG_DSN", "REDIS_URL", "PG_READ_DSN")
        }
        env["MANIFEST_DATA_DIR"] = str(work / "data")
        run = work / "run"  # not the sources: nothing may be read from the checkout
        run.mkdir()
        log = work / "serve.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [str(venv / "bin" / "manifest"), "serve", "--port", str(port)],
                cwd=run,
                env=env,
                stdout=out,
                stderr=out,
                start_new_session=True,
            )
        try:
            answer = _wait_healthy(f"http://127.0.0.1:{port}", proc, log)
            assert answer == {"status": "ok"}
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
                r = client.post(
                    "/v1/games", json={"game": "jolly-cargo", "seats": 2, "players": ["a", "b"]}
                )
                assert r.status_code == 201, r.text
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=60) == 0, log.read_text()
        lines = [json.loads(x) for x in log.read_text().splitlines() if x.startswith("{")]
        assert any(x.get("event") == "manifest listening" for x in lines), log.read_text()


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path) -> object:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()
        try:
            return httpx.get(f"{url}/healthz", timeout=2).json()
        except httpx.HTTPError:
            time.sleep(0.5)
    raise AssertionError(f"no /healthz within 120 s:\n{log.read_text()}")
