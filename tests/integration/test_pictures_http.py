"""Board pictures over HTTP: ``/board.svg``, ``/replay/{n}/board.svg`` and ``Accept:
image/svg+xml`` on the JSON paths serve the caller's view drawn by the game — face-down crates
stay face down for spectators and seats, an auditor of a finished game sees every colour."""

from __future__ import annotations

import asyncio
import xml.etree.ElementTree as ET
from typing import Any

import httpx
import msgspec
import pytest

from domain.curious_cargo import CURIOUS_CARGO
from domain.empire_builder import EMPIRE_BUILDER
from domain.empire_builder.board import LOADS
from domain.jolly_cargo import JOLLY_CARGO
from domain.kernel.svg import Players
from service.http.pictures import picture, wants_svg
from service.problems import Problem

from .apihelp import assert_problem, auth
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]
SVG = "image/svg+xml"
BROWSER_IMG_ACCEPT = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"


def classes(svg: str, cls: str) -> list[ET.Element]:
    root = ET.fromstring(svg)
    return [e for e in root.iter() if cls in (e.get("class") or "").split()]


def test_pictures_of_a_live_game(server: ServerProcess) -> None:
    asyncio.run(_live(server))


async def _place(client: httpx.AsyncClient, base: str, tokens: list[str], n: int) -> None:
    for _ in range(n):
        doc = (await client.get(base)).json()
        seat = doc["to_act"][0]
        legal = (await client.get(base + "/legal", headers=auth(tokens[seat]))).json()
        r = await client.post(
            base + "/commands",
            headers=auth(tokens[seat]),
            json={"command": legal["commands"][0], "expected_version": legal["version"]},
        )
        assert r.status_code == 200, r.text


async def _live(server: ServerProcess) -> None:
    async with server.async_client() as client:
        r = await client.post(
            "/v1/games", json={"game": "jolly-cargo", "seats": 3, "players": ["a", "b", "c"]}
        )
        assert r.status_code == 201, r.text
        created = r.json()
        base = f"/v1/games/{created['id']}"
        tokens = [s["token"] for s in created["seats"]]
        await _place(client, base, tokens, 5)
        doc = (await client.get(base)).json()
        assert doc["view"]["phase"] == "crates"

        r = await client.get(base + "/board.svg")
        assert r.status_code == 200, r.text
        assert r.headers["content-type"].startswith(SVG)
        assert "accept" in r.headers["vary"].lower()
        assert len(classes(r.text, "face-down")) == 5
        assert not [c for c in classes(r.text, "crate") if c.get("data-colour")]
        # the same picture through content negotiation, for a spectator and for a seat
        negotiated = await client.get(base, headers={"Accept": SVG})
        assert negotiated.headers["content-type"].startswith(SVG)
        assert negotiated.text == r.text
        as_img = await client.get(base, headers={"Accept": BROWSER_IMG_ACCEPT})
        assert as_img.text == r.text
        seat_svg = await client.get(base + "/board.svg", headers=auth(tokens[1]))
        assert len(classes(seat_svg.text, "face-down")) == 5
        seat_neg = await client.get(base, headers={**auth(tokens[1]), "Accept": SVG})
        assert seat_neg.text == seat_svg.text
        # JSON stays the default, and wins a tie
        for accept in (None, "*/*", "application/json", "application/json, image/svg+xml"):
            headers = {} if accept is None else {"Accept": accept}
            j = await client.get(base, headers=headers)
            assert j.headers["content-type"].startswith("application/json"), accept
            assert j.json()["id"] == created["id"]

        # replay pictures: after each event, the view the JSON replay holds
        version = doc["version"]
        for n in range(1, version + 1):
            replay = (await client.get(f"{base}/replay/{n}")).json()
            picture = await client.get(f"{base}/replay/{n}/board.svg")
            assert picture.status_code == 200, picture.text
            same = await client.get(f"{base}/replay/{n}", headers={"Accept": SVG})
            assert same.text == picture.text
            view: dict[str, Any] | None = replay["view"]
            expected = 0 if not view else len(view["crates"])
            assert len(classes(picture.text, "face-down")) == expected
            if view:
                # the players called by name (issue 29), the view as a client decodes it
                typed = msgspec.convert(view, JOLLY_CARGO.view_type)
                assert picture.text == JOLLY_CARGO.svg(typed, Players(("a", "b", "c")))
                assert ">a</text>" in picture.text and "seat 0" not in picture.text
            ET.fromstring(picture.text)

        # errors are problem documents, whatever the Accept header
        assert_problem(await client.get(f"{base}/replay/{version + 1}/board.svg"), 404)
        assert_problem(await client.get(f"{base}/replay/0", headers={"Accept": SVG}), 404)
        assert_problem(await client.get("/v1/games/no-such-game/board.svg"), 404, "game.not_found")
        assert_problem(await client.get(base + "/board.svg", headers=auth("forged")), 401)
        for n in ("-1", "99999999999999999999999", "1e3", "x"):
            bad = await client.get(f"{base}/replay/{n}/board.svg")
            assert bad.status_code in (400, 404), (n, bad.status_code)
            assert_problem(bad, bad.status_code)
        # the viewer's files, and nothing beside them
        page = await client.get("/viewer/")
        assert page.status_code == 200 and "app.js" in page.text
        for module in ("app.js", "api.js", "verify.js"):
            js = await client.get(f"/viewer/{module}")
            assert js.headers["content-type"].startswith("text/javascript"), module
        for escape in ("/viewer/..%2fpictures.py", "/viewer/%2e%2e/pictures.py"):
            r = await client.get(escape)
            assert r.status_code == 404, (escape, r.status_code)
            assert "SVG_MEDIA_TYPE" not in r.text
        assert_problem(await client.get(base, headers={**auth("forged"), "Accept": SVG}), 401)


