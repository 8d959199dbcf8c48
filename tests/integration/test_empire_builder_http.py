"""Empire Builder over HTTP, what the game adds to the whole game every game plays
(``test_full_games_http.py``): the map asset served once with an ETag, hostile commands refused
naming the step, and the legal lists' grammar on every turn of a game played to its turn
limit."""

from __future__ import annotations

import asyncio
import random

import pytest

from domain.empire_builder.board import MAP_BYTES, MAP_HASH

from .apihelp import auth
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]
GAME = "empire-builder"
PLAYERS = ["p0", "p1", "p2"]


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


def test_hostile_commands_are_refused_naming_the_step(server: ServerProcess) -> None:
    asyncio.run(_hostile(server))


async def _hostile(server: ServerProcess) -> None:
    async with server.async_client() as client:
        r = await client.post("/v1/games", json={"game": GAME, "seats": 3, "players": PLAYERS})
        assert r.status_code == 201, r.text
        created = r.json()
        base = f"/v1/games/{created['id']}"
        first = (await client.get(base)).json()
        token = created["seats"][first["to_act"][0]]["token"]
        for command, code in [
            ({"type": "build", "path": [0]}, "rule.empty_path"),
            ({"type": "build", "path": [0, 1]}, "rule.not_connected"),
            ({"type": "build", "path": [-5, 1]}, "rule.no_such_milepost"),
            ({"type": "move", "path": [1, 2]}, "rule.building_turns"),
            ({"type": "build", "path": "far"}, "command.invalid"),
            ({"type": "deliver", "card": True, "demand": 0}, "command.invalid"),
        ]:
            r = await client.post(
                base + "/commands", headers=auth(token), json={"command": command}
            )
            assert r.status_code == 422, r.text
            assert r.json()["code"] == code, r.text
        assert (await client.get(base)).json()["version"] == first["version"]


def test_every_legal_list_says_what_else_its_grammar_accepts(server: ServerProcess) -> None:
    """The legal contract over HTTP: Empire Builder's lists are never complete, and the
    grammar names the forms beyond them (``choose_face``; a move's path, one step a window):
    checked on every turn until a seat can move."""
    asyncio.run(_grammar(server))


async def _grammar(server: ServerProcess) -> None:
    rng = random.Random(3)
    async with server.async_client() as client:
        r = await client.post(
            "/v1/games",
            json={"game": GAME, "seats": 3, "players": PLAYERS, "options": {"turn_limit": 5}},
        )
        assert r.status_code == 201, r.text
        created = r.json()
        base = f"/v1/games/{created['id']}"
        tokens = [s["token"] for s in created["seats"]]
        moved = False
        while not moved:
            doc = (await client.get(base)).json()
            assert doc["status"] == "active", "the game ended before any seat could move"
            assert doc["view"]["map"]["hash"] == MAP_HASH
            seat = doc["to_act"][0]
            legal = (await client.get(base + "/legal", headers=auth(tokens[seat]))).json()
            assert legal["complete"] is False
            assert "choose_face" in {rule["type"] for rule in legal["grammar"]}
            if any(c["type"] == "move" for c in legal["commands"]):
                moved = True
                assert {"form": "steps", "type": "move", "field": "path", "window": 1,
                        "total": None} in legal["grammar"]  # fmt: skip
            r = await client.post(
                base + "/commands",
                headers=auth(tokens[seat]),
                json={
                    "command": rng.choice(legal["commands"]),
                    "expected_version": legal["version"],
                },
            )
            assert r.status_code == 200, r.text
