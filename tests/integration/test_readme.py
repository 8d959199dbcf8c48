"""The README's "Play a game with curl" walk-through, run as written with bash against a live
server, so the README stays true (issue 11)."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import pytest

from .serverproc import ROOT, ServerProcess

pytestmark = pytest.mark.integration
MARK = "<!-- walkthrough -->"


def walkthrough() -> str:
    """The shell block that follows the README's walk-through mark."""
    text = (ROOT / "README.md").read_text()
    after = text[text.index(MARK) + len(MARK) :].lstrip("\n")
    assert after.startswith("```sh\n"), after[:40]
    return after[len("```sh\n") : after.index("\n```\n")] + "\n"


def test_walkthrough_block_is_found() -> None:
    block = walkthrough()
    assert block.startswith('BASE="${BASE:-http://127.0.0.1:8000}"')
    assert "/commands" in block and "```" not in block


def test_readme_walkthrough_runs_as_written(server: ServerProcess) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "walkthrough.sh"
        script.write_text(walkthrough())
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", str(script)],
            cwd=tmp,
            env={"PATH": "/usr/bin:/bin", "BASE": server.url},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stderr == "", done.stderr
        created = json.loads((Path(tmp) / "game.json").read_text())
        seat0 = json.loads((Path(tmp) / "seat0.json").read_text())
        events = json.loads((Path(tmp) / "events.json").read_text())["events"]
    lines = done.stdout.splitlines()
    assert lines[0] == f"game {created['id']}"
    assert sum(" moved; version " in line for line in lines) == 4
    # Four accepted commands after the start, seen by seat 0 and in the history.
    with server.client() as client:
        report = client.get(f"/v1/games/{created['id']}/audit").json()
    assert seat0["version"] >= created["version"] + 4
    assert lines[-1] == f"{len(events)} events" and len(events) == seat0["version"]
    assert report["ok"] is True
