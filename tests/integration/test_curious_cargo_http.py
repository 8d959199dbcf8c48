"""Curious Cargo over HTTP, what the game adds to the whole game every game plays
(``test_full_games_http.py``): a hostile client's malformed and illegal commands are 422 problems
with the rule's code and store nothing, and the cards in hand stay hidden from the other seat
and from spectators while the game is played."""

from __future__ import annotations

import asyncio
import random

import pytest

from .apihelp import auth, pg
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]
GAME = "curious-cargo"
#: Moves played with the hidden cards checked at each (a draft and a few trucking turns).
MOVES = 120


def test_hostile_commands_are_refused_with_the_rules_code(server: ServerProcess) -> None:
    asyncio.run(_hostile(server))


def test_boards_and_the_three_colour_variant_over_http(server: ServerProcess) -> None:
    asyncio.run(_variant(server))


async def _variant(server: ServerProcess) -> None:
    players = ["p0", "p1"]
    async with server.async_client() as client:
        for options in ({"board": 7}, {"board": "2"}, {"colours": 4}, {"colour": 3}):
            r = await client.post(
                "/v1/games", json={"game": GAME, "seats": 2, "players": players, "options": options}
            )
            assert r.status_code == 422 and r.json()["code"] == "options.invalid", r.text
        r = await client.post(
            "/v1/games",
            json={"game": GAME, "seats": 2, "players": players,
                  "options": {"board": 5, "colours": 3, "draft": False}},
        )
        assert r.status_code == 201, r.text
        created = r.json()
        base = f"/v1/games/{created['id']}"
        tokens = [s["token"] for s in created["seats"]]
        view = (await client.get(base)).json()["view"]
        assert view["board"]["number"] == 5 and view["options"]["colours"] == 3
        assert view["shipping_board"]["colours"] == ["red", "teal", "purple"]
        assert all(p["splitters"]["purple"] == 1 for p in view["players"])
        picture = (await client.get(base + "/board.svg")).text
        assert 'data-shipping="purple"' in picture
        # the seat to act plays through /legal until a trucking phase, its legal list valid
        rng = random.Random(28)
        for _ in range(40):
            doc = (await client.get(base)).json()
            seat = doc["to_act"][0]
            legal = (await client.get(base + "/legal", headers=auth(tokens[seat]))).json()
            r = await client.post(
                base + "/commands",
                headers=auth(tokens[seat]),
                json={"command": rng.choice(legal["commands"]),
                      "expected_version": legal["version"]},
            )
            assert r.status_code == 200, r.text
        async with pg(server.pg_dsn) as store:
            events = await store.read(created["id"])
        # new games record today's rules edition (docs/api.md "Rules editions")
        assert events[0].data["edition"] == 2
        assert events[0].data["options"] == {
            "first_player": None, "draft": False, "board": 5, "colours": 3
        }


async def _hostile(server: ServerProcess) -> None:
    async with server.async_client() as client:
        r = await client.post("/v1/games", json={"game": GAME, "seats": 2, "players": ["a", "b"]})
        assert r.status_code == 201, r.text
        created = r.json()
        base = f"/v1/games/{created['id']}"
        token = created["seats"][0]["token"]
        doc = (await client.get(base)).json()
        for command, code in (
            ({"type": "play_tile", "tile": "S2r1", "at": "b3", "rot": 45}, "rule.wrong_step"),
            ({"type": "place_splitter", "colour": "green", "at": "b3", "rot": 0},
             "command.invalid"),
            ({"type": "keep_card", "card": "T99"}, "rule.card_not_held"),
        ):  # fmt: skip
            r = await client.post(
                base + "/commands",
                headers=auth(token),
                json={"command": command, "expected_version": doc["version"]},
            )
            assert r.status_code == 422 and r.json()["code"] == code, r.text
        assert (await client.get(base)).json()["version"] == doc["version"]


def test_cards_in_hand_stay_hidden_while_the_game_is_played(server: ServerProcess) -> None:
    asyncio.run(_hidden(server))


async def _hidden(server: ServerProcess) -> None:
    rng = random.Random(2)
    async with server.async_client() as client:
        r = await client.post("/v1/games", json={"game": GAME, "seats": 2, "players": ["a", "b"]})
        assert r.status_code == 201, r.text
        created = r.json()
        base = f"/v1/games/{created['id']}"
        tokens = [s["token"] for s in created["seats"]]
        for moves in range(MOVES):
            doc = (await client.get(base)).json()
            if doc["status"] == "finished":
                break
            seat = doc["to_act"][0]
            for player in doc["view"]["players"]:  # the spectator sees no card
                assert player["cards"] is None and player["dealt"] is None
            if moves % 10 == 0:
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
