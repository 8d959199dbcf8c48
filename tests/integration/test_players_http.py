"""Players and their keys over HTTP (issue 39; docs/api.md, "Players"): a player key shown
once and stored only as its hash; further keys with fewer scopes, listed and revoked; a revoked
key refused at once by another instance; seats bound to players (create, join), the player
acting in its seats with its key; the attacks (a non-seated player's key reading a seat's view,
a ``read``-only key sending a command, another player's key revoked); "my games"."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import uuid
from collections.abc import Iterator
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import httpx
import pytest

from .apihelp import assert_problem, auth
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]

GAME = "cargo-empire"


def _player(client: httpx.Client, name: str) -> dict[str, Any]:
    r = client.post("/v1/players", json={"name": name})
    assert r.status_code == 201, r.text
    body: dict[str, Any] = r.json()
    return body


def _key(client: httpx.Client, key: str, scopes: list[str]) -> dict[str, Any]:
    r = client.post("/v1/me/keys", json={"scopes": scopes}, headers=auth(key))
    assert r.status_code == 201, r.text
    body: dict[str, Any] = r.json()
    return body


def _game(client: httpx.Client, key: str, seats: int = 2, **extra: Any) -> dict[str, Any]:
    r = client.post("/v1/games", json={"game": GAME, "seats": seats, **extra}, headers=auth(key))
    assert r.status_code == 201, r.text
    body: dict[str, Any] = r.json()
    return body


def _join(client: httpx.Client, created: dict[str, Any], key: str) -> dict[str, Any]:
    r = client.post(
        f"/v1/games/{created['id']}/join",
        json={"invite_code": created["invite_code"]},
        headers=auth(key),
    )
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def _act(client: httpx.Client, gid: str, token: str) -> httpx.Response:
    legal = client.get(f"/v1/games/{gid}/legal", headers=auth(token))
    assert legal.status_code == 200, legal.text
    body = legal.json()
    return client.post(
        f"/v1/games/{gid}/commands",
        json={"command": body["commands"][0], "expected_version": body["version"]},
        headers=auth(token),
    )


async def _rows(dsn: str, sql: str, *args: Any) -> list[Any]:
    conn = await asyncpg.connect(dsn)
    try:
        return list(await conn.fetch(sql, *args))
    finally:
        await conn.close()


def test_a_player_key_is_shown_once_and_stored_only_as_its_hash(
    server: ServerProcess,
) -> None:
    with server.client() as client:
        ann = _player(client, "Ann")
        key = ann["key"]
        assert key.startswith("mfp_") and len(key) >= 4 + 43, key  # 256 bits, URL-safe
        assert ann["name"] == "Ann" and ann["scopes"] == ["read", "play", "keys"]
        listed = client.get("/v1/me/keys", headers=auth(key))
        assert listed.status_code == 200, listed.text
        assert key not in listed.text and key[4:] not in listed.text
        assert [k["id"] for k in listed.json()["keys"]] == [ann["key_id"]]
    rows = asyncio.run(
        _rows(
            server.pg_dsn,
            "SELECT k.*::text AS r, k.key_hash FROM player_keys k WHERE id = $1",
            uuid.UUID(ann["key_id"]),
        )
    )
    assert bytes(rows[0]["key_hash"]) == hashlib.sha256(key.encode()).digest()
    assert key[4:] not in rows[0]["r"]


def test_keys_with_fewer_scopes_listed_and_revoked(server: ServerProcess) -> None:
    with server.client() as client:
        ann, bob = _player(client, "Ann"), _player(client, "Bob")
        manager = _key(client, ann["key"], ["read", "keys"])
        assert manager["scopes"] == ["read", "keys"] and manager["key"].startswith("mfp_")
        # a scope not held: a key may only hand out what it holds
        r = client.post("/v1/me/keys", json={"scopes": ["play"]}, headers=auth(manager["key"]))
        assert_problem(r, 403, "player.scope_missing")
        reader = _key(client, manager["key"], ["read"])
        # a read-only key manages no keys
        r = client.post("/v1/me/keys", json={"scopes": ["read"]}, headers=auth(reader["key"]))
        assert_problem(r, 403, "player.scope_missing")
        assert_problem(client.get("/v1/me/keys", headers=auth(reader["key"])), 403)
        for bad in ([], ["root"], ["read", "read"]):
            r = client.post("/v1/me/keys", json={"scopes": bad}, headers=auth(ann["key"]))
            assert_problem(r, 422, "player.bad_scopes")
        listed = client.get("/v1/me/keys", headers=auth(ann["key"])).json()["keys"]
        assert [k["id"] for k in listed] == [ann["key_id"], manager["id"], reader["id"]]
        assert not any(k["revoked"] for k in listed)
        # a key of another player: not Bob's to revoke
        r = client.delete(f"/v1/me/keys/{reader['id']}", headers=auth(bob["key"]))
        assert_problem(r, 403, "player.not_your_key")
        r = client.delete(f"/v1/me/keys/{uuid.uuid4()}", headers=auth(ann["key"]))
        assert_problem(r, 404, "player.no_such_key")
        assert client.get("/v1/me/games", headers=auth(reader["key"])).status_code == 200
        r = client.delete(f"/v1/me/keys/{reader['id']}", headers=auth(manager["key"]))
        assert r.status_code == 200 and r.json()["revoked"] is True, r.text
        r = client.get("/v1/me/games", headers=auth(reader["key"]))
        assert_problem(r, 401, "player.key_revoked")
        listed = client.get("/v1/me/keys", headers=auth(ann["key"])).json()["keys"]
        assert [k["revoked"] for k in listed] == [False, False, True]
        # not a player key at all
        for token in (None, "mfp_" + "x" * 43, "mfs_" + "x" * 43):
            r = client.get("/v1/me/games", headers=auth(token))
            assert_problem(r, 401, "auth.missing_token" if token is None else "auth.invalid_token")


def test_a_revoked_key_is_refused_at_once_by_another_instance(server: ServerProcess) -> None:
    """Two instances on one database: a key used on B (so any cache B had would hold it),
    revoked on A, is refused by B's very next request — reading a game as its seat too."""
    other = ServerProcess(server.pg_dsn, server.redis_url, prefix=server.prefix)
    other.start()
    try:
        with server.client() as a, other.client() as b:
            ann = _player(a, "Ann")
            spare = _key(a, ann["key"], ["read", "play"])
            game = _game(a, ann["key"], seats=1)  # one seat: started at once
            gid = game["id"]
            for _ in range(2):
                assert b.get(f"/v1/games/{gid}", headers=auth(spare["key"])).status_code == 200
                assert b.get("/v1/me/games", headers=auth(spare["key"])).status_code == 200
            r = a.delete(f"/v1/me/keys/{spare['id']}", headers=auth(ann["key"]))
            assert r.status_code == 200, r.text
            assert_problem(
                b.get(f"/v1/games/{gid}", headers=auth(spare["key"])), 401, "player.key_revoked"
            )
            assert_problem(
                b.get("/v1/me/games", headers=auth(spare["key"])), 401, "player.key_revoked"
            )
            r = b.get(f"/v1/games/{gid}/legal", headers=auth(spare["key"]))
            assert_problem(r, 401, "player.key_revoked")
            assert b.get(f"/v1/games/{gid}", headers=auth(ann["key"])).status_code == 200
    finally:
        other.close()


