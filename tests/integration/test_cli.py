"""``manifest``'s mistakes and long commands (issue 29): every mistake a user makes is one line
on standard error with an exit status of its own (``service.terminal.EXIT_CODES``), never a
traceback; a port in use is found before "listening" is logged; ``rebuild`` says where it
rebuilt (and refuses without Redis); the long commands draw a progress bar on a terminal."""

from __future__ import annotations

import json
import os
import pty
import select
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from service import cli, terminal

from .serverproc import ROOT, ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "service.cli", *args],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def one_line(done: subprocess.CompletedProcess[str], status: int, *words: str) -> str:
    """The command failed with ``status`` and said so in one line naming ``words``."""
    err = done.stderr
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert done.returncode == status, (done.returncode, err)
    assert len(lines) == 1 and lines[0].startswith("manifest: "), lines
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


@pytest.fixture
def env(server: ServerProcess) -> dict[str, str]:
    return dict(server.env)


def test_exit_statuses_are_distinct() -> None:
    assert cli.EXIT_CODES is terminal.EXIT_CODES
    codes = list(terminal.EXIT_CODES)
    assert len(set(codes)) == len(codes) and 0 not in codes


def test_audit_and_export_of_an_unknown_game(env: dict[str, str]) -> None:
    one_line(run(env, "audit", "no-such-game"), terminal.EXIT_NO_GAME, "no-such-game")
    one_line(run(env, "export", "no-such-game"), terminal.EXIT_NO_GAME, "no-such-game")


def test_verify_a_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    one_line(run(dict(os.environ), "verify", str(missing)), terminal.EXIT_FILE, str(missing))
    keys = tmp_path / "keys.json"
    keys.write_text("{}")
    done = run(dict(os.environ), "verify-dispute", str(missing), "--keys", str(keys))
    one_line(done, terminal.EXIT_FILE, str(missing))


