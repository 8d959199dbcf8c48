"""Cargo Empire through the platform, with no change to ``service/`` or ``projections/``: a full
game played over HTTP by bots (solo and three players), then replayed and audited clean."""

from __future__ import annotations

import asyncio
import hashlib
import json
import random

import msgspec
import pytest

from domain.platform.table import fold_stream, game_document
from domain.registry import get_game

from .apihelp import auth, check_replay_line, pg
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]
GAME = "cargo-empire"


@pytest.mark.parametrize("seats", [1, 3])
def test_full_game_over_http_then_replayed_and_audited(server: ServerProcess, seats: int) -> None:
    asyncio.run(_play(server, seats))


async def _play(server: ServerProcess, seats: int) -> None:
    rng = random.Random(seats)
    async with server.async_client() as client:
        r = await client.post(
            "/v1/games",
            json={"game": GAME, "seats": seats, "players": [f"p{i}" for i in range(seats)]},
        )
        assert r.status_code == 201, r.text
        created = r.json()
        base = f"/v1/games/{created['id']}"
        tokens = [s["token"] for s in created["seats"]]
        moves = 0
        while True:
            doc = (await client.get(base)).json()
            if doc["status"] == "finished":
                break
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
            assert moves < 5000, "the game does not end"
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
            events = await store.read(created["id"])
            commitment = events[0].data["seed_commitment"]
            revealed = next(e for e in events if e.type == "seed.revealed").data["seed"]
            assert hashlib.sha256(bytes.fromhex(revealed)).hexdigest() == commitment
            table = None
            for n, (line, event) in enumerate(zip(lines, events, strict=True), start=1):
                table = fold_stream(table, [event], created["id"])
                check_replay_line(json.loads(line), n, version, table)
                if n % 25 == 0 or n == version:
                    at = (await client.get(f"{base}/replay/{n}")).json()
                    expected = msgspec.to_builtins(
                        game_document(table, "spectator", everything=True).view
                    )
                    assert at["view"] == expected and at["folded"] < 100
        assert table is not None
        rules = get_game(GAME)
        assert rules.outcome(table.state) is not None