@pytest.fixture
def few_keys(fresh_database: str, redis_url: str) -> Iterator[ServerProcess]:
    proc = ServerProcess(fresh_database, redis_url, MANIFEST_PLAYER_KEYS_MAX="3")
    proc.start()
    try:
        yield proc
    finally:
        proc.close()


@pytest.mark.own_server
def test_live_keys_per_player_are_capped_by_the_setting(few_keys: ServerProcess) -> None:
    with few_keys.client() as client:
        ann = _player(client, "Ann")
        spare = [_key(client, ann["key"], ["read"]) for _ in range(2)]  # 3 live with the first
        r = client.post("/v1/me/keys", json={"scopes": ["read"]}, headers=auth(ann["key"]))
        assert_problem(r, 409, "player.too_many_keys")
        client.delete(f"/v1/me/keys/{spare[0]['id']}", headers=auth(ann["key"]))
        _key(client, ann["key"], ["read"])  # a revoked key frees its place


def test_seats_bound_to_players_act_with_the_key(server: ServerProcess) -> None:
    with server.client() as client:
        ann, bob, eve = _player(client, "Ann"), _player(client, "Bob"), _player(client, "Eve")
        created = _game(client, ann["key"], seat=1)
        gid = created["id"]
        assert created["status"] == "open"
        assert created["seats"][1]["name"] == "Ann" and created["seats"][1]["token"]
        assert created["seats"][0]["token"] is None
        joined = _join(client, created, bob["key"])  # no name: the player's own
        assert (joined["seat"], joined["status"]) == (0, "active")
        doc = client.get(f"/v1/games/{gid}", headers=auth(ann["key"]))
        by_token = client.get(f"/v1/games/{gid}", headers=auth(created["seats"][1]["token"]))
        assert doc.status_code == 200 and doc.content == by_token.content  # seat 1's view
        listed = client.get("/v1/games", params={"status": "active", "limit": 200}).json()
        assert next(g for g in listed["games"] if g["id"] == gid)["players"] == ["Bob", "Ann"]
        to_act = doc.json()["to_act"]
        actor = {1: ann["key"], 0: bob["key"]}[to_act[0]]
        r = _act(client, gid, actor)
        assert r.status_code == 200, r.text
        # attack: the key of a player with no seat here reads no seat's view, sends nothing
        for path in ("", "/legal", "/events"):
            r = client.get(f"/v1/games/{gid}{path}", headers=auth(eve["key"]))
            assert_problem(r, 403, "player.not_seated")
        r = client.post(
            f"/v1/games/{gid}/messages", json={"to": "all", "text": "hi"}, headers=auth(eve["key"])
        )
        assert_problem(r, 403, "player.not_seated")
        # attack: a read-only key of a seated player reads its seat but sends no command
        reader = _key(client, ann["key"], ["read"])
        r = client.get(f"/v1/games/{gid}", headers=auth(reader["key"]))
        assert r.status_code == 200
        assert client.get(f"/v1/games/{gid}/legal", headers=auth(reader["key"])).status_code == 200
        legal = client.get(f"/v1/games/{gid}/legal", headers=auth(reader["key"])).json()
        r = client.post(
            f"/v1/games/{gid}/commands",
            json={"command": {"type": "pass"}, "expected_version": legal["version"]},
            headers=auth(reader["key"]),
        )
        assert_problem(r, 403, "player.scope_missing")
        r = client.post(
            f"/v1/games/{gid}/messages",
            json={"to": "all", "text": "hi"},
            headers=auth(reader["key"]),
        )
        assert_problem(r, 403, "player.scope_missing")
        # seat tokens keep working beside the keys
        r = client.get(f"/v1/games/{gid}/legal", headers=auth(joined["token"]))
        assert r.status_code == 200


