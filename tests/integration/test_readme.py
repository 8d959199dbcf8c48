"""The README's "Play a game with curl" walk-through, run as written with bash against a live
server, so the README stays true (issue 11)."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

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


def block_after(mark: str) -> str:
    """The shell block that follows ``mark`` in the README."""
    text = (ROOT / "README.md").read_text()
    after = text[text.index(mark) + len(mark) :].lstrip("\n")
    assert after.startswith("```sh\n"), after[:40]
    return after[len("```sh\n") : after.index("\n```\n")] + "\n"


def run_from_a_checkout(server: ServerProcess, script: str, tmp: Path) -> str:
    """``script`` run with bash in ``tmp`` laid out as the repository's root is for a reader
    (``.venv`` and ``examples`` there), the CLI reaching the server's database (issue 29)."""
    (tmp / ".venv").symlink_to(ROOT / ".venv")
    (tmp / "examples").symlink_to(ROOT / "examples")
    path = tmp / "readme.sh"
    path.write_text(script)
    env = {
        k: v
        for k, v in server.env.items()
        if k in ("PG_DSN", "REDIS_URL", "MANIFEST_REDIS_PREFIX", "MANIFEST_SIGNING_KEY_SOURCE")
    }
    # this checkout's code, even where .venv's editable install points at another one
    env.update({"PATH": "/usr/bin:/bin", "BASE": server.url, "PYTHONPATH": str(ROOT)})
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", str(path)],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout


def test_readme_history_and_cli_lines_run_as_written(server: ServerProcess) -> None:
    history = block_after("<!-- history -->")
    assert "manifest export" in history and "verify-dispute" in history
    # the live stream never ends by itself (the README says Ctrl-C): its own tests check it
    lines = [line for line in history.splitlines() if "/stream" not in line]
    assert len(lines) == len(history.splitlines()) - 1
    with tempfile.TemporaryDirectory() as tmp:
        out = run_from_a_checkout(server, walkthrough() + "\n".join(lines) + "\n", Path(tmp))
        created = json.loads((Path(tmp) / "game.json").read_text())
        exported = json.loads((Path(tmp) / "exported.json").read_text())
    # the export did not overwrite the walk-through's game.json (its seat tokens)
    assert created["seats"][0]["token"] and exported["game"]["id"] == created["id"]
    reports = _json_documents(out)
    verified = [r for r in reports if "adjudication" in r]  # the audit and manifest verify
    disputed = [r for r in reports if "checks" in r]  # manifest verify-dispute's
    assert len(verified) == 2 and all(r["ok"] for r in verified), verified
    assert disputed and disputed[-1]["ok"] is True, disputed


def _json_documents(out: str) -> list[dict[str, Any]]:
    """Every JSON object printed in ``out`` (curl's answers run into each other)."""
    decoder, found, pos = json.JSONDecoder(), [], 0
    while (pos := out.find("{", pos)) != -1:
        try:
            value, end = decoder.raw_decode(out, pos)
        except ValueError:
            pos += 1
            continue
        found.append(value)
        pos = end
    return found


def test_readme_bot_lines_run_as_written(server: ServerProcess) -> None:
    block = block_after("<!-- bot -->")
    assert "empire-builder" in block and "examples.bot" in block
    with tempfile.TemporaryDirectory() as tmp:
        out = run_from_a_checkout(server, block, Path(tmp)).splitlines()
    starts = [line for line in out if line.startswith("game ")]
    ends = [line for line in out if line.startswith("finished at version ")]
    assert len(starts) == len(ends) == block.count("examples.bot"), out
    assert any(" commands sent, version " in line for line in out), out  # progress
    # Empire Builder's greedy game ends at its turn limit (or earlier, with a winner)
    assert "'reason': 'turn_limit'" in ends[0] or "'winners': [" in ends[0], ends[0]
    # Curious Cargo's greedy game says how it ended (its game_ended event's triggers)
    assert any(line.startswith("ended by: [") for line in out), out
