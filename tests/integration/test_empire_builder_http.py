"""Empire Builder through the platform: the map asset served once with an ETag, and a full game
played over HTTP by random bots (a turn limit ends it), then replayed and audited clean."""

from __future__ import annotations

import asyncio
import hashlib
import json
import random

import pytest

from domain.empire_builder.board import MAP_BYTES, MAP_HASH
from domain.platform.table import fold_stream
from domain.registry import get_game

from .apihelp import auth, check_replay_line, pg
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]
GAME = "empire-builder"


def test_the_map_is_served_once_by_its_hash(server: ServerProcess) -> None:
    asyncio.run(_assets(server))


async def _assets(server: ServerProcess) -> None:
    async with server.async_client() as client:
        r = await client.get(f"/v1/rules/{GAME}/assets/map")
        assert r.status_code == 200
        assert r.content == MAP_BYTES
        assert r.headers["etag"] == f'"{MAP_HASH}"'
        again = await client.get(f"/v1/rules/{GAME}/assets/map",
                                 headers={"If-None-Match": r.headers["etag"]})
        assert again.status_code == 304 and again.content == b""
        stale = await client.get(f"/v1/rules/{GAME}/assets/map",
                                 headers={"If-None-Match": '"0000"'})
        assert stale.status_code == 200
        for path in (f"/v1/rules/{GAME}/assets/nothing", "/v1/rules/no-such-game/assets/map",
                     "/v1/rules/jolly-cargo/assets/map"):
            missing = await client.get(path)
            assert missing.status_code == 404
            assert missing.json()["code"] == "asset.not_found"


def test_full_game_over_http_then_replayed_and_audited(server: ServerProcess) -> None:
    asyncio.run(_play(server, 3))


async def _play(server: ServerProcess, seats: int) -> None:
    rng = random.Random(seats)
    async with server.async_client() as client:
        r = await client.post(
            "/v1/games",
            json={"game": GAME, "seats": seats, "players": [f"p{i}" for i in range(seats)],
                  "options": {"turn_limit": 5}},
        )
        assert r.status_code == 201, r.text
        created = r.json()
        base = f"/v1/games/{created['id']}"
        tokens = [s["token"] for s in created["seats"]]
        # hostile commands: refused with the rule's code, naming the step; nothing appended
        first = (await client.get(base)).json()
        seat = first["to_act"][0]
        for command, code in [
            ({"type": "build", "path": [0]}, "rule.empty_path"),
            ({"type": "build", "path": [0, 1]}, "rule.not_connected"),
            ({"type": "build", "path": [-5, 1]}, "rule.no_such_milepost"),
            ({"type": "move", "path": [1, 2]}, "rule.building_turns"),
            ({"type": "build", "path": "far"}, "command.invalid"),
            ({"type": "deliver", "card": True, "demand": 0}, "command.invalid"),
        ]:
            r = await client.post(base + "/commands", headers=auth(tokens[seat]),
                                  json={"command": command})
            assert r.status_code == 422, r.text
            assert r.json()["code"] == code, r.text
        assert (await client.get(base)).json()["version"] == first["version"]
        moves = 0
        while True:
            doc = (await client.get(base)).json()
            if doc["status"] == "finished":
                break
            assert doc["view"]["map"]["hash"] == MAP_HASH
            seat = doc["to_act"][0]
            legal = (await client.get(base + "/legal", headers=auth(tokens[seat]))).json()
            # the legal contract: not complete, and the grammar says what else is accepted
            assert legal["complete"] is False
            assert "choose_face" in {rule["type"] for rule in legal["grammar"]}
            if any(c["type"] == "move" for c in legal["commands"]):
                assert {"form": "steps", "type": "move", "field": "path", "window": 1,
                        "total": None} in legal["grammar"]
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
            assert moves < 3000, "the game does not end"
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
        assert table is not None
        assert get_game(GAME).outcome(table.state) is not None