def test_joining_with_a_player_key(server: ServerProcess) -> None:
    with server.client() as client:
        ann, bob = _player(client, "Ann"), _player(client, "Bob")
        created = _game(client, ann["key"], seats=3)
        code = created["invite_code"]
        url = f"/v1/games/{created['id']}/join"
        # the creator holds a seat already; a name other than the player's is refused
        r = client.post(url, json={"invite_code": code}, headers=auth(ann["key"]))
        assert_problem(r, 409, "lobby.already_seated")
        r = client.post(url, json={"invite_code": code, "name": "Zed"}, headers=auth(bob["key"]))
        assert_problem(r, 400, "lobby.bad_name")
        r = client.post(url, json={"invite_code": code}, headers=auth(ann["key"] + "x"))
        assert_problem(r, 401, "auth.invalid_token")
        # without a key a name is needed, as before
        assert_problem(client.post(url, json={"invite_code": code}), 400, "lobby.bad_name")
        r = client.post(url, json={"invite_code": code, "name": "Bob"}, headers=auth(bob["key"]))
        assert r.status_code == 200 and r.json()["seat"] == 1, r.text
        r = client.post(url, json={"invite_code": code}, headers=auth(bob["key"]))
        assert_problem(r, 409, "lobby.already_seated")
        anon = client.post(url, json={"invite_code": code, "name": "Cy"})
        assert anon.status_code == 200 and anon.json()["status"] == "active", anon.text
        # creation: a seat out of range, players named beside a key, a seat without a key
        for body, code_ in (
            ({"seats": 2, "seat": 2}, "lobby.no_such_seat"),
            ({"seats": 2, "players": ["a", "b"]}, "lobby.bad_players"),
        ):
            r = client.post("/v1/games", json={"game": GAME, **body}, headers=auth(ann["key"]))
            assert_problem(r, 422, code_)
        r = client.post("/v1/games", json={"game": GAME, "seats": 2, "seat": 1})
        assert_problem(r, 422, "lobby.no_such_seat")
        # an invited list must hold the creator's own name
        r = client.post(
            "/v1/games",
            json={"game": GAME, "seats": 2, "invited": ["Bob"]},
            headers=auth(ann["key"]),
        )
        assert_problem(r, 422, "lobby.bad_players")
        invited = _game(client, ann["key"], invited=["ann", "Bob"])  # alike: case aside
        assert invited["seats"][0]["name"] == "Ann"
        r = client.post(
            f"/v1/games/{invited['id']}/join",
            json={"invite_code": invited["invite_code"], "name": "Cy"},
        )
        assert_problem(r, 403, "lobby.not_invited")
        assert _join(client, invited, bob["key"])["status"] == "active"


