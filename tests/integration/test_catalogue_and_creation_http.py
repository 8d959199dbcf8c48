"""What a new user meets first (issue 11): what the catalogue, the create answer and the host
token give, and the seat each set-up event is stored with."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from domain.registry import all_games
from ledger.audit import audit
from ledger.evidence import Evidence

from .apihelp import auth, pg
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]


def test_rules_say_whether_each_game_is_playable(server: ServerProcess) -> None:
    with server.client() as client:
        rules = client.get("/v1/rules").json()
    assert {r["game"]: r["playable"] for r in rules} == {
        "jolly-cargo": True,
        "cargo-empire": True,
        "empire-builder": True,
        "curious-cargo": True,
    }
    assert {r["game"] for r in rules} == {g.id for g in all_games()}


def _create(client: httpx.Client, body: dict[str, Any]) -> httpx.Response:
    r = client.post("/v1/games", json=body)
    assert r.status_code == 201, r.text
    return r


def test_create_answer_has_location_to_act_and_view(server: ServerProcess) -> None:
    with server.client() as client:
        for game in all_games():
            seats = game.min_seats
            players = [f"p{i}" for i in range(seats)]
            r = _create(client, {"game": game.id, "seats": seats, "players": players})
            created = r.json()
            assert r.headers["location"] == f"/v1/games/{created['id']}"
            doc = client.get(r.headers["location"]).json()  # the spectator's document
            assert created["status"] == "active" == doc["status"]
            assert created["to_act"] == doc["to_act"] != []
            assert created["view"] == doc["view"] is not None
            assert created["version"] == doc["version"]

        r = _create(client, {"game": "jolly-cargo", "seats": 2})  # an open lobby
        created = r.json()
        assert r.headers["location"] == f"/v1/games/{created['id']}"
        assert (created["status"], created["to_act"], created["view"]) == ("open", [], None)


def test_host_token_reads_its_own_game(server: ServerProcess) -> None:
    with server.client() as client:
        created = _create(client, {"game": "cargo-empire", "seats": 3}).json()
        gid, host = created["id"], created["host_token"]
        doc = client.get(f"/v1/games/{gid}", headers=auth(host))
        assert doc.status_code == 200, doc.text
        lobby = doc.json()
        assert lobby["status"] == "open" and lobby["invite_code"] == created["invite_code"]
        assert lobby["seats"] == [{"seat": i, "name": None} for i in range(3)]

        for name in ("ann", "bob", "cy"):
            joined = client.post(
                f"/v1/games/{gid}/join", json={"invite_code": created["invite_code"], "name": name}
            )
            assert joined.status_code == 200, joined.text
            if name == "ann":
                seats = client.get(f"/v1/games/{gid}", headers=auth(host)).json()["seats"]
                assert seats[0] == {"seat": 0, "name": "ann"} and seats[1]["name"] is None

        # Started: the host sees what a spectator sees (no hidden card), plus the code.
        hosted = client.get(f"/v1/games/{gid}", headers=auth(host)).json()
        spectator = client.get(f"/v1/games/{gid}").json()
        assert hosted.pop("invite_code") == created["invite_code"]
        assert hosted == spectator and "invite_code" not in spectator

        # Another game's host token, and a made-up one, are refused.
        other = _create(client, {"game": "jolly-cargo", "seats": 2}).json()
        r = client.get(f"/v1/games/{gid}", headers=auth(other["host_token"]))
        assert r.status_code == 403 and r.json()["code"] == "auth.not_host"
        r = client.get(f"/v1/games/{gid}", headers=auth("mfh_" + "x" * 40))
        assert r.status_code == 403 and r.json()["code"] == "auth.not_host"
        # The host token is no seat token: it cannot ask for a seat's legal commands.
        r = client.get(f"/v1/games/{gid}/legal", headers=auth(host))
        assert r.status_code == 403 and r.json()["code"] == "auth.not_seat"


async def _stored(server: ServerProcess, game_id: str) -> tuple[list[Any], list[Any], bytes]:
    async with pg(server.pg_dsn) as store:
        events = await store.read(game_id)
        commands = await store.commands(game_id)
        seed = await store.seed(game_id)
    return events, commands, seed


def test_setup_events_carry_the_seat_they_concern(server: ServerProcess) -> None:
    """``lobby.joined`` (players given at creation, or joining) and Cargo Empire's
    ``cities_dealt`` are stored with the seat their data names; events of the set-up that
    concern no seat keep none; the audit of such a game is clean."""
    import asyncio

    with server.client() as client:
        given = _create(
            client, {"game": "cargo-empire", "seats": 3, "players": ["ann", "bob", "cy"]}
        ).json()
        lobby = _create(client, {"game": "cargo-empire", "seats": 2}).json()
        for name in ("dan", "eve"):
            r = client.post(
                f"/v1/games/{lobby['id']}/join",
                json={"invite_code": lobby["invite_code"], "name": name},
            )
            assert r.status_code == 200, r.text
        api = client.get(f"/v1/games/{given['id']}/events?after=0&limit=100").json()["events"]

    for created, seats in ((given, 3), (lobby, 2)):
        events, commands, seed = asyncio.run(_stored(server, created["id"]))
        joined = [e for e in events if e.type == "lobby.joined"]
        dealt = [e for e in events if e.type == "cities_dealt"]
        assert [e.seat for e in joined] == [e.data["seat"] for e in joined] == list(range(seats))
        assert [e.seat for e in dealt] == [e.data["seat"] for e in dealt] == list(range(seats))
        others = [e for e in events if e.type not in ("lobby.joined", "cities_dealt")]
        assert all(e.seat is None for e in others if "seat" not in e.data)
        report = audit(Evidence(created["id"], events, commands, seed, head=events[-1].hash))
        assert report["ok"] is True, report
    # The API's top-level seat is the stored one.
    assert [e["seat"] for e in api if e["type"] == "lobby.joined"] == [0, 1, 2]
    assert [e["seat"] for e in api if e["type"] == "cities_dealt"] == [0, 1, 2]
