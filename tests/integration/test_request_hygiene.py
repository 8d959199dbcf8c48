"""Request hygiene (issue 25, "the smaller findings"), each tried as a hostile client would
against the real server process, PostgreSQL and Redis:

* a games-list ``cursor`` that is not one the server gave out — however it is malformed — is
  400 ``request.bad_cursor``, never a 500 from the database driver;
* a path that is not UTF-8 once percent-decoded (``/v1/games/%ff``) is 400 ``request.invalid``,
  as ``docs/api.md`` says of bad bytes;
* a JSON body needs a JSON ``Content-Type`` (415 ``request.unsupported_media_type``);
* a player's name needs a visible character, and two names that look alike (Unicode TR39
  confusables, default-ignorable code points left out) are one player;
* ``X-Forwarded-For`` is believed only from a proxy named in ``MANIFEST_TRUSTED_PROXIES``: a
  client cannot buy a fresh quota bucket with each forged value.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest
from redis.asyncio import Redis

from .apihelp import GAME, assert_problem, auth, create_started
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]

_GID = "0b2c3d4e-5f60-4172-8394-a5b6c7d8e9f0"

#: Cursors no server gave out: each must be 400 ``request.bad_cursor``.
BAD_CURSORS = [
    f"0001-01-01T00:00:00+14:00~{_GID}",  # the year 0 once moved to UTC (was a 500)
    f"9999-12-31T23:59:59-14:00~{_GID}",  # the year 10000 once moved to UTC
    f"0001-01-01T00:00:00.000000+23:59~{_GID}",
    f"2024-01-01T00:00:00~{_GID}",  # no UTC offset
    f"2024-01-01~{_GID}",  # a date without a time has no offset either
    f"2024-13-01T00:00:00Z~{_GID}",
    f"2024-02-30T00:00:00Z~{_GID}",
    f"2024-01-01T24:00:00Z~{_GID}",
    f"2024-01-01T00:00:00+25:00~{_GID}",
    "2024-01-01T00:00:00Z",  # no id
    "2024-01-01T00:00:00Z~",
    "2024-01-01T00:00:00Z~not-a-uuid",
    f"2024-01-01T00:00:00Z~{_GID}0",
    f"~{_GID}",
    "~",
    "",
    "nonsense",
    f"{'9' * 5000}~{_GID}",
    f"2024-01-01T00:00:00Z~{_GID}~{_GID}",
    f"\u0661\u0669\u0667\u0660-01-01T00:00:00Z~{_GID}",  # Arabic-Indic digits
]


def test_a_malformed_or_out_of_range_cursor_is_400_bad_cursor(server: ServerProcess) -> None:
    with server.client() as client:
        for cursor in BAD_CURSORS:
            r = client.get("/v1/games", params={"cursor": cursor})
            assert_problem(r, 400, "request.bad_cursor")
        # a "+" left unescaped in a query string is a space: no offset, no cursor of ours
        query = f"cursor=2024-01-01T00:00:00+14:00~{_GID}"
        assert_problem(client.get(f"/v1/games?{query}"), 400, "request.bad_cursor")
        # the edges of the range that are fine: a cursor the server could have written
        for cursor in (f"0001-01-01T00:00:00Z~{_GID}", f"9999-12-31T23:59:59.999999Z~{_GID}"):
            r = client.get("/v1/games", params={"cursor": cursor})
            assert r.status_code == 200, (cursor, r.text)
        # same instant, any offset: as written by another client library
        r = client.get("/v1/games", params={"cursor": f"2999-01-01T05:00:00+05:00~{_GID}"})
        assert r.status_code == 200, r.text


# --- a path that is not UTF-8 ----------------------------------------------------------------
#: (path as sent, what it is); each is 400 ``request.invalid`` (docs/api.md, "Bad bytes").
BAD_PATHS = [
    "/v1/games/%ff",  # a game id route (was 404 game.not_found)
    "/v1/games/%c3%28",  # an invalid two-byte sequence
    "/v1/games/%ed%a0%80",  # a UTF-8-encoded surrogate
    "/v1/games/%f4%90%80%80",  # past U+10FFFF
    "/v1/games/%00",  # NUL
    f"/v1/games/{_GID}/events%ff",  # a route's tail
    "/v1/games/%ff/legal",
    "/v1/rules/%ff/assets/map",
    "/v1/nothing-here/%ff",  # no route at all (was 404 http.not_found)
    "/%ff",
]


def test_a_path_that_is_not_utf8_is_400_as_documented(server: ServerProcess) -> None:
    with server.client() as client:
        for path in BAD_PATHS:
            for method in ("GET", "POST", "DELETE"):
                r = client.request(method, path, json={} if method == "POST" else None)
                assert_problem(r, 400, "request.invalid")
        # well-formed UTF-8 that names nothing is still 404
        assert_problem(client.get("/v1/games/%c3%a9"), 404, "game.not_found")
        assert_problem(client.get("/v1/nothing-here/%c3%a9"), 404, "http.not_found")


# --- a JSON body needs a JSON content type ---------------------------------------------------
NOT_JSON_TYPES: list[str | None] = [
    None,  # no Content-Type at all
    "text/plain",  # what an HTML form or a no-cors fetch may send cross-site
    "text/plain; charset=utf-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/jsonp",
    "application/json-seq",
    "text/json",
    "application/+json",
    "application/json; charset=latin-1",  # JSON is UTF-8 (RFC 8259)
    "application/json, text/plain",
    "",
    "json",
]
JSON_TYPES = [
    "application/json",
    "APPLICATION/JSON",
    "application/json; charset=utf-8",
    'application/json;charset="UTF-8"',
    "application/merge-patch+json",
    "application/vnd.manifest+json; charset=utf-8",
]


def test_a_json_body_needs_a_json_content_type(server: ServerProcess) -> None:
    asyncio.run(_content_types(server))


async def _content_types(server: ServerProcess) -> None:
    async with server.async_client() as client:
        body = b'{"game": "' + GAME.encode() + b'", "seats": 2}'
        listed = len((await client.get("/v1/games", params={"limit": 200})).json()["games"])
        for ctype in NOT_JSON_TYPES:
            headers = {} if ctype is None else {"content-type": ctype}
            r = await client.post("/v1/games", content=body, headers=headers)
            assert_problem(r, 415, "request.unsupported_media_type")
        # two Content-Type headers: ambiguous, refused too
        r = await client.post(
            "/v1/games",
            content=body,
            headers=[("content-type", "application/json"), ("content-type", "text/plain")],
        )
        assert_problem(r, 415, "request.unsupported_media_type")
        after = (await client.get("/v1/games", params={"limit": 200})).json()["games"]
        assert len(after) == listed  # nothing was created
        for ctype in JSON_TYPES:
            r = await client.post("/v1/games", content=body, headers={"content-type": ctype})
            assert r.status_code == 201, (ctype, r.text)

        # every endpoint that takes a body: join, commands, messages, queries, start
        created = await create_started(client)
        gid = created["id"]
        token = created["seats"][0]["token"]
        lobby = (await client.post("/v1/games", json={"game": GAME, "seats": 2})).json()
        me = {"authorization": f"Bearer {token}"}
        host = {"authorization": f"Bearer {lobby['host_token']}"}
        posts: list[tuple[str, dict[str, str], bytes]] = [
            (f"/v1/games/{lobby['id']}/join", {}, b'{"name": "x", "invite_code": "y"}'),
            (f"/v1/games/{gid}/commands", me, b'{"command": {"type": "x"}}'),
            (f"/v1/games/{gid}/messages", me, b'{"to": "all", "text": "hi"}'),
            (f"/v1/games/{gid}/queries", me, b'{"query": {"type": "x"}}'),
            (f"/v1/games/{lobby['id']}/start", host, b"{}"),
        ]
        for url, headers, payload in posts:
            r = await client.post(
                url, content=payload, headers={**headers, "content-type": "text/plain"}
            )
            assert_problem(r, 415, "request.unsupported_media_type")
            r = await client.post(url, content=payload, headers=headers)
            assert_problem(r, 415, "request.unsupported_media_type")
        # an empty body is no body: nothing to label (start takes none)
        r = await client.post(f"/v1/games/{lobby['id']}/start", headers=host)
        assert r.status_code != 415, r.text


# --- names: something visible, and lookalikes are one player ---------------------------------
def test_names_must_show_something_and_lookalikes_are_one_player(server: ServerProcess) -> None:
    with server.client() as client:
        for invisible in ("\u3164", "\u2800", "\u0301\u0302", "\u115f\u1160", "\ufe0f"):
            r = client.post(
                "/v1/games", json={"game": GAME, "seats": 2, "players": [invisible, "b"]}
            )
            assert_problem(r, 400, "lobby.bad_name")
        for twins in (["\u0430nn", "ann"], ["a", "a\ufe0f"], ["Iris", "lris"]):
            r = client.post("/v1/games", json={"game": GAME, "seats": 2, "players": twins})
            assert_problem(r, 400, "lobby.name_taken")

        lobby = client.post("/v1/games", json={"game": GAME, "seats": 3}).json()
        join = f"/v1/games/{lobby['id']}/join"
        code = lobby["invite_code"]
        assert_problem(
            client.post(join, json={"name": "\u3164", "invite_code": code}), 400, "lobby.bad_name"
        )
        assert client.post(join, json={"name": "ann", "invite_code": code}).status_code == 200
        for twin in ("\u0430nn", "ANN", "\u0410nn", "ann\ufe0f", "ann\u3164"):
            r = client.post(join, json={"name": twin, "invite_code": code})
            assert_problem(r, 409, "lobby.name_taken")
        assert client.post(join, json={"name": "anna", "invite_code": code}).status_code == 200

        # an invitation is for the name as it looks: a lookalike takes the invitee's one seat
        invited = client.post(
            "/v1/games", json={"game": GAME, "seats": 2, "invited": ["ann", "bob"]}
        ).json()
        join = f"/v1/games/{invited['id']}/join"
        code = invited["invite_code"]
        assert_problem(
            client.post(
                "/v1/games",
                json={"game": GAME, "seats": 2, "invited": ["ann", "\u0430nn"]},
            ),
            422,
            "lobby.bad_invited",
        )
        assert client.post(join, json={"name": "\u0430nn", "invite_code": code}).status_code == 200
        r = client.post(join, json={"name": "ann", "invite_code": code})
        assert_problem(r, 409, "lobby.already_seated")


# --- X-Forwarded-For is believed only from a trusted proxy -----------------------------------
READS = 5  # the reads quota of these servers: requests per minute per client


def _quota_server(
    fresh_database: str, redis_url: str, request: pytest.FixtureRequest, **env: str
) -> Iterator[ServerProcess]:
    proc = ServerProcess(fresh_database, redis_url, MANIFEST_QUOTA_READS=str(READS), **env)
    request.node.manifest_server = proc
    proc.start()
    try:
        yield proc
    finally:
        proc.close()


@pytest.fixture
def untrusting_server(
    fresh_database: str, redis_url: str, request: pytest.FixtureRequest
) -> Iterator[ServerProcess]:
    """The default: no trusted proxy (``MANIFEST_TRUSTED_PROXIES`` unset)."""
    yield from _quota_server(fresh_database, redis_url, request)


@pytest.fixture
def trusting_server(
    fresh_database: str, redis_url: str, request: pytest.FixtureRequest
) -> Iterator[ServerProcess]:
    """127.0.0.1 is a trusted proxy (as an address; a network is tried in the unit tests)."""
    yield from _quota_server(
        fresh_database, redis_url, request, MANIFEST_TRUSTED_PROXIES="127.0.0.1"
    )


def _forged(i: int) -> dict[str, str]:
    return {"x-forwarded-for": f"203.0.113.{i}", "x-forwarded-proto": "https"}


@pytest.mark.own_server
def test_forged_forwarded_for_values_share_the_senders_bucket(
    untrusting_server: ServerProcess,
) -> None:
    with untrusting_server.client() as client:
        for i in range(READS):
            r = client.get("/v1/rules", headers=_forged(i))
            assert r.status_code == 200, r.text
        # a fresh forged value is no fresh bucket (it was, with uvicorn's default trust)
        for i in range(READS, READS + 3):
            r = client.get("/v1/rules", headers=_forged(i))
            body = assert_problem(r, 429, "rate.limited")
            assert body["quota"] == "reads" and int(r.headers["retry-after"]) >= 1


@pytest.mark.own_server
def test_a_trusted_proxys_forwarded_for_names_the_client(trusting_server: ServerProcess) -> None:
    with trusting_server.client() as proxy:
        # each client the proxy forwards for has a bucket of its own
        for i in range(3 * READS):
            r = proxy.get("/v1/rules", headers=_forged(i))
            assert r.status_code == 200, (i, r.text)
        # ... and one client is still held to its quota, whatever proxy it comes through
        for _ in range(READS):
            assert proxy.get("/v1/rules", headers=_forged(200)).status_code == 200
        assert_problem(proxy.get("/v1/rules", headers=_forged(200)), 429, "rate.limited")
        # a chain: the right-most address that is not a trusted proxy is the client
        chain = {"x-forwarded-for": "203.0.113.200, 127.0.0.1"}
        assert_problem(proxy.get("/v1/rules", headers=chain), 429, "rate.limited")
    # a peer that is not a trusted proxy forges in vain: its own address is its bucket
    elsewhere = httpx.HTTPTransport(local_address="127.0.0.2")
    with trusting_server.client(transport=elsewhere) as client:
        for i in range(READS):
            assert client.get("/v1/rules", headers=_forged(100 + i)).status_code == 200
        r = client.get("/v1/rules", headers=_forged(150))
        assert_problem(r, 429, "rate.limited")


def test_another_spelling_of_a_game_id_names_no_game(server: ServerProcess) -> None:
    """PostgreSQL reads a game id as a UUID (any spelling: upper case, no hyphens, braces,
    ``urn:uuid:``), but Redis keys, the in-process caches and the lazily built views are keyed
    by the string. A read under another spelling was answered (its document's ``id`` that
    spelling) and its "repair" wrote a whole projection record under that key — one per
    spelling, 2^(hex letters) of them for each game: a client could fill Redis with copies of
    any game. Only the canonical spelling names a game; every other one is 404, on every
    route and method the OpenAPI document lists with ``{game_id}`` (one guard on the app: a
    new route cannot forget it)."""
    with server.client() as client:
        created = client.post(
            "/v1/games", json={"game": GAME, "seats": 2, "players": ["a", "b"]}
        ).json()
        canonical, token = created["id"], created["seats"][0]["token"]
        assert client.get(f"/v1/games/{canonical}").status_code == 200
        spellings = [
            canonical.upper(),
            canonical.replace("-", ""),
            "{" + canonical + "}",
            "urn:uuid:" + canonical,
            canonical + " ",
        ]
        paths = client.get("/schema/openapi.json").json()["paths"]
        tried = 0
        for template, operations in paths.items():
            if "{game_id}" not in template:
                continue
            for method in operations.keys() & {"get", "post", "put", "delete", "patch"}:
                for spelling in spellings:
                    path = template.replace("{game_id}", quote(spelling, safe=""))
                    path = path.replace("{n}", "1").replace("{seat}", "1")
                    r = client.request(
                        method, path, headers=auth(token)
                    )  # no body: the guard runs before its parsing
                    assert_problem(r, 404, "game.not_found")
                    tried += 1
        assert tried >= 17 * len(spellings)  # every game operation (17 today), not a few
    keys = asyncio.run(_keys(server))
    # the server is shared with other tests' games: look at the keys naming this game in any
    # spelling (its 32 hex digits, whatever the case and dashes); each uses the canonical form
    digits = canonical.replace("-", "").lower()
    ours = [k for k in keys if digits in k.lower().replace("-", "")]
    assert ours and all(canonical in k for k in ours), ours  # no copy under another spelling


async def _keys(server: ServerProcess) -> list[str]:
    redis = Redis.from_url(server.redis_url)
    try:
        return [k.decode() async for k in redis.scan_iter(match=f"{server.prefix}:*")]
    finally:
        await redis.aclose()