def test_open_game_picture_is_a_notice(server: ServerProcess) -> None:
    async def run() -> None:
        async with server.async_client() as client:
            r = await client.post("/v1/games", json={"game": "cargo-empire", "seats": 2})
            created = r.json()
            picture = await client.get(f"/v1/games/{created['id']}/board.svg")
            assert picture.status_code == 200, picture.text
            assert "waiting for players" in picture.text
            ET.fromstring(picture.text)
            schema = (await client.get("/schema/openapi.json")).json()
            assert "/v1/games/{game_id}/board.svg" in schema["paths"]
            assert "/v1/games/{game_id}/replay/{n}/board.svg" in schema["paths"]

    asyncio.run(run())


@pytest.mark.parametrize(
    ("accept", "svg"),
    [
        (None, False),
        ("*/*", False),
        ("application/json", False),
        ("image/svg+xml", True),
        ("image/*", True),
        ("application/json, image/svg+xml", False),
        ("application/json;q=0.5, image/svg+xml", True),
        ("image/svg+xml;q=0.1, application/json;q=0.2", False),
        ("image/svg+xml;q=oops", False),
        (BROWSER_IMG_ACCEPT, True),
        ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", False),
    ],
)
def test_accept_negotiation(accept: str | None, svg: bool) -> None:
    assert wants_svg(accept) is svg