def test_verify_a_file_that_is_not_json_or_not_an_export(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    one_line(run(dict(os.environ), "verify", str(bad)), terminal.EXIT_BAD_FILE, "not JSON")
    other = tmp_path / "other.json"
    other.write_text('{"some": "json"}')
    one_line(run(dict(os.environ), "verify", str(other)), terminal.EXIT_BAD_FILE, "not a Manifest")
    done = run(dict(os.environ), "verify-dispute", str(bad), "--keys", str(other))
    one_line(done, terminal.EXIT_BAD_FILE, "not JSON")
    directory = tmp_path  # a directory is not a file
    one_line(run(dict(os.environ), "verify", str(directory)), terminal.EXIT_FILE, str(directory))


def _game(server: ServerProcess) -> str:
    with server.client() as client:
        r = client.post(
            "/v1/games", json={"game": "jolly-cargo", "seats": 2, "players": ["a", "b"]}
        )
        assert r.status_code == 201, r.text
        game_id: str = r.json()["id"]
        return game_id


def test_export_to_a_place_that_cannot_be_written(server: ServerProcess, tmp_path: Path) -> None:
    game_id = _game(server)
    target = tmp_path / "no-such-dir" / "game.json"
    one_line(run(server.env, "export", game_id, "-o", str(target)), terminal.EXIT_FILE, str(target))
    good = tmp_path / "export.json"
    done = run(server.env, "export", game_id, "-o", str(good))
    assert done.returncode == 0, done.stderr
    events = len(json.loads(good.read_bytes())["events"])
    assert f"exported {game_id} ({events} events) to {good}" in done.stderr


def test_the_cli_and_the_api_agree_on_game_id_spelling(server: ServerProcess) -> None:
    """One rule (docs/api.md, "Errors"): a game id is the lower-case hyphenated UUID the
    server issues; any other spelling of it names no game, for the API (404) and the CLI alike
    (exit ``EXIT_NO_GAME``). Before, ``manifest audit 9005488C-…`` audited the game (exit 0)
    while ``GET /v1/games/9005488C-…`` was 404."""
    game_id = _game(server)
    assert run(server.env, "audit", game_id).returncode == 0
    for spelling in (game_id.upper(), game_id.replace("-", ""), "{" + game_id + "}"):
        with server.client() as client:
            r = client.get(f"/v1/games/{spelling}")
            assert r.status_code == 404 and r.json()["code"] == "game.not_found", r.text
            r = client.get(f"/v1/games/{spelling}/audit")
            assert r.status_code == 404 and r.json()["code"] == "game.not_found", r.text
        for command in ("audit", "export"):
            one_line(run(server.env, command, spelling), terminal.EXIT_NO_GAME, spelling)


def test_a_database_that_does_not_answer(env: dict[str, str]) -> None:
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    env["PG_DSN"] = f"postgresql://postgres@127.0.0.1:{port}/nothing"
    env["MANIFEST_PG_CONNECT_TIMEOUT"] = "5"
    one_line(run(env, "audit", "some-game"), terminal.EXIT_UNAVAILABLE, "PostgreSQL")


def test_rebuild_says_where_and_refuses_without_redis(env: dict[str, str]) -> None:
    done = run(env, "rebuild")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    prefix = env["MANIFEST_REDIS_PREFIX"]
    assert "rebuilt projections of " in done.stdout
    assert f"in Redis at {env['REDIS_URL']} (key prefix {prefix!r}), from PostgreSQL" in (
        done.stdout
    )
    env.pop("REDIS_URL")
    one_line(run(env, "rebuild"), terminal.EXIT_USAGE, "REDIS_URL", "nothing to rebuild")


def test_a_redis_password_is_not_printed(env: dict[str, str]) -> None:
    assert cli._redis_place(cli.Settings(redis_url="redis://user:s3cret@10.0.0.1:6380/2")) == (
        "redis://10.0.0.1:6380/2"
    )


@pytest.mark.parametrize("workers", [1, 2])
def test_a_port_in_use_is_found_before_listening_is_logged(
    env: dict[str, str], workers: int
) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    env["MANIFEST_LOG_LEVEL"] = "info"
    try:
        done = run(env, "serve", "--port", str(port), "--workers", str(workers))
    finally:
        taken.close()
    assert "listening" not in done.stdout + done.stderr.replace("cannot listen", "")
    one_line(done, terminal.EXIT_PORT, f"cannot listen on 127.0.0.1:{port}")


def test_several_workers_without_redis(env: dict[str, str]) -> None:
    env.pop("REDIS_URL")
    one_line(run(env, "serve", "--port", "0", "--workers", "2"), terminal.EXIT_USAGE, "REDIS_URL")


def _on_a_terminal(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """Run with standard error on a pseudo-terminal: (status, stdout, what the terminal got)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "service.cli", *args],
        cwd=ROOT,
        env={**env, "COLUMNS": "120", "TERM": "xterm"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=slave,
    )
    os.close(slave)
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 120)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    out = proc.stdout.read().decode() if proc.stdout else ""
    status = proc.wait(timeout=120)
    os.close(master)
    return status, out, seen.decode(errors="replace")


def test_long_commands_draw_a_bar_on_a_terminal_only(server: ServerProcess, tmp_path: Path) -> None:
    game_id = _game(server)
    path = tmp_path / "export.json"
    done = run(server.env, "export", game_id, "-o", str(path))
    assert done.returncode == 0, done.stderr
    events = len(json.loads(path.read_bytes())["events"])
    # not a terminal: the result only
    assert "━" not in done.stderr and "(events)" not in done.stderr
    quiet = run(server.env, "verify", str(path))
    assert quiet.stderr == "" and json.loads(quiet.stdout)["ok"] in (True, None, False)

    runs: dict[str, Any] = {
        "export": ("export", game_id, "-o", str(tmp_path / "again.json")),
        "audit": ("audit", game_id),
        "verify": ("verify", str(path)),
        "rebuild": ("rebuild",),
    }
    for name, args in runs.items():
        status, _, terminal = _on_a_terminal(server.env, *args)
        assert status in (0, 1), (name, terminal)  # 1: a live game's audit has no seed yet
        assert "Traceback" not in terminal
        assert "━" in terminal, (name, terminal)  # rich's bar
        if name != "rebuild":
            assert f"{events}/{events}" in terminal, (name, terminal)


def test_serve_logs_the_address_it_listens_on(fresh_database: str, redis_url: str) -> None:
    proc = ServerProcess(fresh_database, redis_url, MANIFEST_LOG_LEVEL="info")
    proc.start()
    try:
        lines = [
            json.loads(line)
            for line in proc.log_path.read_text().splitlines()
            if line.startswith("{")
        ]
    finally:
        proc.close()
    listening = [line for line in lines if line.get("event") == "manifest listening"]
    assert len(listening) == 1, lines
    assert listening[0]["url"] == proc.url
    # where a person goes next: the viewer and the API docs (issue 29)
    assert listening[0]["viewer"] == proc.url + "/viewer/"
    assert listening[0]["api_docs"] == proc.url + "/schema"
    assert listening[0]["port"] == proc.port and listening[0]["level"] == "info"


def test_replay_reads_a_game_aloud_in_french(server: ServerProcess) -> None:
    """``manifest replay ID --lang fr``: one line per event, ``version. sentence``, the
    sentences ``GET /replay?lang=fr`` carries (issue 43)."""
    game_id = _game(server)
    done = run(server.env, "replay", game_id, "--lang", "fr")
    assert done.returncode == 0, done.stderr
    with server.client() as client:
        r = client.get(f"/v1/games/{game_id}/replay", params={"lang": "fr"})
        assert r.status_code == 200
        lines = [json.loads(line)["event"] for line in r.content.splitlines()]
    expected = [f"{e['version']}. {e['sentence']['text']}" for e in lines]
    assert done.stdout.splitlines() == expected
    assert expected[1] == "2. a prend la place 0"
    english = run(server.env, "replay", game_id)
    assert english.stdout.splitlines()[1] == "2. a took seat 0"
    nowhere = "0" * 8 + "-0000-4000-8000-" + "0" * 12
    one_line(run(server.env, "replay", nowhere), terminal.EXIT_NO_GAME)


def test_help_reads_as_plain_text() -> None:
    """``manifest --help`` without reStructuredText's marks (issue 38), naming every command."""
    shown = subprocess.run(
        [sys.executable, "-m", "service.cli", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    assert "``" not in shown.stdout and "manifest: run the server" in shown.stdout
    for command in ("serve", "migrate", "rebuild", "audit", "export", "verify", "verify-dispute"):
        assert command in shown.stdout
