"""Every game through the platform, one test for all four (issue 27): a lobby opened without
players and joined seat by seat with its invite code, a whole game played over HTTP by bots that
send a seeded random command from the acting seat's ``/legal`` list, then the audit clean, the
revealed seed opening its commitment, and the replay equal to the stored events folded (every
line, and a seek every 25 events). What a game adds to this (hostile commands, hidden cards,
the legal grammar) is tested in its own file."""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from typing import Any

import msgspec
import pytest

from domain.platform.table import fold_stream, game_document
from domain.registry import get_game

from .apihelp import RANDOM_CRATES, auth, check_replay_line, pg
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]

#: (game, seats, options): each game once, Cargo Empire also solo (its own end and scoring);
#: Empire Builder with a turn limit (random bots build for ever and rarely deliver). A random
#: CARGO game is 300 to 2,200 commands (73 s here on two busy cores): ``slow``, as the other
#: whole CARGO games over HTTP; the quick run keeps ``test_api_play``'s, checked byte for byte.
GAMES = [
    pytest.param("jolly-cargo", 2, RANDOM_CRATES, id="jolly-cargo-2", marks=pytest.mark.slow),
    pytest.param("cargo-empire", 1, None, id="cargo-empire-1"),
    pytest.param("cargo-empire", 3, None, id="cargo-empire-3"),
    pytest.param("curious-cargo", 2, None, id="curious-cargo-2"),
    pytest.param("empire-builder", 3, {"turn_limit": 5}, id="empire-builder-3"),
]
#: A bound no game reaches (a game that does not end fails instead of hanging).
MOST_MOVES = 5000


@pytest.mark.parametrize(("game", "seats", "options"), GAMES)
def test_a_whole_game_over_http_audits_clean_and_replays_exactly(
    server: ServerProcess, game: str, seats: int, options: dict[str, Any] | None
) -> None:
    asyncio.run(_whole_game(server, game, seats, options))


async def _whole_game(
    server: ServerProcess, game: str, seats: int, options: dict[str, Any] | None
) -> None:
    rng = random.Random(f"{game}/{seats}")
    async with server.async_client() as client:
        body: dict[str, Any] = {"game": game, "seats": seats}
        if options is not None:
            body["options"] = options
        r = await client.post("/v1/games", json=body)
        assert r.status_code == 201, r.text
        created = r.json()
        assert created["status"] == "open"
        game_id = created["id"]
        base = f"/v1/games/{game_id}"
        tokens: list[str] = []
        for i in range(seats):
            r = await client.post(
                base + "/join", json={"name": f"p{i}", "invite_code": created["invite_code"]}
            )
            assert r.status_code == 200, r.text
            assert r.json()["seat"] == i
            tokens.append(r.json()["token"])
        moves = 0
        while True:
            doc = (await client.get(base)).json()
            if doc["status"] == "finished":
                break
            assert doc["status"] == "active", doc["status"]
            seat = doc["to_act"][0]
            legal = (await client.get(base + "/legal", headers=auth(tokens[seat]))).json()
            r = await client.post(
                base + "/commands",
                headers=auth(tokens[seat]),
                json={
                    "command": rng.choice(legal["commands"]),
                    "expected_version": legal["version"],
                },
            )
            assert r.status_code == 200, r.text
            moves += 1
            assert moves < MOST_MOVES, "the game does not end"
        result = doc["result"]
        assert result is not None and len(result["scores"]) == seats
        version = doc["version"]

        audit = (await client.get(base + "/audit")).json()
        assert audit["ok"], audit["problems"]
        assert audit["chain"]["ok"] and audit["adjudication"]["ok"] and audit["seed"]["ok"]
        assert audit["adjudication"]["commands"] == moves

        lines = (await client.get(base + "/replay")).text.splitlines()
        assert len(lines) == version
        async with pg(server.pg_dsn) as store:
            events = await store.read(game_id)
        commitment = events[0].data["seed_commitment"]
        revealed = next(e for e in events if e.type == "seed.revealed").data["seed"]
        assert hashlib.sha256(bytes.fromhex(revealed)).hexdigest() == commitment
        table = None
        for n, (line, event) in enumerate(zip(lines, events, strict=True), start=1):
            table = fold_stream(table, [event], game_id)
            check_replay_line(json.loads(line), n, version, table)
            if n % 25 == 0 or n == version:
                at = (await client.get(f"{base}/replay/{n}")).json()
                expected = msgspec.to_builtins(
                    game_document(table, "spectator", everything=True).view
                )
                assert at["view"] == expected and at["folded"] < 100
        assert table is not None
        assert get_game(game).outcome(table.state) is not None