def test_my_games_most_urgent_first_with_a_status_filter_and_a_cursor(
    server: ServerProcess,
) -> None:
    with server.client() as client:
        ann, bob = _player(client, "Ann"), _player(client, "Bob")
        open_game = _game(client, ann["key"], seats=2)
        games = []
        for _ in range(3):
            created = _game(client, ann["key"], seats=2)
            _join(client, created, bob["key"])
            games.append(created["id"])
        r = client.get("/v1/me/games", headers=auth(ann["key"]))
        assert r.status_code == 200, r.text
        mine = r.json()["games"]
        assert {g["id"] for g in mine} == {*games, open_game["id"]}
        flags = [g["to_act"] for g in mine]
        assert flags == sorted(flags, reverse=True)  # to act first
        for g in mine:
            doc = client.get(f"/v1/games/{g['id']}", headers=auth(ann["key"])).json()
            assert g["to_act"] == (g["seat"] in doc["to_act"]) and g["version"] == doc["version"]
            assert g["seat"] == 0 and g["last_event"] and g["deadline"] is None
        # Bob: the same games, none open
        r = client.get("/v1/me/games", params={"status": "active"}, headers=auth(bob["key"]))
        bobs = r.json()["games"]
        assert {g["id"] for g in bobs} == set(games) and all(g["seat"] == 1 for g in bobs)
        acting = {g["id"] for g in mine if g["to_act"]}
        assert {g["id"] for g in bobs if g["to_act"]} == set(games) - acting  # two seats
        r = client.get("/v1/me/games", params={"status": "open"}, headers=auth(ann["key"]))
        assert [g["id"] for g in r.json()["games"]] == [open_game["id"]]
        # a cursor walks the same order, a page at a time
        walked, cursor = [], None
        while True:
            params: dict[str, Any] = {"limit": 1} | ({} if cursor is None else {"cursor": cursor})
            page = client.get("/v1/me/games", params=params, headers=auth(ann["key"])).json()
            walked += [g["id"] for g in page["games"]]
            cursor = page["next"]
            if cursor is None:
                break
        assert walked == [g["id"] for g in mine]
        r = client.get("/v1/me/games", params={"cursor": "nope"}, headers=auth(ann["key"]))
        assert_problem(r, 400, "request.bad_cursor")
        r = client.get("/v1/me/games", params={"status": "won"}, headers=auth(ann["key"]))
        assert_problem(r, 400, "request.bad_status")


