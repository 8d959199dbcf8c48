"""Attacks on players and their keys (issue 39) kept as tests (review3940), against a real
server: a ``read`` key writes nothing anywhere; a revoked key reads and writes nothing
anywhere; another player's key reads no seat of a game its player is not in; "my games" lists
only the player's own games and takes no forged cursor as a way to a 500; no key text or hash
is in a served byte or the server's log."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from .apihelp import assert_problem, auth
from .serverproc import ServerProcess
from .test_players_http import GAME, _game, _join, _key, _player

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]


def _clocked(client: httpx.Client, key: str, other: str) -> tuple[str, dict[str, Any]]:
    created = _game(client, key, clock={"kind": "turn", "seconds": 3600})
    _join(client, created, other)
    return created["id"], created


def _writes(gid: str, version: int) -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"/v1/games/{gid}/commands", {"command": {"type": "resign"}, "expected_version": version}),
        (f"/v1/games/{gid}/commands", {"command": {"type": "abort"}, "expected_version": version}),
        (f"/v1/games/{gid}/commands", {"command": {"type": "resign"}}),
        (f"/v1/games/{gid}/messages", {"to": "all", "text": "hi"}),
        (f"/v1/games/{gid}/presence", {"away": True}),
        ("/v1/games", {"game": GAME, "seats": 2}),
        ("/v1/me/keys", {"scopes": ["read"]}),
    ]


def test_a_read_key_writes_nothing_anywhere(server: ServerProcess) -> None:
    with server.client() as client:
        ann, bob = _player(client, "Ann"), _player(client, "Bob")
        gid, _ = _clocked(client, ann["key"], bob["key"])
        reader = _key(client, ann["key"], ["read"])["key"]
        version = client.get(f"/v1/games/{gid}", headers=auth(ann["key"])).json()["version"]
        for path, body in _writes(gid, version):
            r = client.post(path, json=body, headers=auth(reader))
            assert_problem(r, 403, "player.scope_missing")
        open_game = _game(client, bob["key"])
        r = client.post(
            f"/v1/games/{open_game['id']}/join",
            json={"invite_code": open_game["invite_code"]},
            headers=auth(reader),
        )
        assert_problem(r, 403, "player.scope_missing")
        assert client.get(f"/v1/games/{gid}", headers=auth(ann["key"])).json()["version"] == version
        # a play key without ``keys`` makes no key and revokes none
        player = _key(client, ann["key"], ["read", "play"])
        r = client.post("/v1/me/keys", json={"scopes": ["read"]}, headers=auth(player["key"]))
        assert_problem(r, 403, "player.scope_missing")
        r = client.delete(f"/v1/me/keys/{player['id']}", headers=auth(player["key"]))
        assert_problem(r, 403, "player.scope_missing")
        # a key asks for no scope beyond its own
        keys_only = _key(client, ann["key"], ["keys"])
        r = client.post("/v1/me/keys", json={"scopes": ["play"]}, headers=auth(keys_only["key"]))
        assert_problem(r, 403, "player.scope_missing")
        r = client.get(f"/v1/games/{gid}", headers=auth(keys_only["key"]))
        assert_problem(r, 403, "player.scope_missing")


def test_a_revoked_key_works_nowhere(server: ServerProcess) -> None:
    with server.client() as client:
        ann, bob = _player(client, "Ann"), _player(client, "Bob")
        gid, _ = _clocked(client, ann["key"], bob["key"])
        spare = _key(client, ann["key"], ["read", "play", "keys"])
        # used once everywhere first (anything cached is cached now)
        reads = [
            f"/v1/games/{gid}",
            f"/v1/games/{gid}/legal",
            f"/v1/games/{gid}/events",
            f"/v1/games/{gid}/replay",
            f"/v1/games/{gid}/export",
            f"/v1/games/{gid}/board.svg",
            f"/v1/games/{gid}/replay/1/board.svg",
            f"/v1/games/{gid}/replay/1",
            f"/v1/games/{gid}/audit",
            "/v1/me/games",
            "/v1/me/keys",
        ]
        for path in reads:
            r = client.get(path, headers=auth(spare["key"]))
            assert r.status_code == 200, (path, r.status_code, r.text[:300])
        r = client.delete(f"/v1/me/keys/{spare['id']}", headers=auth(ann["key"]))
        assert r.status_code == 200 and r.json()["revoked"] is True
        for path in [*reads, f"/v1/games/{gid}/stream"]:
            r = client.get(path, headers=auth(spare["key"]))
            if path.endswith("/audit"):  # reads no seat: the key is not read there at all
                continue
            assert_problem(r, 401, "player.key_revoked")
        # the board picture asked for by Accept on the game's path
        r = client.get(
            f"/v1/games/{gid}", headers={**auth(spare["key"]), "Accept": "image/svg+xml"}
        )
        assert_problem(r, 401, "player.key_revoked")
        version = client.get(f"/v1/games/{gid}", headers=auth(ann["key"])).json()["version"]
        for path, body in _writes(gid, version):
            r = client.post(path, json=body, headers=auth(spare["key"]))
            assert_problem(r, 401, "player.key_revoked")
        r = client.delete(f"/v1/me/keys/{spare['id']}", headers=auth(spare["key"]))
        assert_problem(r, 401, "player.key_revoked")
        # the revoked key cannot revoke the live one; the live one still works
        assert client.get(f"/v1/games/{gid}", headers=auth(ann["key"])).status_code == 200


def test_my_games_are_the_players_own_and_a_forged_cursor_is_refused(
    server: ServerProcess,
) -> None:
    with server.client() as client:
        ann, bob, eve = _player(client, "Ann"), _player(client, "Bob"), _player(client, "Eve")
        theirs, _ = _clocked(client, ann["key"], bob["key"])
        mine = _game(client, eve["key"])["id"]
        listed = client.get("/v1/me/games", headers=auth(eve["key"])).json()
        assert [g["id"] for g in listed["games"]] == [mine]
        assert theirs not in client.get("/v1/me/games", headers=auth(eve["key"])).text
        forged = [
            "", "~", "~~", "0~~", "2~x~y", "0~not a time~" + theirs, "1~2026-01-01T00:00:00Z~x",
            "1~2026-01-01T00:00:00Z~" + "f" * 5000, "0~" + "9" * 400 + "~" + theirs,
            "1~2026-13-01T00:00:00Z~" + theirs, "0~2026-01-01T00:00:00+25:00~" + theirs,
            "１~2026-01-01T00:00:00Z~" + theirs, "0~2026-01-01T00:00:00Z~{" + theirs + "}x",
        ]  # fmt: skip
        for cursor in forged:
            r = client.get("/v1/me/games", params={"cursor": cursor}, headers=auth(eve["key"]))
            assert r.status_code in (200, 400), (cursor[:40], r.status_code, r.text[:300])
            if r.status_code == 200:
                assert theirs not in r.text
            else:
                assert_problem(r, 400)
        # a cursor well formed but made up reads the player's own rows only
        for cursor in ("0~0001-01-01T00:00:00Z~" + "0" * 32, "0~~" + theirs):
            r = client.get("/v1/me/games", params={"cursor": cursor}, headers=auth(eve["key"]))
            assert r.status_code in (200, 400), r.text
            assert theirs not in r.text
        for status in ("open", "active", "finished", "x", ""):
            r = client.get("/v1/me/games", params={"status": status}, headers=auth(eve["key"]))
            assert r.status_code in (200, 400) and theirs not in r.text


@pytest.fixture
def logging_server(migrated_database: str, redis_url: str) -> Iterator[ServerProcess]:
    """A server of its own in a process, writing its access log and info lines to its file."""
    proc = ServerProcess(
        migrated_database, redis_url, MANIFEST_ACCESS_LOG="1", MANIFEST_LOG_LEVEL="info"
    )
    proc.start()
    try:
        yield proc
    finally:
        proc.close()


def test_no_key_text_or_hash_in_a_served_byte_or_the_log(logging_server: ServerProcess) -> None:
    server = logging_server
    with server.client() as client:
        ann, bob = _player(client, "Ann"), _player(client, "Bob")
        gid, _ = _clocked(client, ann["key"], bob["key"])
        extra = _key(client, ann["key"], ["read"])
        secrets = [ann["key"], bob["key"], extra["key"]]
        served = [
            client.get(p, headers=auth(ann["key"])).content
            for p in (
                f"/v1/games/{gid}", f"/v1/games/{gid}/events", f"/v1/games/{gid}/export",
                f"/v1/games/{gid}/replay", "/v1/me/games", "/v1/me/keys", f"/v1/games/{gid}/audit",
            )
        ]  # fmt: skip
        served.append(client.get(f"/v1/games/{gid}/export").content)
        # a refusal with a revoked key, a wrong-scope key, a key of no player
        client.delete(f"/v1/me/keys/{extra['id']}", headers=auth(ann["key"]))
        served.append(client.get(f"/v1/games/{gid}", headers=auth(extra["key"])).content)
        served.append(client.get("/v1/me/keys", headers=auth("mfp_" + "x" * 43)).content)
        server.stop()  # its log written out
        log = server.log_path.read_bytes()
        assert b"/v1/me/keys" in log  # the access log was written (else the check is empty)
        for secret in secrets:
            digest = hashlib.sha256(secret.encode()).digest()
            for text in (secret.encode(), secret[4:].encode(), digest.hex().encode(), digest):
                for body in served:
                    assert text not in body
                assert text not in log


def test_one_player_joining_one_game_many_times_at_once_takes_one_seat(
    server: ServerProcess,
) -> None:
    import asyncio

    async def run() -> None:
        with server.client() as client:
            ann, bob = _player(client, "Ann"), _player(client, "Bob")
            created = _game(client, ann["key"], seats=4)
        async with server.async_client() as client:
            url = f"/v1/games/{created['id']}/join"
            answers = await asyncio.gather(
                *(
                    client.post(
                        url, json={"invite_code": created["invite_code"]}, headers=auth(key)
                    )
                    for key in [bob["key"]] * 6 + [ann["key"]] * 2
                )
            )
            codes = sorted(r.status_code for r in answers)
            assert codes == [200] + [409] * 7, [r.text[:200] for r in answers]
            for r in answers:
                if r.status_code == 409:
                    assert r.json()["code"] == "lobby.already_seated", r.text
            mine = (await client.get("/v1/me/games", headers=auth(bob["key"]))).json()
            assert [g["id"] for g in mine["games"]] == [created["id"]]

    asyncio.run(run())
