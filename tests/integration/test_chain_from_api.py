"""The hash chain checked as a third party would (issue 35): from the API's answers alone —
``GET /v1/games/{id}/events`` paged, and ``GET /v1/games/{id}/export`` — with a small
implementation of the recipe written here from docs/receipts-and-audit.md ("Check the chain
yourself"), importing none of the service's chain code, so the doc and the code are checked
against each other. Every hash of a game of each of the four games, as a spectator and as a
seat, live and (Curious Cargo, played to its end) finished; with table talk, public and
private, among the events.

Before issue 35 ``/events`` left out the command id the hash covers (5 of 95 hashes
recomputed), and the doc did not name the export's fields."""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import random
import re
from typing import Any

import httpx
import pytest

from .apihelp import auth
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]

#: (game, seats, options, moves): a game of each kind; None moves: played to its end
GAMES = [
    ("jolly-cargo", 2, {"crate_placement": "random"}, 30),
    ("cargo-empire", 3, None, 30),
    ("curious-cargo", 2, None, None),
    ("empire-builder", 3, {"turn_limit": 5}, 30),
]
MOST_MOVES = 3000


# --- the recipe, from docs/receipts-and-audit.md ---------------------------------------------
def canonical_json(value: Any) -> bytes:
    """JSON, keys sorted at every level, no whitespace, UTF-8 (non-ASCII as is)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _at(doc: Any, path: list[Any]) -> Any:
    for step in path:
        doc = doc[step]
    return doc


def public_form(data: Any, openings: list[dict[str, Any]]) -> Any:
    """``data`` with each opened value put back as its commitment."""
    out = copy.deepcopy(data)
    for opening in openings:
        path = opening["path"]
        value = _at(out, path)
        commitment = hashlib.sha256(bytes.fromhex(opening["salt"]) + canonical_json(value))
        sealed = {"commitment": commitment.hexdigest()}
        if path:
            _at(out, path[:-1])[path[-1]] = sealed
        else:
            out = sealed
    return out


def link(prev: bytes, game: str, event: dict[str, Any], data: Any) -> bytes:
    message = {
        "at": event["at"],
        "command": event["command"],
        "data": data,
        "game": game,
        "seat": event["seat"],
        "type": event["type"],
        "version": event["version"],
    }
    return hashlib.sha256(prev + canonical_json(message)).digest()


def six_digits(at: str) -> str:
    """An RFC 3339 UTC time with exactly 6 fractional digits and ``Z`` (the export's
    ``recorded_at`` leaves out a zero fraction)."""
    match = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?(Z|\+00:00)", at)
    assert match, at
    return f"{match[1]}.{(match[2] or '').ljust(6, '0')}Z"


def check_events(game: str, events: list[dict[str, Any]]) -> bytes:
    """Every link of ``GET /events``' documents, from 32 zero bytes; returns the last hash."""
    prev = bytes(32)
    for n, event in enumerate(events, start=1):
        assert event["version"] == n
        assert event["prev_hash"] == prev.hex(), n
        digest = link(prev, game, event, public_form(event["data"], event["openings"]))
        assert digest.hex() == event["hash"], (n, event["type"])
        prev = digest
    return prev


def check_export(doc: dict[str, Any]) -> bytes:
    """Every link of an export's ``events[]``: ``game_id``, ``command_id``, ``recorded_at``,
    ``public`` (else ``data``), the openings of the top-level ``openings[]`` by ``version``."""
    openings: dict[int, list[dict[str, Any]]] = {}
    for opening in doc["openings"]:
        openings.setdefault(opening["version"], []).append(opening)
    prev = bytes(32)
    for n, row in enumerate(doc["events"], start=1):
        assert row["version"] == n and row["prev_hash"] == prev.hex()
        event = {
            "at": six_digits(row["recorded_at"]),
            "command": row["command_id"],
            "seat": row["seat"],
            "type": row["type"],
            "version": row["version"],
        }
        data = row["public"] if row["public"] is not None else row["data"]
        if row["public"] is not None:  # each opening reopens the public form's commitment
            assert public_form(row["data"], openings.get(n, [])) == row["public"], n
        digest = link(prev, row["game_id"], event, data)
        assert digest.hex() == row["hash"], (n, row["type"])
        prev = digest
    return prev


# --- the game -------------------------------------------------------------------------------
async def _events(client: httpx.AsyncClient, base: str, token: str | None) -> list[Any]:
    events: list[Any] = []
    after = 0
    while True:  # small pages: the chain runs across them
        r = await client.get(f"{base}/events?after={after}&limit=7", headers=auth(token))
        assert r.status_code == 200, r.text
        page = r.json()
        events += page["events"]
        if page["next"] is None:
            return events
        after = page["next"]


