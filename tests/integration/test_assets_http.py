"""Every game's static data served at ``/v1/rules/{game}/assets/{name}``: each asset is its data
file's bytes with a strong ETag and 304 on a match, ``GET /v1/rules`` names them, the OpenAPI
names them, and Empire Builder's loads, demand cards and event cards say what a client needs to
plan (supply cities per load, three demands per card, a kind per event card)."""

from __future__ import annotations

import asyncio
import hashlib
import json
from importlib import resources

import pytest

from domain.empire_builder.board import CARDS, LOADS, SUPPLIES
from domain.registry import GAMES

from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]

#: The data files of every game, as its package holds them (a game whose data is code has none).
EXPECTED = {
    "jolly-cargo": set(),
    "cargo-empire": {"map", "components"},
    "empire-builder": {"map", "loads", "demands", "events"},
    "curious-cargo": {"components", "boards"},
}


def test_every_data_file_of_every_game_is_an_asset() -> None:
    assert set(EXPECTED) == set(GAMES)
    for game_id, game in GAMES.items():
        package = "domain." + game_id.replace("-", "_")
        folder = resources.files(package).joinpath("data")
        on_disk = {p.name.removesuffix(".json") for p in folder.iterdir()
                   if p.name.endswith(".json")} if folder.is_dir() else set()
        assert set(game.assets) == on_disk == EXPECTED[game_id], game_id


def test_every_asset_is_served_with_its_etag(server: ServerProcess) -> None:
    asyncio.run(_served(server))


async def _served(server: ServerProcess) -> None:
    async with server.async_client() as client:
        listed = {e["game"]: e["assets"] for e in (await client.get("/v1/rules")).json()}
        schema = (await client.get("/schema/openapi.json")).json()
        described = schema["paths"]["/v1/rules/{game}/assets/{name}"]["get"]["description"]
        for game_id, game in GAMES.items():
            assert listed[game_id] == sorted(game.assets)
            for name, body in game.assets.items():
                assert f"{game_id}: " in described and name in described
                path = f"/v1/rules/{game_id}/assets/{name}"
                r = await client.get(path)
                assert r.status_code == 200, path
                assert r.content == body
                assert r.headers["content-type"].startswith("application/json")
                etag = f'"{hashlib.sha256(body).hexdigest()}"'
                assert r.headers["etag"] == etag
                again = await client.get(path, headers={"If-None-Match": etag})
                assert again.status_code == 304 and again.content == b""
        missing = await client.get("/v1/rules/curious-cargo/assets/map")
        assert missing.status_code == 404 and missing.json()["code"] == "asset.not_found"


def test_empire_builder_assets_say_where_loads_are_and_what_cards_hold() -> None:
    assets = GAMES["empire-builder"].assets
    loads = {x["name"]: x for x in json.loads(assets["loads"])["loads"]}
    assert set(loads) == set(LOADS)
    for name, load in loads.items():
        assert load["chips"] == LOADS[name].chips
        assert sorted(load["supply"]) == sorted(c for c, xs in SUPPLIES.items() if name in xs)
    cards = json.loads(assets["demands"])["cards"]
    assert len(cards) == len(CARDS) and all(len(card) == 3 for card in cards)
    assert [[d[0] for d in card] for card in cards] == [[d.city for d in c] for c in CARDS]
    events = json.loads(assets["events"])["cards"]
    assert events and all(isinstance(e["kind"], str) and e["name"] for e in events)
