"""Invitations and removing a player (platform features every game gets): only invited names
join (403 ``lobby.not_invited``); the host removes a joined player before the start, the seat
reopens and the removed player's token stops working; the stream stays audit-clean."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from .apihelp import assert_problem, auth
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]


def test_invited_names_join_and_the_host_removes_a_player(server: ServerProcess) -> None:
    asyncio.run(_invitations(server))


async def _invitations(server: ServerProcess) -> None:
    async with server.async_client() as client:
        for bad in ([], ["ann", "ann"], ["ann", ""], "ann"):
            r = await client.post("/v1/games", json={"game": "empire-builder", "seats": 3,
                                                     "invited": bad})
            assert r.status_code in (400, 422), r.text
        assert_problem(await client.post(
            "/v1/games", json={"game": "empire-builder", "seats": 2, "invited": ["ann", "bob"],
                               "players": ["ann", "eve"]}), 422, "lobby.bad_players")
        r = await client.post("/v1/games", json={
            "game": "empire-builder", "seats": 3, "invited": ["ann", "bob", "cy", "dee"],
            "options": {"money_to_win": 120, "majors_to_win": 3, "borrowing": False}})
        assert r.status_code == 201, r.text
        created: dict[str, Any] = r.json()
        gid, code, host = created["id"], created["invite_code"], created["host_token"]
        base = f"/v1/games/{gid}"

        async def join(name: str, seat: int | None = None) -> Any:
            body: dict[str, Any] = {"name": name, "invite_code": code}
            if seat is not None:
                body["seat"] = seat
            return await client.post(base + "/join", json=body)

        assert_problem(await join("eve"), 403, "lobby.not_invited")
        ann = (await join("ann")).json()
        assert_problem(await join("ann"), 409, "lobby.already_seated")
        bob = (await join("bob")).json()
        doc = (await client.get(base, headers=auth(bob["token"]))).json()
        assert [s["name"] for s in doc["seats"]] == ["ann", "bob", None]
        listed = [g for g in (await client.get("/v1/games")).json()["games"] if g["id"] == gid]
        assert listed[0]["options"]["money_to_win"] == 120  # the terms in the lobby listing
        # removing: host only, a joined seat of an open game
        assert_problem(await client.delete(base + "/seats/1"), 401)
        assert_problem(await client.delete(base + "/seats/1", headers=auth(ann["token"])), 403,
                       "auth.not_host")
        assert_problem(await client.delete(base + "/seats/2", headers=auth(host)), 409,
                       "lobby.seat_empty")
        assert_problem(await client.delete(base + "/seats/7", headers=auth(host)), 422,
                       "lobby.no_such_seat")
        version = (await client.get(base)).json()["version"]
        r = await client.delete(base + "/seats/1", headers=auth(host))
        assert r.status_code == 200, r.text
        assert r.json()["version"] == version + 1
        # bob's token stops working; his seat is open again
        assert_problem(await client.get(base, headers=auth(bob["token"])), 401,
                       "auth.invalid_token")
        assert_problem(await client.post(base + "/messages", headers=auth(bob["token"]),
                                         json={"to": "all", "text": "hi"}), 401)
        doc = (await client.get(base)).json()
        assert [s["name"] for s in doc["seats"]] == ["ann", None, None]
        cy = (await join("cy", seat=1)).json()
        assert cy["seat"] == 1
        bob2 = await join("bob")  # bob may come back to an open seat
        assert bob2.status_code == 200, bob2.text
        doc = (await client.get(base, headers=auth(cy["token"]))).json()
        assert doc["status"] == "active"
        assert doc["view"]["options"] == {"money_to_win": 120, "majors_to_win": 3,
                                          "turn_limit": 0, "borrowing": False}
        assert_problem(await client.delete(base + "/seats/0", headers=auth(host)), 409,
                       "lobby.started")
        # the terms say no borrowing: 422
        seat = doc["to_act"][0]
        token = {0: ann["token"], 1: cy["token"], 2: bob2.json()["token"]}[seat]
        assert_problem(await client.post(base + "/commands", headers=auth(token),
                                         json={"command": {"type": "borrow", "amount": 5}}),
                       422, "rule.no_borrowing")
        audit = (await client.get(base + "/audit")).json()
        assert audit["ok"], audit
        # without an invitation list, anyone with the code joins (as before)
        r = await client.post("/v1/games", json={"game": "empire-builder", "seats": 2})
        open_game = r.json()
        r = await client.post(f"/v1/games/{open_game['id']}/join",
                              json={"name": "eve", "invite_code": open_game["invite_code"]})
        assert r.status_code == 200, r.text


def test_a_removed_token_stops_working_on_every_worker(server_two_workers: ServerProcess) -> None:
    asyncio.run(_two_workers(server_two_workers))


async def _two_workers(server: ServerProcess) -> None:
    async with server.async_client() as client:
        r = await client.post("/v1/games", json={"game": "empire-builder", "seats": 2})
        created = r.json()
        base = f"/v1/games/{created['id']}"
        joined = (await client.post(base + "/join", json={
            "name": "bob", "invite_code": created["invite_code"]})).json()
    # many fresh connections, so both workers see (and could cache) the token
    for _ in range(12):
        async with server.async_client() as fresh:
            r = await fresh.get(base, headers=auth(joined["token"]))
            assert r.status_code == 200, r.text
    async with server.async_client() as client:
        r = await client.delete(base + f"/seats/{joined['seat']}",
                                headers=auth(created["host_token"]))
        assert r.status_code == 200, r.text
    for _ in range(12):
        async with server.async_client() as fresh:
            assert_problem(await fresh.get(base, headers=auth(joined["token"])), 401,
                           "auth.invalid_token")


def test_a_removed_players_token_stops_working_at_once(server: ServerProcess) -> None:
    """``DELETE /v1/games/{id}/seats/{n}``: the removed player's token must stop working,
    also in the process that issued it (which had it cached since the join)."""
    with server.client() as client:
        r = client.post("/v1/games", json={"game": "jolly-cargo", "seats": 3})
        assert r.status_code == 201, r.text
        created = r.json()
        base = f"/v1/games/{created['id']}"
        host, code = created["host_token"], created["invite_code"]
        r = client.post(base + "/join", json={"name": "bob", "invite_code": code})
        assert r.status_code == 200, r.text
        bob = r.json()
        r = client.delete(f"{base}/seats/{bob['seat']}", headers=auth(host))
        assert r.status_code == 200, r.text
        r = client.post(
            base + "/messages", headers=auth(bob["token"]), json={"text": "still here", "to": "all"}
        )
        assert r.status_code == 401 and r.json()["code"] == "auth.invalid_token", r.text
        r = client.get(base, headers=auth(bob["token"]))
        assert r.status_code == 401, r.text
