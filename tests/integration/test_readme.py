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
GAMES = ("jolly-cargo", "cargo-empire", "empire-builder", "curious-cargo")


def walkthrough() -> str:
    """The shell block that follows the README's walk-through mark."""
    text = (ROOT / "README.md").read_text()
    after = text[text.index(MARK) + len(MARK) :].lstrip("\n")
    assert after.startswith("```sh\n"), after[:40]
    return after[len("```sh\n") : after.index("\n```\n")] + "\n"


def lobby_block() -> str:
    """The shell block after the walk-through ("Also:"): an open lobby, the host, the rules."""
    text = (ROOT / "README.md").read_text()
    after = text[text.index(MARK) :]
    after = after[after.index("Also:\n\n```sh\n") + len("Also:\n\n```sh\n") :]
    return after[: after.index("\n```\n")] + "\n"


def test_walkthrough_block_is_found() -> None:
    block = walkthrough()
    assert block.startswith('BASE="${BASE:-http://127.0.0.1:8000}"')
    assert "/commands" in block and "```" not in block


def test_readme_walkthrough_runs_as_written(server: ServerProcess) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "walkthrough.sh"
        script.write_text(walkthrough() + lobby_block())
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
    # The lobby block: a seat joined, the host read the lobby, every game is playable.
    joined, hosted = json.loads(lines[-6]), json.loads(lines[-5])
    assert hosted["id"] == joined["game"] and hosted["status"] == "open"
    assert hosted["seats"][0]["name"] == "cy" and "invite_code" in hosted
    assert lines[-4:] == [f"{g} True" for g in GAMES]
    lines = lines[:-6]
    # Four accepted commands after the start, seen by seat 0 and in the history.
    with server.client() as client:
        report = client.get(f"/v1/games/{created['id']}/audit").json()
    assert seat0["version"] >= created["version"] + 4
    assert lines[-1] == f"{len(events)} events" and len(events) == seat0["version"]
    assert report["ok"] is True
