"""Hostile clients (issue 10): every bad byte, name and number is a 400 problem document with
nothing written and no orphan game; quotas answer 429 with Retry-After per client; game creation
is one transaction. Against the real server process, PostgreSQL and Redis."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
import unicodedata
from typing import Any

import httpx
import pytest

from service.application.bodies import CreateGame

from .apihelp import GAME, RANDOM_CRATES, assert_problem, auth, create_started, pg, tokens_of
from .historyhelp import in_process
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]
JSON_CT = {"content-type": "application/json"}


async def _counts(store: Any) -> tuple[int, int, int, int]:
    pool = store._pool
    return (
        await pool.fetchval("SELECT count(*) FROM games"),
        await pool.fetchval("SELECT count(*) FROM events"),
        await pool.fetchval("SELECT count(*) FROM commands"),
        await pool.fetchval("SELECT count(*) FROM seat_tokens"),
    )


def _deep(n: int) -> bytes:
    """A command body nested ``n`` deep in all (two objects, then arrays)."""
    return b'{"command": {"type": "teleport", "x": ' + b"[" * (n - 2) + b"]" * (n - 2) + b"}}"


def test_bad_bytes_names_and_numbers_are_400_and_write_nothing(server: ServerProcess) -> None:
    asyncio.run(_bad_bytes(server))


async def _bad_bytes(server: ServerProcess) -> None:
    async with pg(server.pg_dsn) as store, server.async_client() as client:
        created = await create_started(client)
        gid, tokens = created["id"], tokens_of(created)
        lobby = (await client.post("/v1/games", json={"game": GAME, "seats": 3})).json()
        join = f"/v1/games/{lobby['id']}/join"
        code = lobby["invite_code"]
        assert (
            await client.post(join, json={"name": "Ann", "invite_code": code})
        ).status_code == 200
        doc = (await client.get(f"/v1/games/{gid}")).json()
        who = doc["to_act"][0]
        me = auth(tokens[who])
        legal = (await client.get(f"/v1/games/{gid}/legal", headers=me)).json()
        command, version = legal["commands"][0], legal["version"]
        commands = f"/v1/games/{gid}/commands"
        messages = f"/v1/games/{gid}/messages"
        before = await _counts(store)
        listed = (await client.get("/v1/games")).json()["games"]

        nul = "a\u0000b"
        cases: list[tuple[str, str, str, bytes, dict[str, Any], int, str]] = [
            # (what, method, url, body, headers, status, code)
            (
                "NUL in a created player's name",
                "POST",
                "/v1/games",
                json.dumps({"game": GAME, "seats": 2, "players": [nul, "b"]}).encode(),
                {},
                400,
                "request.invalid",
            ),
            (
                "NUL in a join name",
                "POST",
                join,
                json.dumps({"name": nul, "invite_code": code}).encode(),
                {},
                400,
                "request.invalid",
            ),
            (
                "NUL in a message",
                "POST",
                messages,
                json.dumps({"to": "all", "text": nul}).encode(),
                me,
                400,
                "request.invalid",
            ),
            (
                "NUL in a command field",
                "POST",
                commands,
                json.dumps({"command": {**command, "square": nul}}).encode(),
                me,
                400,
                "request.invalid",
            ),
            (
                "NUL in a key",
                "POST",
                commands,
                json.dumps({"command": {**command, nul: 1}}).encode(),
                me,
                400,
                "request.invalid",
            ),
            ("NUL in ?game=", "GET", "/v1/games?game=a%00b", b"", {}, 400, "request.invalid"),
            ("non-UTF-8 in ?game=", "GET", "/v1/games?game=%ff", b"", {}, 400, "request.invalid"),
            (
                "lone surrogate",
                "POST",
                messages,
                b'{"to": "all", "text": "x\\ud800y"}',
                me,
                400,
                "request.invalid",
            ),
            (
                "lone low surrogate in a name",
                "POST",
                join,
                b'{"name": "\\udc00", "invite_code": "' + code.encode() + b'"}',
                {},
                400,
                "request.invalid",
            ),
            (
                "non-UTF-8 bytes in a string",
                "POST",
                messages,
                b'{"to": "all", "text": "caf\xe9"}',
                me,
                400,
                "request.invalid",
            ),
            ("JSON 30,000 deep", "POST", commands, _deep(30_000), me, 400, "request.invalid"),
            ("JSON 33 deep", "POST", commands, _deep(33), me, 400, "request.invalid"),
            (
                "JSON 30,000 deep to create",
                "POST",
                "/v1/games",
                b"[" * 30_000 + b"]" * 30_000,
                {},
                400,
                "request.invalid",
            ),
            (
                "expected_version a string",
                "POST",
                commands,
                json.dumps({"command": command, "expected_version": str(version)}).encode(),
                me,
                400,
                "request.invalid",
            ),
            (
                "expected_version a float",
                "POST",
                commands,
                json.dumps({"command": command, "expected_version": float(version)}).encode(),
                me,
                400,
                "request.invalid",
            ),
            (
                "expected_version negative",
                "POST",
                commands,
                json.dumps({"command": command, "expected_version": -1}).encode(),
                me,
                400,
                "request.invalid",
            ),
            (
                "expected_version true",
                "POST",
                commands,
                json.dumps({"command": command, "expected_version": True}).encode(),
                me,
                400,
                "request.invalid",
            ),
            (
                "seats a string",
                "POST",
                "/v1/games",
                b'{"game": "jolly-cargo", "seats": "2"}',
                {},
                400,
                "request.invalid",
            ),
            (
                "Idempotency-Key not ASCII",
                "POST",
                commands,
                json.dumps({"command": command}).encode(),
                {**me, "idempotency-key": "kë".encode()},
                400,
                "request.bad_idempotency_key",
            ),
            (
                "control character in a name",
                "POST",
                "/v1/games",
                json.dumps({"game": GAME, "seats": 2, "players": ["a\u0007", "b"]}).encode(),
                {},
                400,
                "lobby.bad_name",
            ),
            (
                "bidi override in a name",
                "POST",
                join,
                json.dumps({"name": "\u202eevil", "invite_code": code}).encode(),
                {},
                400,
                "lobby.bad_name",
            ),
            (
                "zero-width space in a name",
                "POST",
                join,
                json.dumps({"name": "a\u200bb", "invite_code": code}).encode(),
                {},
                400,
                "lobby.bad_name",
            ),
            (
                "name of 65 characters",
                "POST",
                join,
                json.dumps({"name": "é" * 65, "invite_code": code}).encode(),
                {},
                400,
                "lobby.bad_name",
            ),
            (
                "two players alike",
                "POST",
                "/v1/games",
                json.dumps({"game": GAME, "seats": 2, "players": ["Ann", "ANN"]}).encode(),
                {},
                400,
                "lobby.name_taken",
            ),
            (
                "a name already at the table",
                "POST",
                join,
                json.dumps({"name": "ann", "invite_code": code}).encode(),
                {},
                409,
                "lobby.name_taken",
            ),
        ]
        for what, method, url, body, headers, status, code_ in cases:
            r = await client.request(method, url, content=body, headers={**JSON_CT, **headers})
            try:
                assert_problem(r, status, code_)
            except AssertionError as error:
                raise AssertionError(f"{what}: {error}") from None
        assert await _counts(store) == before, "a bad request wrote something"
        assert (await client.get("/v1/games")).json()["games"] == listed

        # 32 deep is within the limit (decoded, then refused by the rules as a command)
        r = await client.post(commands, content=_deep(32), headers={**JSON_CT, **me})
        assert r.status_code == 422, r.text

        # names are NFC-normalised: "e" + combining acute is stored as "é"
        r = await client.post(
            join, json={"name": "Jose\u0301", "invite_code": code}, headers=JSON_CT
        )
        assert r.status_code == 200, r.text
        names = [s["name"] for s in (await client.get(f"/v1/games/{lobby['id']}")).json()["seats"]]
        assert "Jos\u00e9" in names and unicodedata.is_normalized(
            "NFC", "".join(n or "" for n in names)
        )
        # ... and compared after NFKC + case folding
        assert_problem(
            await client.post(join, json={"name": "josé", "invite_code": code}),
            409,
            "lobby.name_taken",
        )

        # the edge checks never cost a good request anything: it still goes through
        r = await client.post(
            commands, json={"command": command, "expected_version": version}, headers=me
        )
        assert r.status_code == 200, r.text


def _raw_request(port: int, head: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        with contextlib.suppress(OSError):  # the server may close before reading it all
            sock.sendall(head)
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)


def test_oversized_headers_are_refused_before_they_are_read(server: ServerProcess) -> None:
    """A 1 MB header (and one just past the 16 KiB default) → 400 problem JSON, connection
    closed; a header just under the limit is fine."""
    for size in (1_000_000, 17_000):
        answer = _raw_request(
            server.port,
            b"GET /v1/rules HTTP/1.1\r\nhost: x\r\nx-big: " + b"a" * size + b"\r\n\r\n",
        )
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400"), answer[:300]
        assert b"application/problem+json" in head
        assert json.loads(body)["code"] == "request.invalid"
    r = httpx.get(server.url + "/v1/rules", headers={"x-big": "a" * 15_000}, timeout=10)
    assert r.status_code == 200


@pytest.mark.own_server  # lists every game of its database
def test_a_failed_creation_leaves_no_game_behind(server: ServerProcess) -> None:
    """Creation is one transaction: a failure after the game row, seats and events were
    written (here, while starting it) leaves no row in any table."""
    asyncio.run(_failed_creation(server))


async def _failed_creation(server: ServerProcess) -> None:
    async with pg(server.pg_dsn) as store, in_process(server) as manifest:
        before = await _counts(store)

        async def broken_start(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("the start fails after the seats and events are written")

        manifest.lobby._start = broken_start  # type: ignore[method-assign]
        with pytest.raises(RuntimeError):
            await manifest.lobby.create(
                CreateGame(game=GAME, seats=2, options=RANDOM_CRATES, players=["a", "b"]),
            )
        assert await _counts(store) == before
        async with server.async_client() as client:
            assert (await client.get("/v1/games")).json()["games"] == []


# --- quotas ----------------------------------------------------------------------------------
@pytest.fixture
def strict_server(fresh_database: str, redis_url: str, request: pytest.FixtureRequest) -> Any:
    proc = ServerProcess(
        fresh_database,
        redis_url,
        MANIFEST_QUOTA_CREATE="3",
        MANIFEST_QUOTA_COMMANDS="4",
        MANIFEST_QUOTA_MESSAGES="2",
        MANIFEST_QUOTA_AUDIT="2",
        MANIFEST_QUOTA_READS="1000",
    )
    request.node.manifest_server = proc
    proc.start()
    try:
        yield proc
    finally:
        proc.close()


def _assert_limited(r: httpx.Response, quota: str) -> None:
    body = assert_problem(r, 429, "rate.limited")
    assert body["quota"] == quota
    retry = int(r.headers["retry-after"])
    assert 1 <= retry <= 60 and body["retry_after"] == retry


def test_quotas_limit_one_client_and_not_another(strict_server: ServerProcess) -> None:
    asyncio.run(_quotas(strict_server))


async def _quotas(server: ServerProcess) -> None:
    other_address = httpx.AsyncHTTPTransport(local_address="127.0.0.2")
    async with (
        pg(server.pg_dsn) as store,
        server.async_client() as client,
        server.async_client(transport=other_address) as other,
    ):
        # creation: 3 per minute per address
        games = [await create_started(client) for _ in range(3)]
        before = await _counts(store)
        _assert_limited(await client.post("/v1/games", json={"game": GAME, "seats": 2}), "create")
        assert await _counts(store) == before  # refused before anything was written
        from_elsewhere = await create_started(other)  # another address is unaffected
        assert from_elsewhere["id"]

        # commands: 4 per minute per seat token; the other seat is unaffected
        gid, tokens = games[0]["id"], tokens_of(games[0])
        url = f"/v1/games/{gid}/commands"
        bogus = {"command": {"type": "teleport"}}
        for _ in range(4):
            r = await client.post(url, json=bogus, headers=auth(tokens[0]))
            assert r.status_code == 422, r.text
        _assert_limited(await client.post(url, json=bogus, headers=auth(tokens[0])), "commands")
        r = await client.post(url, json=bogus, headers=auth(tokens[1]))
        assert r.status_code == 422, r.text
        # made-up tokens are no way around a quota: they all count against their address
        for i in range(4):
            r = await other.post(url, json=bogus, headers=auth(f"mf_seat_made_up_{i}"))
            assert_problem(r, 401, "auth.invalid_token")
        _assert_limited(await other.post(url, json=bogus, headers=auth("mf_seat_x")), "commands")
        r = await other.post(url, json=bogus, headers=auth(tokens[1]))  # a real one still works
        assert r.status_code == 422, r.text

        # messages: 2 per minute per token
        talk = f"/v1/games/{gid}/messages"
        for _ in range(2):
            r = await client.post(talk, json={"to": "all", "text": "hi"}, headers=auth(tokens[1]))
            assert r.status_code == 200, r.text
        _assert_limited(
            await client.post(talk, json={"to": "all", "text": "hi"}, headers=auth(tokens[1])),
            "messages",
        )

        # audit: 2 per minute per address (audit and dispute files together)
        assert (await client.get(f"/v1/games/{gid}/audit")).status_code == 200
        assert (await client.get(f"/v1/games/{gid}/audit/1")).status_code == 200
        _assert_limited(await client.get(f"/v1/games/{gid}/audit"), "audit")
        assert (await other.get(f"/v1/games/{gid}/audit")).status_code == 200
        # reads are a separate quota, and health checks have none
        assert (await client.get(f"/v1/games/{gid}")).status_code == 200
        assert (await client.get("/healthz")).status_code == 200


# --- a ceiling per address over every quota counted by token (issue 35) ---------------------
#: kind -> (method, path under the game, body): one request of each quota counted by token
_BY_TOKEN = {
    "commands": ("POST", "/commands", {"command": {"type": "teleport"}}),
    "messages": ("POST", "/messages", {"to": "all", "text": "hi"}),
    "queries": ("POST", "/queries", {"query": {"type": "survey"}}),
    "streams": ("GET", "/stream", None),
}


@pytest.fixture
def ceiling_server(fresh_database: str, redis_url: str, request: pytest.FixtureRequest) -> Any:
    per_kind = {f"MANIFEST_QUOTA_{kind.upper()}": "5" for kind in _BY_TOKEN}
    ceilings = {f"MANIFEST_QUOTA_{kind.upper()}_PER_ADDRESS": "8" for kind in _BY_TOKEN}
    proc = ServerProcess(fresh_database, redis_url, **per_kind, **ceilings)
    request.node.manifest_server = proc
    proc.start()
    try:
        yield proc
    finally:
        proc.close()


async def _send(client: httpx.AsyncClient, kind: str, game_id: str, token: str, **h: str) -> int:
    method, path, body = _BY_TOKEN[kind]
    url = f"/v1/games/{game_id}{path}"
    headers = {**auth(token), **h}
    if method == "GET":  # a stream: opened, then closed at once
        async with client.stream("GET", url, headers=headers) as r:
            if r.status_code == 429:
                await r.aread()
                _assert_limited(r, kind)
            return r.status_code
    r = await client.post(url, json=body, headers=headers)
    if r.status_code == 429:
        _assert_limited(r, kind)
    return r.status_code


def test_every_quota_by_token_has_a_ceiling_per_address(ceiling_server: ServerProcess) -> None:
    """The issue's attack for each quota counted by token: one address makes games (a token per
    seat), then spends each token's quota (5 a minute) in turn; it stops at the address's
    ceiling (8 a minute, all its tokens), a forged ``X-Forwarded-For`` (no proxy trusted) names
    no fresh ceiling, and the same token from another address still passes."""
    asyncio.run(_ceilings(ceiling_server))


async def _ceilings(server: ServerProcess) -> None:
    other_address = httpx.AsyncHTTPTransport(local_address="127.0.0.2")
    async with (
        server.async_client() as client,
        server.async_client(transport=other_address) as other,
    ):
        games = [await create_started(client) for _ in range(3)]
        seats = [(g["id"], t) for g in games for t in tokens_of(g)]  # 6 tokens, 30 a minute
        for kind in _BY_TOKEN:
            statuses = [
                await _send(client, kind, gid, token) for gid, token in seats for _ in range(2)
            ]
            assert all(s != 429 for s in statuses[:8]), (kind, statuses)
            assert statuses[8:] == [429] * 4, (kind, statuses)
            gid, token = seats[-1]  # 1 of its 5 spent: refused by the address's ceiling
            forged = await _send(client, kind, gid, token, **{"x-forwarded-for": "192.0.2.9"})
            assert forged == 429, kind
            assert await _send(other, kind, gid, token) != 429, kind


@pytest.fixture
def default_messages_server(
    fresh_database: str, redis_url: str, request: pytest.FixtureRequest
) -> Any:
    # the messages quota and its ceiling at their defaults (60, 120): empty is unset
    proc = ServerProcess(
        fresh_database,
        redis_url,
        MANIFEST_QUOTA_MESSAGES="",
        MANIFEST_QUOTA_MESSAGES_PER_ADDRESS="",
    )
    request.node.manifest_server = proc
    proc.start()
    try:
        yield proc
    finally:
        proc.close()


def test_the_issues_240_messages_from_one_address(default_messages_server: ServerProcess) -> None:
    """Issue 35 as reported, at the defaults: 240 messages from one address over the tokens of
    four games it made (8 tokens, 60 a minute each) were all accepted; the address's ceiling
    (120 a minute, refilled at 2 a second) now refuses the rest."""
    asyncio.run(_messages_flood(default_messages_server))


async def _messages_flood(server: ServerProcess) -> None:
    async with server.async_client() as client:
        games = [await create_started(client) for _ in range(4)]
        seats = [(g["id"], t) for g in games for t in tokens_of(g)]
        started = time.monotonic()
        statuses = []
        for i in range(240):
            gid, token = seats[i % len(seats)]
            r = await client.post(
                f"/v1/games/{gid}/messages", json={"to": "all", "text": "hi"}, headers=auth(token)
            )
            if r.status_code == 429:
                _assert_limited(r, "messages")
            statuses.append(r.status_code)
        elapsed = time.monotonic() - started
    accepted = statuses.count(200)
    assert accepted + statuses.count(429) == 240, statuses
    assert 120 <= accepted <= 120 + 2 * elapsed + 1, (accepted, elapsed)


# --- the audit, cached per head; refusals capped ---------------------------------------------
@pytest.fixture
def capped_server(fresh_database: str, redis_url: str, request: pytest.FixtureRequest) -> Any:
    proc = ServerProcess(fresh_database, redis_url, MANIFEST_REJECTED_CAP="3")
    request.node.manifest_server = proc
    proc.start()
    try:
        yield proc
    finally:
        proc.close()


def test_audit_etag_and_refusals_past_the_cap(capped_server: ServerProcess) -> None:
    asyncio.run(_audit_and_cap(capped_server))


async def _audit_and_cap(server: ServerProcess) -> None:
    async with pg(server.pg_dsn) as store, server.async_client() as client:
        created = await create_started(client)
        gid, tokens = created["id"], tokens_of(created)
        audit = f"/v1/games/{gid}/audit"
        first = await client.get(audit)
        assert first.status_code == 200 and first.json()["ok"] is True
        etag = first.headers["etag"]
        assert first.json()["rejected"] == {"cap_per_seat": 3, "unrecorded": {}, "over_budget": {}}
        again = await client.get(audit, headers={"if-none-match": etag})
        assert again.status_code == 304 and again.headers["etag"] == etag and not again.content
        assert (await client.get(audit)).content == first.content

        # five refusals by seat 0: all answered, three recorded, two counted
        url = f"/v1/games/{gid}/commands"
        for i in range(5):
            r = await client.post(
                url,
                json={"command": {"type": "teleport"}},
                headers={**auth(tokens[0]), "idempotency-key": f"k{i}"},
            )
            assert_problem(r, 422, "command.invalid")
        rows = await store._pool.fetch(
            "SELECT seat, outcome FROM commands WHERE game_id = $1::uuid", gid
        )
        assert [(r["seat"], r["outcome"]) for r in rows] == [(0, "rejected")] * 3
        # the count past the cap changes the answer, so the ETag too
        r = await client.get(audit, headers={"if-none-match": etag})
        assert r.status_code == 200 and r.headers["etag"] != etag
        assert r.json()["rejected"]["unrecorded"] == {"0": 2}
        # seat 1 has a cap of its own
        r = await client.post(url, json={"command": {"type": "teleport"}}, headers=auth(tokens[1]))
        assert_problem(r, 422, "command.invalid")
        assert (
            await store._pool.fetchval(
                "SELECT count(*) FROM commands WHERE game_id = $1::uuid AND seat = 1", gid
            )
            == 1
        )

        # a move changes the head: a new ETag and a new report
        etag = (await client.get(audit)).headers["etag"]
        doc = (await client.get(f"/v1/games/{gid}")).json()
        who = doc["to_act"][0]
        legal = (await client.get(f"/v1/games/{gid}/legal", headers=auth(tokens[who]))).json()
        r = await client.post(
            url, json={"command": legal["commands"][0]}, headers=auth(tokens[who])
        )
        assert r.status_code == 200, r.text
        moved = await client.get(audit, headers={"if-none-match": etag})
        assert moved.status_code == 200 and moved.headers["etag"] != etag
        assert moved.json()["version"] == first.json()["version"] + len(r.json()["events"])

    # computed once per head, however many ask at once
    async with in_process(server) as manifest:
        from service.application.auditcache import AuditCache
        from service.application.history import History

        cache = AuditCache(History.of(manifest), size=8, rejected_cap=3)
        _, head, unrecorded = await cache.state(gid)
        bodies = await asyncio.gather(*(cache.report(gid, head, unrecorded) for _ in range(10)))
        assert len(set(bodies)) == 1 and cache.computed == 1
        await cache.report(gid, head, unrecorded)
        assert cache.computed == 1