async def _play(
    server: ServerProcess, game: str, seats: int, options: Any, moves: int | None
) -> None:
    rng = random.Random(f"chain/{game}")
    async with server.async_client() as client:
        body: dict[str, Any] = {"game": game, "seats": seats, "players": ["a", "b", "c"][:seats]}
        if options is not None:
            body["options"] = options
        r = await client.post("/v1/games", json=body)
        assert r.status_code == 201, r.text
        created = r.json()
        game_id, tokens = created["id"], [s["token"] for s in created["seats"]]
        base = f"/v1/games/{game_id}"
        receipts = []
        for to, text in (("all", "good luck"), ([1], "a word for seat 1 — alone")):
            r = await client.post(
                base + "/messages", json={"to": to, "text": text}, headers=auth(tokens[0])
            )
            assert r.status_code == 200, r.text
            receipts.append(r.json()["receipt"])
        played = 0
        while moves is None or played < moves:
            doc = (await client.get(base)).json()
            if doc["status"] != "active":
                break
            seat = doc["to_act"][0]
            legal = (await client.get(base + "/legal", headers=auth(tokens[seat]))).json()
            r = await client.post(
                base + "/commands",
                json={
                    "command": rng.choice(legal["commands"]),
                    "expected_version": legal["version"],
                },
                headers=auth(tokens[seat]),
            )
            assert r.status_code == 200, r.text
            answer = r.json()
            receipts.append(answer["receipt"])
            assert all(e["command"] for e in answer["events"])  # a command's events name it
            played += 1
            assert played < MOST_MOVES, "the game does not end"
        doc = (await client.get(base)).json()
        assert (doc["status"] == "finished") == (moves is None), doc["status"]
        head = receipts[-1]["head"]  # the last command's receipt: the game's head
        assert receipts[-1]["version"] == doc["version"]

        for token in (None, tokens[0], tokens[1]):  # a spectator, the sender, the addressee
            events = await _events(client, base, token)
            assert len(events) == doc["version"]
            assert check_events(game_id, events).hex() == head
            opened = [e for e in events if e["openings"]]
            if token is not None:  # the private line is in the clear for its sender, addressee
                assert any(e["data"].get("text") == "a word for seat 1 — alone" for e in opened)
            elif moves is None:  # the game is over: every hidden value opened for anyone
                assert opened
        # every receipt's head is the recomputed hash at its version
        hashes = {e["version"]: e["hash"] for e in await _events(client, base, None)}
        for receipt in receipts:
            assert receipt["game"] == game_id and hashes[receipt["version"]] == receipt["head"]

        r = await client.get(base + "/export")
        assert r.status_code == 200, r.text
        exported = r.json()
        assert check_export(exported).hex() == exported["game"]["head"] == head


@pytest.mark.parametrize(("game", "seats", "options", "moves"), GAMES, ids=[g[0] for g in GAMES])
def test_every_hash_recomputed_from_the_api_alone(
    server: ServerProcess, game: str, seats: int, options: Any, moves: int | None
) -> None:
    asyncio.run(_play(server, game, seats, options, moves))


def test_the_openapi_document_names_the_command_of_an_event(server: ServerProcess) -> None:
    """The field is in the schema clients are generated from, not only sent."""
    with server.client() as client:
        schema = client.get("/schema/openapi.json").json()
    event = schema["components"]["schemas"]["EventDocument"]
    assert {"at", "command", "data", "openings", "seat", "type", "version"} <= set(
        event["properties"]
    )


def test_the_chain_of_a_clocked_game_with_its_lobby_recomputed(
    fresh_database: str, redis_url: str
) -> None:
    """The event kinds the games above have none of: a lobby's joins and a removal
    (``lobby.joined``, ``lobby.left``), and the clock's (``clock.set``, ``clock.expired``,
    ``clock.sat_in``, ``clock.bot`` and the bot's move, ``clock.returned``, by a fast clock
    that expires and a presence leave and return) — every hash recomputed from ``/events``
    as a spectator and as a seat, and from the export."""
    server = ServerProcess(fresh_database, redis_url, MANIFEST_CLOCK_TICK="0.05").start()
    try:
        asyncio.run(_clocked(server))
    finally:
        server.close()


async def _clocked(server: ServerProcess) -> None:
    async with server.async_client() as client:
        clock = {"kind": "turn", "seconds": 1, "sit_in_after": 1}
        r = await client.post(
            "/v1/games", json={"game": "cargo-empire", "seats": 2, "clock": clock}
        )
        assert r.status_code == 201, r.text
        gid, host, code = r.json()["id"], r.json()["host_token"], r.json()["invite_code"]
        base = f"/v1/games/{gid}"

        async def join(name: str, seat: int) -> str:
            r = await client.post(
                base + "/join", json={"name": name, "invite_code": code, "seat": seat}
            )
            assert r.status_code == 200, r.text
            return str(r.json()["token"])

        await join("gone", 0)
        assert (await client.delete(base + "/seats/0", headers=auth(host))).status_code == 200
        tokens = [await join("ann", 0), await join("bob", 1)]
        for away in (True, False):  # the bot sits in for seat 0 at once, and it is back
            r = await client.post(base + "/presence", json={"away": away}, headers=auth(tokens[0]))
            assert r.status_code == 200, r.text
        types: list[str] = []
        deadline = asyncio.get_running_loop().time() + 60
        while "clock.bot" not in types:  # nobody plays: an expiry, the bot sits in and moves
            assert asyncio.get_running_loop().time() < deadline, types
            await asyncio.sleep(0.1)
            types = [e["type"] for e in await _events(client, base, None)]
        events = await _events(client, base, None)
        kinds = {e["type"] for e in events}
        assert {"lobby.joined", "lobby.left", "clock.set", "clock.expired"} <= kinds, kinds
        assert {"clock.sat_in", "clock.bot", "clock.returned"} <= kinds, kinds
        for token in (None, tokens[0]):
            seen = await _events(client, base, token)
            check_events(gid, seen[: len(events)])
        r = await client.get(base + "/export")
        assert r.status_code == 200, r.text
        exported = r.json()
        assert check_export(exported).hex() == exported["game"]["head"]
