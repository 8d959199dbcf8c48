"""Curious Cargo through the platform, with no change to ``service/`` or ``projections/``: a
full two-player game played over HTTP by bots, then replayed and audited clean; the cards in hand
stay hidden from the other seat and from spectators on the way."""

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
GAME = "curious-cargo"


def test_full_game_over_http_then_replayed_and_audited(server: ServerProcess) -> None:
    asyncio.run(_play(server, 2))


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
        # A hostile client first: malformed and illegal commands are 422 problems, nothing stored.
        doc = (await client.get(base)).json()
        for command, code in (
            ({"type": "play_tile", "tile": "S2r1", "at": "b3", "rot": 45}, "rule.wrong_step"),
            ({"type": "place_splitter", "colour": "purple", "at": "b3", "rot": 0},
             "command.invalid"),
            ({"type": "keep_card", "card": "T99"}, "rule.card_not_held"),
        ):
            r = await client.post(
                base + "/commands",
                headers=auth(tokens[0]),
                json={"command": command, "expected_version": doc["version"]},
            )
            assert r.status_code == 422 and r.json()["code"] == code, r.text
        assert (await client.get(base)).json()["version"] == doc["version"]
        moves = 0
        while True:
            doc = (await client.get(base)).json()
            if doc["status"] == "finished":
                break
            seat = doc["to_act"][0]
            for player in doc["view"]["players"]:
                assert player["cards"] is None and player["dealt"] is None
            if moves % 50 == 0:
                mine = (await client.get(base, headers=auth(tokens[seat]))).json()["view"]
                assert mine["players"][seat]["cards"] is not None
                assert mine["players"][1 - seat]["cards"] is None and mine["deck"] is None
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
