"""What a token answers where (issue 35): the game's host token on a seat-only endpoint is a
valid token that is no seat of this game — 403 ``auth.not_seat``, as docs/api.md promises, not
401 "not a token"; an ``Authorization`` header that is not ``Bearer <token>`` is 401
``auth.malformed``, not a missing token. Every seat-only operation of the OpenAPI document is
tried, so a new one cannot answer otherwise."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from service.http import openapi

from .apihelp import assert_problem, auth
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]

#: the operations that take the host token (the others with a required token take a seat's)
HOST_ONLY = {("post", "/v1/games/{game_id}/start"), ("delete", "/v1/games/{game_id}/seats/{seat}")}


def _seat_only() -> list[tuple[str, str]]:
    ops = {
        op
        for op, (*_, security, _x) in openapi.OPERATIONS.items()
        if security == "required" and "{game_id}" in op[1]  # /v1/me/*: a player key's
    }
    return sorted(ops - HOST_ONLY)


def _bodies(client: httpx.Client, base: str, seat_token: str) -> dict[str, Any]:
    """A body each seat-only operation would accept from a seat (so only the token decides)."""
    legal = client.get(base + "/legal", headers=auth(seat_token)).json()
    return {
        "/commands": {"command": legal["commands"][0], "expected_version": legal["version"]},
        "/messages": {"to": "all", "text": "hello"},
        "/presence": {"away": True},
    }


def _call(
    client: httpx.Client, method: str, path: str, gid: str, body: Any, headers: dict[str, str]
) -> httpx.Response:
    url = path.replace("{game_id}", gid)
    if method == "get":
        return client.get(url, headers=headers)
    return client.request(method.upper(), url, json=body, headers=headers)


def _created(client: httpx.Client) -> dict[str, Any]:
    r = client.post(
        "/v1/games", json={"game": "cargo-empire", "seats": 2, "players": ["ann", "bob"]}
    )
    assert r.status_code == 201, r.text
    created: dict[str, Any] = r.json()
    return created


def test_the_host_token_on_every_seat_only_endpoint_is_403_not_a_seat(
    server: ServerProcess,
) -> None:
    """Before: 401 ``auth.invalid_token`` ("the token is not a seat token") — the host token is
    valid, just no seat. Another game's host token, or a made-up ``mfh_…``, is still unknown
    here: 401 ``auth.invalid_token``; a seat token of this game still passes."""
    seat_only = _seat_only()
    assert len(seat_only) >= 4, seat_only  # /legal, /commands, /messages, /presence
    with server.client() as client:
        created, other = _created(client), _created(client)
        gid = created["id"]
        bodies = _bodies(client, f"/v1/games/{gid}", created["seats"][0]["token"])
        for method, path in seat_only:
            body = next((b for end, b in bodies.items() if path.endswith(end)), None)
            r = _call(client, method, path, gid, body, auth(created["host_token"]))
            assert_problem(r, 403, "auth.not_seat")
            for token in (other["host_token"], "mfh_" + "x" * 43):
                r = _call(client, method, path, gid, body, auth(token))
                assert_problem(r, 401, "auth.invalid_token")
        r = client.get(f"/v1/games/{gid}/legal", headers=auth(created["seats"][0]["token"]))
        assert r.status_code == 200, r.text


def test_an_authorization_header_without_bearer_is_malformed_not_missing(
    server: ServerProcess,
) -> None:
    """``Authorization: mfs_…`` (no scheme), ``Basic …``, or ``Bearer`` with nothing after it,
    is 401 ``auth.malformed`` wherever a token is read — required or optional — never a
    missing token (which told the client to send what it had sent) nor, where a token is
    optional, a silent spectator's answer."""
    with server.client() as client:
        created = _created(client)
        gid, seat = created["id"], created["seats"][0]["token"]
        bodies = _bodies(client, f"/v1/games/{gid}", seat)
        tokened = [op for op, (*_, security, _x) in openapi.OPERATIONS.items() if security]
        for header in (seat, f"Basic {seat}", "Bearer", f"Token {seat}"):
            for method, path in sorted(tokened):
                path = path.replace("{seat}", "0").replace("{n}", "1")
                path = path.replace("{key_id}", "00000000-0000-4000-8000-000000000000")
                body = next((b for end, b in bodies.items() if path.endswith(end)), None)
                if path.endswith("/queries"):
                    body = {"query": {"type": "nothing"}}
                if path == "/v1/me/keys":  # a player's (issue 39)
                    body = {"scopes": ["read"]}
                r = _call(client, method, path, gid, body, {"Authorization": header})
                assert_problem(r, 401, "auth.malformed")
        assert_problem(client.get(f"/v1/games/{gid}/legal"), 401, "auth.missing_token")