def test_a_stream_read_with_a_revoked_key_ends_at_the_next_change(server: ServerProcess) -> None:
    """The game stream re-checks its grant after every change (issue 35's mechanism): a
    stream opened with a player key ends, sending nothing more, once the key is revoked; a
    stream of the player's other key goes on and hears the change."""
    asyncio.run(_revoked_stream(server))


async def _revoked_stream(server: ServerProcess) -> None:
    from .test_stream_grants import _rest_of
    from .test_streams import Stream, open_stream

    with server.client() as sync:
        ann, bob = _player(sync, "Ann"), _player(sync, "Bob")
        spare = _key(sync, ann["key"], ["read"])
        created = _game(sync, ann["key"], seats=2)
        gid = created["id"]
        _join(sync, created, bob["key"])
    async with server.async_client() as client, contextlib.AsyncExitStack() as keep:
        revoked = await open_stream(keep, client, gid, spare["key"])
        kept = await open_stream(keep, client, gid, ann["key"])
        assert isinstance(revoked, Stream) and isinstance(kept, Stream)
        r = await client.delete(f"/v1/me/keys/{spare['id']}", headers=auth(ann["key"]))
        assert r.status_code == 200, r.text
        doc = (await client.get(f"/v1/games/{gid}", headers=auth(ann["key"]))).json()
        actor = ann["key"] if 0 in doc["to_act"] else bob["key"]
        legal = (await client.get(f"/v1/games/{gid}/legal", headers=auth(actor))).json()
        r = await client.post(
            f"/v1/games/{gid}/commands",
            json={"command": legal["commands"][0], "expected_version": legal["version"]},
            headers=auth(actor),
        )
        assert r.status_code == 200, r.text
        assert await _rest_of(revoked) == []
        assert (await kept.next())["version"] > legal["version"]
        r = await client.get(f"/v1/games/{gid}/stream", headers=auth(spare["key"]))
        assert_problem(r, 401, "player.key_revoked")


def test_my_games_order_the_soonest_deadline_first_among_games_to_act(
    server: ServerProcess,
) -> None:
    """Three one-seat games the player is to act in: a turn clock of an hour, a
    correspondence clock of 30 days, no clock — listed in that order, each with its deadline."""
    with server.client() as client:
        ann = _player(client, "Ann")
        clocks = [{"kind": "correspondence", "days": 30}, None, {"kind": "turn", "seconds": 3600}]
        ids = [
            _game(client, ann["key"], seats=1, **({} if c is None else {"clock": c}))["id"]
            for c in clocks
        ]
        mine = client.get("/v1/me/games", headers=auth(ann["key"])).json()["games"]
        assert [g["id"] for g in mine] == [ids[2], ids[0], ids[1]]
        assert all(g["to_act"] for g in mine), mine
        assert mine[0]["deadline"] < mine[1]["deadline"] and mine[2]["deadline"] is None
        assert mine[0]["last_event"] == "clock.set", mine[0]


def test_a_player_key_in_a_game_id_no_game_has_is_not_seated(fresh_database: str) -> None:
    """Below the HTTP edge (which refuses a malformed game id first) ``Seats`` still answers a
    player key with a game id that is no UUID as a game it has no seat in, never a crash."""
    from service.application.errors import Forbidden
    from service.application.seats import Seats
    from service.application.tokens import PLAYER_PREFIX, new_token, token_hash
    from service.eventstore.migrate import migrate

    from .apihelp import pg

    async def run() -> None:
        await migrate(fresh_database)
        async with pg(fresh_database) as store:
            key = new_token(PLAYER_PREFIX)
            await store.players.create("Ann", token_hash(key), ["read", "play", "keys"])
            for game_id in ("not-a-uuid", str(uuid.uuid4())):
                with pytest.raises(Forbidden) as refused:
                    await Seats(store).seat_for(game_id, key)
                assert refused.value.code == "player.not_seated"

    asyncio.run(run())