def test_a_game_without_a_picture_is_406(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(type(JOLLY_CARGO), "svg", lambda self, view, players, load: None)
    with pytest.raises(Problem) as caught:
        picture("jolly-cargo", {"phase": "play"}, "active")
    assert caught.value.status == 406 and caught.value.code == "picture.unavailable"


#: Positions to start from: Curious Cargo seats hold truck cards (hidden from everyone else),
#: Empire Builder seat 0 has track and a train, seat 1 carries Coal.
POSITIONS: dict[str, dict[str, Any]] = {
    "curious-cargo": {"at": "turn", "phase": "trucking", "players": [
        {"cards": ["T17", "T05"], "board": [{"tile": "S2r1", "at": "b3", "rot": 0}],
         "forklift": 1, "shipping_lane": [{"card": "T10", "rear": 1, "goods": {"2": "red"}}]},
        {"cards": ["T22"]}]},
    "empire-builder": {"players": [
        {"money": 48, "cards": [0, 1, 2], "track": [[812, 813, 814]], "turns": 4, "train": 813},
        {"money": 60, "cards": [3, 4, 5], "loads": ["Coal"], "train": 1206, "speed": 12,
         "turns": 3}], "first": 0, "turn_number": 7},
}


def test_curious_cargo_and_empire_builder_pictures(server: ServerProcess) -> None:
    """Both games draw through the hook (no 406): each caller's picture is its own view drawn,
    and a Curious Cargo seat's truck cards appear in its own picture only."""

    async def run() -> None:
        async with server.async_client() as client:
            for game, rules in (
                ("curious-cargo", CURIOUS_CARGO),
                ("empire-builder", EMPIRE_BUILDER),
            ):
                r = await client.post(
                    "/v1/games",
                    json={"game": game, "seats": 2, "players": ["a", "b"],
                          "position": POSITIONS[game]},
                )
                assert r.status_code == 201, r.text
                created = r.json()
                base = f"/v1/games/{created['id']}"
                tokens = [s["token"] for s in created["seats"]]
                pictures: dict[str, str] = {}
                for who, headers in (
                    ("spectator", {}),
                    ("0", auth(tokens[0])),
                    ("1", auth(tokens[1])),
                ):
                    doc = (await client.get(base, headers=headers)).json()
                    picture = await client.get(base + "/board.svg", headers=headers)
                    assert picture.status_code == 200, (game, picture.text)
                    assert picture.headers["content-type"].startswith(SVG)
                    typed = msgspec.convert(doc["view"], rules.view_type)
                    assert picture.text == rules.svg(typed, Players(("a", "b")))
                    assert "a:" in picture.text and "eat 0" not in picture.text
                    negotiated = await client.get(base, headers={**headers, "Accept": SVG})
                    assert negotiated.text == picture.text
                    ET.fromstring(picture.text)
                    pictures[who] = picture.text
                replay = await client.get(f"{base}/replay/1/board.svg")
                assert replay.status_code == 200, replay.text
                if game == "curious-cargo":
                    assert "cards: T17, T05" in pictures["0"] and "cards: T22" in pictures["1"]
                    for card in ("T17", "T05", "T22"):
                        assert card not in pictures["spectator"], card
                    assert "T22" not in pictures["0"] and "T17" not in pictures["1"]
                    assert 'data-truck="T10"' in pictures["spectator"]
                else:
                    assert len(set(pictures.values())) == 1
                    root = ET.fromstring(pictures["spectator"])
                    tracks = [e for e in root.iter() if e.get("class") == "track"]
                    assert len(tracks) == 2 and {e.get("data-seat") for e in tracks} == {"0"}
                    trains = [e.get("data-loads") for e in root.iter() if e.get("class") == "train"]
                    assert trains == ["", "Coal"]

    asyncio.run(run())


def _supply_marks(svg: str) -> list[tuple[str | None, str | None]]:
    return sorted((e.get("data-load"), e.get("data-city")) for e in classes(svg, "supply"))


def test_an_empire_builder_picture_marks_a_loads_supply_cities(server: ServerProcess) -> None:
    """``?load=Coal`` on a board picture rings the cities that supply Coal (the manual shows
    them when a load is clicked), now and in a replay; without it no city is ringed; a name that
    is no load of the game (or a load asked of a game without loads) is a 422 problem."""

    async def run() -> None:
        async with server.async_client() as client:
            r = await client.post(
                "/v1/games",
                json={"game": "empire-builder", "seats": 2, "players": ["a", "b"],
                      "position": POSITIONS["empire-builder"]},
            )
            assert r.status_code == 201, r.text
            base = f"/v1/games/{r.json()['id']}"
            plain = await client.get(base + "/board.svg")
            assert plain.status_code == 200 and _supply_marks(plain.text) == []
            version = (await client.get(base)).json()["version"]
            for load in ("Coal", "Wine"):
                expected = sorted((load, city) for city in LOADS[load].supply)
                assert expected
                for path in ("/board.svg", f"/replay/{version}/board.svg"):
                    marked = await client.get(base + path, params={"load": load})
                    assert marked.status_code == 200, marked.text
                    assert _supply_marks(marked.text) == expected, (path, load)
            for bad in ("Kryptonite", "coal", "", "Coal\u00a0", "x" * 5000):
                refused = await client.get(base + "/board.svg", params={"load": bad})
                assert_problem(refused, 422, "picture.unknown_load")
            r = await client.post("/v1/games", json={"game": "jolly-cargo", "seats": 2})
            other = f"/v1/games/{r.json()['id']}/board.svg"
            assert_problem(await client.get(other, params={"load": "Coal"}), 422,
                           "picture.unknown_load")
            schema = (await client.get("/schema/openapi.json")).json()
            params = schema["paths"]["/v1/games/{game_id}/board.svg"]["get"]["parameters"]
            assert any(p["name"] == "load" and p["in"] == "query" for p in params)

    asyncio.run(run())
