"""The README's shell blocks, and those of docs/using-the-api.md, run as written with bash in a
fresh shell (only ``PATH`` and ``BASE`` set) against a live server, so the prose stays true
(issues 11, 29, 38). The blocks are read from the pages themselves, found by the mark before
each (``<!-- quickstart -->``); every ``sh`` block of the README is either run here or marks
where else it runs (``<!-- not run here: ... -->``)."""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from .serverproc import ROOT, InProcessServer, ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]
README = ROOT / "README.md"
USING = ROOT / "docs" / "using-the-api.md"
GAMES = ("jolly-cargo", "cargo-empire", "empire-builder", "curious-cargo")
_BLOCK = re.compile(r"^<!-- ([^>]*?) -->\n```sh\n(.*?)\n```$", re.M | re.S)
_ANY_SH = re.compile(r"^```sh$", re.M)
RUN_HERE = {"quickstart"}

Server = ServerProcess | InProcessServer


def blocks(page: Path) -> dict[str, str]:
    """Every marked ``sh`` block of ``page``, by its mark."""
    return {mark: body + "\n" for mark, body in _BLOCK.findall(page.read_text())}


def block(page: Path, mark: str) -> str:
    found = blocks(page)
    assert mark in found, f"{page.name} has no sh block marked <!-- {mark} -->"
    return found[mark]


def test_every_readme_block_is_marked_and_run_or_placed() -> None:
    """Each sh block has a mark; each is run here or says which other test runs it."""
    text = README.read_text()
    found = blocks(README)
    assert len(found) == len(_ANY_SH.findall(text)), "an sh block of the README has no mark"
    for mark in found:
        assert mark in RUN_HERE or mark.startswith("not run here: "), mark
    assert "quickstart" in found


SETS_BASE = 'BASE="${BASE:-http://127.0.0.1:8000}"\n'


def run(script: str, tmp: Path, base: str, env: dict[str, str] | None = None) -> str:
    """``script`` by ``bash -e -u -o pipefail`` in ``tmp``: a fresh shell, PATH and BASE alone
    (plus ``env``); it must succeed without a traceback. Each script starts by setting ``BASE``
    (to the server's address when given, as a reader's shell would not)."""
    assert script.startswith(SETS_BASE), script[:80]
    path = tmp / "pasted.sh"
    path.write_text(script)
    done = subprocess.run(
        ["bash", "-e", "-u", "-o", "pipefail", str(path)],
        cwd=tmp,
        env={"PATH": "/usr/bin:/bin", "BASE": base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout


def test_the_quickstart_plays_a_whole_game_to_its_end(server: Server) -> None:
    script = block(README, "quickstart")
    with tempfile.TemporaryDirectory() as tmp:
        out = run(script, Path(tmp), server.url).splitlines()
        created = json.loads((Path(tmp) / "game.json").read_text())
        end = json.loads((Path(tmp) / "end.json").read_text())
    assert out[0] == f"game {created['id']}"
    assert out[1] == f"finished at version {end['version']}"
    assert end["status"] == "finished" and end["to_act"] == []
    result = json.loads(out[2].removeprefix("result "))
    assert result == end["result"] and len(result["scores"]) == 2
    assert result["details"]["reason"] in ("won", "turn_limit")
    with server.client() as client:
        assert client.get(f"/v1/games/{created['id']}/audit").json()["ok"] is True
        events = client.get(f"/v1/games/{created['id']}/events?after=0&limit=1000").json()
    assert events["events"][-1]["type"] == "seed.revealed"


def checkout_env(server: Server, tmp: Path) -> dict[str, str]:
    """``tmp`` laid out as the repository's root is for a reader (``.venv`` and ``examples``
    there), and the environment that lets the CLI reach the server's database (issue 29)."""
    (tmp / ".venv").symlink_to(ROOT / ".venv")
    (tmp / "examples").symlink_to(ROOT / "examples")
    env = {
        k: v
        for k, v in server.env.items()
        if k in ("PG_DSN", "REDIS_URL", "MANIFEST_REDIS_PREFIX", "MANIFEST_SIGNING_KEY_SOURCE")
    }
    # this checkout's code, even where .venv's editable install points at another one
    env["PYTHONPATH"] = str(ROOT)
    return env


def test_the_lobby_block_runs_as_written(server: Server) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        lines = run(block(USING, "lobby"), Path(tmp), server.url).splitlines()
    joined, hosted = json.loads(lines[0]), json.loads(lines[1])
    assert hosted["id"] == joined["game"] and hosted["status"] == "open"
    assert hosted["seats"][0]["name"] == "cy" and "invite_code" in hosted
    assert lines[2:] == [f"{g} True" for g in GAMES]


def test_the_history_block_runs_after_the_quickstart(server: Server) -> None:
    history = block(USING, "history")
    assert "manifest export" in history and "verify-dispute" in history and "/stream" in history
    with tempfile.TemporaryDirectory() as tmp:
        env = checkout_env(server, Path(tmp))
        script = block(README, "quickstart") + history
        out = run(script, Path(tmp), server.url, env)
        created = json.loads((Path(tmp) / "game.json").read_text())
        exported = json.loads((Path(tmp) / "exported.json").read_text())
    # the export did not overwrite the quickstart's game.json (its seat tokens)
    assert created["seats"][0]["token"] and exported["game"]["id"] == created["id"]
    reports = _json_documents(out)
    verified = [r for r in reports if "adjudication" in r]  # the audit and manifest verify
    disputed = [r for r in reports if "checks" in r]  # manifest verify-dispute's
    assert len(verified) == 2 and all(r["ok"] for r in verified), verified
    assert disputed and disputed[-1]["ok"] is True, disputed


def test_the_pictures_block_runs_after_the_quickstart(server: Server) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = run(block(README, "quickstart") + block(USING, "pictures"), Path(tmp), server.url)
    assert out.count("<svg") == 4, out[-500:]


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


def test_the_bot_block_runs_as_written(server: Server) -> None:
    bots = block(USING, "bot")
    assert "empire-builder" in bots and "examples.bot" in bots
    with tempfile.TemporaryDirectory() as tmp:
        out = run(bots, Path(tmp), server.url, checkout_env(server, Path(tmp))).splitlines()
    starts = [line for line in out if line.startswith("game ")]
    ends = [line for line in out if line.startswith("finished at version ")]
    assert len(starts) == len(ends) == bots.count("examples.bot"), out
    assert any(" commands sent, version " in line for line in out), out  # progress
    # Empire Builder's greedy game ends at its turn limit (or earlier, with a winner)
    assert "'reason': 'turn_limit'" in ends[0] or "'winners': [" in ends[0], ends[0]
    # Curious Cargo's greedy game says how it ended (its game_ended event's triggers)
    assert any(line.startswith("ended by: [") for line in out), out
