"""Events told as sentences over HTTP (issue 43; docs/api.md, "Sentences"): ``/events``,
``/replay/{n}``, ``/replay`` and ``/stream`` carry each event's sentence in the asked language
(``lang=``, else ``Accept-Language``, else English) with its template id and arguments; the
export carries the templates; a spectator's sentence of a face-down crate names no colour, the
crate's owner reads it."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import httpx
import pytest

from .apihelp import auth, bot_step, create_started, tokens_of
from .historyhelp import sse_messages
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]

COLOURS = {"red", "blue", "green", "yellow", "rouge", "bleue", "verte", "jaune"}


async def _events(
    client: httpx.AsyncClient,
    game_id: str,
    token: str | None,
    headers: dict[str, str] | None = None,
    **kw: Any,
) -> list[dict[str, Any]]:
    r = await client.get(
        f"/v1/games/{game_id}/events", headers={**auth(token), **(headers or {})}, **kw
    )
    assert r.status_code == 200, r.text
    events: list[dict[str, Any]] = r.json()["events"]
    return events


def test_events_replay_and_export_carry_sentences(server: ServerProcess) -> None:
    asyncio.run(_events_replay_export(server))


async def _events_replay_export(server: ServerProcess) -> None:
    async with server.async_client() as client:
        created = await create_started(client, options={"crate_placement": "players"})
        game_id, tokens = created["id"], tokens_of(created)
        rng = random.Random(3)
        for _ in range(4):
            r = await bot_step(client, game_id, tokens, rng)
            assert r is not None and r.status_code == 200, r

        english = await _events(client, game_id, None)
        assert all(e["sentence"]["lang"] == "en" for e in english)
        joined = next(e for e in english if e["type"] == "lobby.joined")
        assert joined["sentence"] == {
            "id": "platform.lobby.joined",
            "lang": "en",
            "text": f"{joined['data']['name']} took seat {joined['data']['seat']}",
            "args": {"name": joined["data"]["name"], "seat": joined["data"]["seat"]},
        }
        # Accept-Language, and lang= over it
        french = await _events(client, game_id, None, headers={"accept-language": "fr-FR,en;q=0.5"})
        assert all(e["sentence"]["lang"] == "fr" for e in french)
        assert [e["sentence"]["id"] for e in french] == [e["sentence"]["id"] for e in english]
        asked = await _events(
            client, game_id, None, params={"lang": "en"}, headers={"accept-language": "fr"}
        )
        assert asked == english

        # a face-down crate: the spectator's sentence names no colour; its owner's does
        crates = [e for e in french if e["type"] == "crate_placed"]
        assert crates
        for e in crates:
            assert e["sentence"]["id"] == "jolly-cargo.crate_placed#hidden"
            assert "colour" not in e["sentence"]["args"]
            assert not COLOURS & set(e["sentence"]["text"].split()), e["sentence"]
        # (face down to everyone, its placer too, until the game is over)
        owner = crates[0]["data"]["seat"]
        own = await _events(client, game_id, tokens[owner], params={"lang": "fr"})
        mine = [e for e in own if e["type"] == "crate_placed" and e["data"]["seat"] == owner]
        assert mine and all(e["sentence"]["id"] == "jolly-cargo.crate_placed#hidden" for e in mine)

        # /replay/{n}: the sentence of event n; /replay: every line's event has its sentence
        n = crates[0]["version"]
        r = await client.get(f"/v1/games/{game_id}/replay/{n}", params={"lang": "fr"})
        assert r.status_code == 200 and r.json()["sentence"] == crates[0]["sentence"]
        lines = {}
        tags = {}
        for lang in ("en", "fr"):
            r = await client.get(f"/v1/games/{game_id}/replay", params={"lang": lang})
            assert r.status_code == 200 and "Accept-Language" in r.headers["vary"]
            lines[lang] = [json.loads(line) for line in r.content.splitlines()]
            tags[lang] = r.headers["etag"]
        assert tags["en"] != tags["fr"]
        assert [line["event"]["sentence"] for line in lines["fr"]] == [
            e["sentence"] for e in french
        ]
        # the event's own fields are the events page's, sentence or not
        assert [{**line["event"], "sentence": None} for line in lines["en"]] == [
            {**e, "sentence": None} for e in english
        ]

        # the export carries the templates of its event types, in both languages
        r = await client.get(f"/v1/games/{game_id}/export")
        assert r.status_code == 200, r.text
        messages = r.json()["messages"]
        assert set(messages) == {"en", "fr"}
        ids = {t["id"] for t in messages["fr"]}
        assert {"platform.lobby.joined", "jolly-cargo.crate_placed#hidden"} <= ids
        assert "jolly-cargo.term.red" in ids
        forms = {t["id"]: t["forms"] for t in messages["fr"]}
        assert forms["platform.lobby.joined"] == ["{name} prend la place {seat}"]


def test_a_seat_reads_its_own_cards_in_its_own_sentences(server: ServerProcess) -> None:
    asyncio.run(_own_cards(server))


async def _own_cards(server: ServerProcess) -> None:
    async with server.async_client() as client:
        r = await client.post(
            "/v1/games", json={"game": "cargo-empire", "seats": 2, "players": ["ann", "bob"]}
        )
        assert r.status_code == 201, r.text
        game_id, tokens = r.json()["id"], tokens_of(r.json())
        for reader in (0, 1):
            events = await _events(client, game_id, tokens[reader], params={"lang": "fr"})
            dealt = [e for e in events if e["type"] == "cities_dealt"]
            assert {e["data"]["seat"] for e in dealt} == {0, 1}
            for e in dealt:
                sentence = e["sentence"]
                if e["data"]["seat"] == reader:
                    assert sentence["id"] == "cargo-empire.cities_dealt#seen"
                    cities = sentence["args"]["cities"]
                    assert cities and all(city in sentence["text"] for city in cities)
                else:
                    assert sentence["id"] == "cargo-empire.cities_dealt"
                    assert "cities" not in sentence["args"]
                    name = ["ann", "bob"][e["data"]["seat"]]
                    assert sentence["text"] == f"{name} reçoit 2 cartes de ville privées"


def test_a_stream_that_names_a_language_is_told_the_events(server: ServerProcess) -> None:
    asyncio.run(_stream(server))


async def _stream(server: ServerProcess) -> None:
    async with server.async_client(timeout=30.0) as client:
        created = await create_started(client)
        game_id, tokens = created["id"], tokens_of(created)
        rng = random.Random(5)
        async with client.stream(
            "GET", f"/v1/games/{game_id}/stream", params={"lang": "fr"}
        ) as stream:
            assert stream.status_code == 200
            messages = sse_messages(stream.aiter_lines())
            first = await asyncio.wait_for(anext(messages), 10)
            assert first["event"] == "change"
            before = json.loads(first["data"])["version"]
            r = await bot_step(client, game_id, tokens, rng)
            assert r is not None and r.status_code == 200, r
            version = r.json()["version"]
            change = await asyncio.wait_for(anext(messages), 10)
            assert change["event"] == "change"
            told = await asyncio.wait_for(anext(messages), 10)
            assert told["event"] == "sentences"
            said = json.loads(told["data"])
            assert said["version"] == json.loads(change["data"])["version"] == version
            page = await _events(client, game_id, None, params={"after": before, "lang": "fr"})
            assert said["sentences"] == [
                {"version": e["version"], "sentence": e["sentence"]} for e in page
            ]
            assert all(s["sentence"]["lang"] == "fr" for s in said["sentences"])
