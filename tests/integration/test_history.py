"""Replay, events, live changes and seeking, against the real server process, PostgreSQL and
Redis (issue 4, "Must show" 1, 7 and 8).

Every view the server answers is compared with a view the test computes itself from the events
read straight from PostgreSQL: folded with the pure projection functions
(``domain.platform.table.fold_stream``/``game_document``) and, independently, with the game's own
``JOLLY_CARGO.fold``/``view``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis

from domain.kernel import SPECTATOR
from domain.kernel.hidden import is_sealed
from domain.platform.table import SNAPSHOT_EVERY

from .apihelp import (
    KEYFRAME_EVERY,
    RANDOM_CRATES,
    assert_problem,
    auth,
    bot_step,
    create_started,
    pg,
    tokens_of,
)
from .historyhelp import (
    Folding,
    bot_command,
    create,
    in_process,
    mostly_end_turn,
    sse_messages,
)
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]


async def _gather_json(client: httpx.AsyncClient, urls: list[str], **kw: Any) -> list[Any]:
    """GET every url (8 at a time); every answer is 200 JSON."""
    out: list[Any] = []
    for i in range(0, len(urls), 8):
        answers = await asyncio.gather(*(client.get(u, **kw) for u in urls[i : i + 8]))
        for r in answers:
            assert r.status_code == 200, (r.request.url, r.status_code, r.text[:300])
            out.append(r.json())
    return out


async def _all_events(
    client: httpx.AsyncClient, game_id: str, limit: int, token: str | None = None
) -> list[dict[str, Any]]:
    """``GET /events`` page after page (``after`` = the previous page's ``next``)."""
    events: list[dict[str, Any]] = []
    after = 0
    while True:
        r = await client.get(
            f"/v1/games/{game_id}/events",
            params={"after": after, "limit": limit},
            headers=auth(token),
        )
        assert r.status_code == 200, r.text
        page = r.json()
        assert len(page["events"]) <= limit
        events.extend(page["events"])
        if page["next"] is None:
            return events
        assert page["next"] == page["events"][-1]["version"] > after
        after = page["next"]


# --- 1. a finished bot game replays ------------------------------------------------------------
def test_finished_bot_game_replays_at_every_event(server: ServerProcess) -> None:
    """Two bots play CARGO (crates placed at random) to the end over HTTP (GET the game, GET
    ``/legal`` for the seat to act, POST a random legal command). Then, for EVERY event n:
    ``GET /replay/{n}`` is the table folded from events 1..n read from PostgreSQL, as an
    auditor sees it (a finished game hides nothing): ``view`` equals ``game_document(table,
    "spectator", everything=True)["view"]`` and ``JOLLY_CARGO.view(fold(game events ≤ n),
    AUDITOR)``; ``status``/``to_act`` match. ``GET /replay`` (NDJSON) has exactly one line per
    event whose ``view`` is ``/replay/{n}``'s; ``GET /events`` pages cover 1..version exactly,
    unredacted, with the stored links; the last events include ``seed.revealed`` whose seed
    hashes to ``lobby.created.seed_commitment``."""
    asyncio.run(_finished_game_replays(server, random.Random(4)))


async def _finished_game_replays(server: ServerProcess, rng: random.Random) -> None:
    async with pg(server.pg_dsn) as store, server.async_client() as client:
        created = await create_started(client, options=RANDOM_CRATES)
        game_id, tokens = created["id"], tokens_of(created)
        while (r := await bot_step(client, game_id, tokens, rng)) is not None:
            assert r.status_code == 200, r.text
        stored = await store.read(game_id)
        version = len(stored)
        row = await store.get_game(game_id)
        assert row is not None and row.status == "finished" and row.version == version

        # Every /replay/{n} against both reference folds.
        replays = await _gather_json(
            client, [f"/v1/games/{game_id}/replay/{n}" for n in range(1, version + 1)]
        )
        ref = Folding(game_id)
        started = False
        for event, replay in zip(stored, replays, strict=True):
            n = event.version
            ref.push(event)
            doc = ref.document(everything=True)
            assert replay["version"] == n
            assert replay["view"] == doc["view"], n
            assert replay["status"] == doc["status"] and replay["to_act"] == doc["to_act"], n
            assert replay["result"] == doc["result"], n
            assert replay["folded"] <= SNAPSHOT_EVERY
            started = started or ref.state is not None
            if started:
                assert replay["view"] == ref.own_view(), n
            else:
                assert replay["view"] is None
        assert started and replays[-1]["status"] == "finished"
        # A finished game shows everything: even face-down crates show their colours.
        face_down = [
            c for r in replays for c in (r["view"] or {}).get("crates", []) if c["face_down"]
        ]
        assert face_down and all(c["colour"] is not None for c in face_down)
        for n in (0, version + 1):
            r = await client.get(f"/v1/games/{game_id}/replay/{n}")
            assert r.status_code == 404, (n, r.text)

        # The NDJSON replay: one line per event; on keyframes (every 100th, the last) with
        # /replay/{n}'s view.
        r = await client.get(f"/v1/games/{game_id}/replay")
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("application/x-ndjson")
        lines = r.content.decode().splitlines()
        assert len(lines) == version
        for i, (raw, replay, event) in enumerate(zip(lines, replays, stored, strict=True), 1):
            line = json.loads(raw)
            assert line["version"] == i == event.version
            assert ("view" in line) == (i % KEYFRAME_EVERY == 0 or i == version), i
            assert line.get("view", replay["view"]) == replay["view"], i
            assert line["event"]["data"] == event.data
            assert line["event"]["hash"] == event.hash.hex()

        # /events, page by page, covers 1..version exactly (with several page sizes).
        for limit in (1000, 333, 7):
            if limit == 7:  # a few pages from the middle only: 7 is small
                r = await client.get(
                    f"/v1/games/{game_id}/events", params={"after": version - 10, "limit": 7}
                )
                page = r.json()
                assert [e["version"] for e in page["events"]] == list(
                    range(version - 9, version - 2)
                )
                assert page["next"] == version - 3
                continue
            events = await _all_events(client, game_id, limit)
            assert [e["version"] for e in events] == list(range(1, version + 1))
            for got, event in zip(events, stored, strict=True):
                assert got["type"] == event.type and got["seat"] == event.seat
                assert got["data"] == event.data  # finished: nothing redacted
                assert got["hash"] == event.hash.hex()
                assert got["prev_hash"] == event.prev_hash.hex()
        r = await client.get(f"/v1/games/{game_id}/events", params={"after": version})
        assert r.json() == {"events": [], "next": None}

        # Commit, then reveal.
        assert stored[0].type == "lobby.created"
        commitment = stored[0].data["seed_commitment"]
        revealed = [e for e in stored if e.type == "seed.revealed"]
        assert len(revealed) == 1
        last_command = stored[-1].command_id
        assert revealed[0].command_id == last_command is not None  # with the final move
        assert any(e.type == "game_ended" and e.command_id == last_command for e in stored)
        assert hashlib.sha256(bytes.fromhex(revealed[0].data["seed"])).hexdigest() == commitment
        assert bytes.fromhex(revealed[0].data["seed"]) == await store.seed(game_id)


def test_live_game_replay_and_events_hide_face_down_crates(server: ServerProcess) -> None:
    """A LIVE game (crates placed by the players, still in placement): ``/replay/{n}``,
    ``/replay`` and ``/events`` as a spectator and as a seat never show a face-down crate's
    colour, though PostgreSQL holds it; the replayed view is the spectator's reference view."""
    asyncio.run(_live_game_hides(server, random.Random(7)))


async def _live_game_hides(server: ServerProcess, rng: random.Random) -> None:
    async with pg(server.pg_dsn) as store, server.async_client() as client:
        created = await create_started(client, options={"crate_placement": "players"})
        game_id, tokens = created["id"], tokens_of(created)
        for _ in range(6):
            r = await bot_step(client, game_id, tokens, rng)
            assert r is not None and r.status_code == 200, r
        stored = await store.read(game_id)
        placed = [e for e in stored if e.type == "crate_placed"]
        assert placed and all(e.data["colour"] is not None for e in placed)  # the secret exists
        version = len(stored)

        ref = Folding(game_id)
        for token in (None, tokens[0]):
            ref = Folding(game_id)
            replays = await _gather_json(
                client,
                [f"/v1/games/{game_id}/replay/{n}" for n in range(1, version + 1)],
                headers=auth(token),
            )
            for event, replay in zip(stored, replays, strict=True):
                ref.push(event)
                if token is None:
                    assert replay["view"] == ref.document(everything=False)["view"]
                    assert replay["view"] == ref.own_view(SPECTATOR)
                for crate in (replay["view"] or {}).get("crates", []):
                    assert crate["face_down"] and crate["colour"] is None, (event.version, crate)
            assert sum(len(r["view"]["crates"]) for r in replays[-1:]) == len(placed)

            events = await _all_events(client, game_id, 5, token)
            assert [e["version"] for e in events] == list(range(1, version + 1))
            for e in events:
                if e["type"] == "crate_placed":
                    assert is_sealed(e["data"]["colour"]) and e["openings"] == [], e

            r = await client.get(f"/v1/games/{game_id}/replay", headers=auth(token))
            for raw in r.content.decode().splitlines():
                line = json.loads(raw)
                if line["event"]["type"] == "crate_placed":
                    assert is_sealed(line["event"]["data"]["colour"])
                for crate in (line.get("view") or {}).get("crates", []):
                    assert crate["colour"] is None

        # Nor does the dispute file of a placement (it is served to anyone, without a token).
        r = await client.get(f"/v1/games/{game_id}/audit/{placed[-1].version}")
        assert r.status_code == 200, r.text
        dispute = r.json()
        assert dispute["state_before"]["full"] is None
        assert [e["type"] for e in dispute["events"]] == ["crate_placed"]
        # The canonical bytes hold the colour's commitment only (canonical form 2).
        canonical = json.loads(dispute["chain"]["canonical"])
        assert is_sealed(canonical["data"]["colour"])
        crates = list(_crate_colours(dispute))
        assert len(crates) == len(placed)  # every crate before it, and the new one
        assert all(colour is None or is_sealed(colour) for colour in crates), crates


def _crate_colours(value: Any) -> Iterator[Any]:
    """The ``colour`` of every crate (``square`` + ``colour``) anywhere in a JSON value."""
    if isinstance(value, dict):
        if "square" in value and "colour" in value:
            yield value["colour"]
        for item in value.values():
            yield from _crate_colours(item)
    elif isinstance(value, list):
        for item in value:
            yield from _crate_colours(item)


# --- 7. two instances, one PostgreSQL and one Redis --------------------------------------------
def test_stream_on_one_instance_hears_moves_on_another(server: ServerProcess) -> None:
    """Instance B (another server process on the same database and Redis prefix) streams a
    game (``GET /stream``, Server-Sent Events): its first message is the current document;
    a move POSTed to instance A reaches B's stream within seconds as a ``change`` message whose
    ``version`` is the new version and whose document is A's ``GET /v1/games/{id}`` for the
    same token."""
    other = ServerProcess(server.pg_dsn, server.redis_url, prefix=server.prefix)
    other.start()
    try:
        asyncio.run(_two_instances(server, other, random.Random(11)))
    finally:
        other.close()


def test_stream_on_one_instance_hears_moves_on_another_on_a_redis_cluster(
    fresh_database: str, redis_cluster_url: str
) -> None:
    """The same over HTTP with both instances on a three-primary Redis Cluster
    (``REDIS_CLUSTER=1``): play, projections, and SSE fan-out between instances."""
    a = ServerProcess(fresh_database, redis_cluster_url, REDIS_CLUSTER="1")
    b = ServerProcess(fresh_database, redis_cluster_url, prefix=a.prefix, REDIS_CLUSTER="1")
    a.start()
    try:
        b.start()
        asyncio.run(_two_instances(a, b, random.Random(12)))
    finally:
        b.close()
        a.close()


async def _two_instances(a: ServerProcess, b: ServerProcess, rng: random.Random) -> None:
    async with a.async_client() as client_a, b.async_client(timeout=30.0) as client_b:
        created = await create_started(client_a)
        game_id, tokens = created["id"], tokens_of(created)
        for token in (tokens[0], None):
            async with client_b.stream(
                "GET", f"/v1/games/{game_id}/stream", headers=auth(token)
            ) as stream:
                assert stream.status_code == 200
                assert stream.headers["content-type"].startswith("text/event-stream")
                messages = sse_messages(stream.aiter_lines())
                first = await asyncio.wait_for(anext(messages), 10)
                assert first["event"] == "change"
                now = await client_a.get(f"/v1/games/{game_id}", headers=auth(token))
                assert json.loads(first["data"]) == now.json()
                assert first["id"] == str(now.json()["version"])
                for _ in range(3):
                    r = await bot_step(client_a, game_id, tokens, rng)
                    assert r is not None and r.status_code == 200, r
                    new_version = r.json()["version"]
                    message = await asyncio.wait_for(anext(messages), 5)
                    assert message["event"] == "change"
                    doc = json.loads(message["data"])
                    assert doc["version"] == new_version
                    on_a = await client_a.get(f"/v1/games/{game_id}", headers=auth(token))
                    assert doc == on_a.json()
        r = await client_b.get(f"/v1/games/{game_id}/stream", headers=auth("mf_s_bogus"))
        assert r.status_code == 401


# --- 8. seeking folds at most one snapshot interval ---------------------------------------------
SEEKS = [1, 2, 99, 100, 101, 199, 999, 1000, 2345, 4999, 5000]


@pytest.mark.parametrize(
    "length",
    [1050, pytest.param(5050, marks=pytest.mark.slow)],  # ten intervals; fifty in CI
)
def test_seek_in_a_long_game_folds_at_most_one_interval(server: ServerProcess, length: int) -> None:
    """A game of more than ``length`` events (two bots ending their turns, through the real
    append path in-process). ``GET /replay/{n}`` for many n answers with ``folded`` ≤ 100 and
    the view folded from PostgreSQL; after the Redis snapshots are wiped, a seek still answers
    right (rebuilding them) and the next seeks again fold ≤ 100."""
    asyncio.run(_long_game_seeks(server, random.Random(3), length))


async def _long_game_seeks(server: ServerProcess, rng: random.Random, length: int) -> None:
    async with in_process(server) as manifest:
        created = await create(manifest)
        game_id, tokens = created["id"], tokens_of(created)
        version = created["version"]
        while version < length:
            response = await bot_command(manifest, game_id, tokens, rng, mostly_end_turn)
            assert response is not None, "the game ended early"
            version = response["version"]
    redis = aioredis.from_url(server.redis_url)  # type: ignore[no-untyped-call]
    snap_key = f"{server.prefix}:{{{game_id}}}:snap"
    try:
        kept = sorted(int(k) for k in await redis.hkeys(snap_key))
        assert kept == list(range(SNAPSHOT_EVERY, version + 1, SNAPSHOT_EVERY))

        async with pg(server.pg_dsn) as store, server.async_client() as client:
            stored = await store.read(game_id)
            assert len(stored) == version
            extra = rng.sample(range(1, version + 1), 25)
            last = version // SNAPSHOT_EVERY * SNAPSHOT_EVERY  # the last snapshot's event
            seeks = {*(n for n in SEEKS if n <= version), version // 2, last - 1, last, version}
            targets = sorted({*seeks, *extra})
            expected = _reference_views(game_id, stored, targets)

            async def seek(n: int) -> None:
                r = await client.get(f"/v1/games/{game_id}/replay/{n}")
                assert r.status_code == 200, r.text
                body = r.json()
                assert body["folded"] <= SNAPSHOT_EVERY, (n, body["folded"])
                assert body["folded"] == n % SNAPSHOT_EVERY
                assert body["view"] == expected[n], n

            for n in targets:
                await seek(n)

            # Wipe every replay snapshot of the server's prefix, as a Redis flush would.
            wiped = [k async for k in redis.scan_iter(match=f"{server.prefix}:*:snap")]
            assert wiped
            await redis.delete(*wiped)
            assert await redis.hlen(snap_key) == 0
            await seek(last - 1)  # rebuilds the snapshots below it
            rebuilt = sorted(int(k) for k in await redis.hkeys(snap_key))
            assert rebuilt == list(range(SNAPSHOT_EVERY, last - SNAPSHOT_EVERY + 1, SNAPSHOT_EVERY))
            for n in (version // 2, last, version, 1, 101):
                await seek(n)
            assert await redis.hlen(snap_key) == version // SNAPSHOT_EVERY
    finally:
        await redis.aclose()


def _reference_views(game_id: str, stored: list[Any], targets: list[int]) -> dict[int, Any]:
    """The spectator's view after each target event (the game is live), folded two ways."""
    ref = Folding(game_id)
    out: dict[int, Any] = {}
    wanted = set(targets)
    for event in stored:
        ref.push(event)
        if event.version in wanted:
            view = ref.document(everything=False)["view"]
            assert view == ref.own_view(SPECTATOR)
            out[event.version] = view
    return out


@pytest.mark.parametrize("after", ["2147483648", "9223372036854775808", "9" * 30])
def test_events_after_a_huge_version_is_a_problem_not_a_500(
    server: ServerProcess, after: str
) -> None:
    """``GET /events?after=`` past the database's int4 versions: 400 ``request.invalid`` (it
    answered 500: asyncpg refused to bind the number)."""
    with server.client() as client:
        r = client.post("/v1/games", json={"game": "jolly-cargo", "seats": 2})
        assert r.status_code == 201, r.text
        r = client.get(f"/v1/games/{r.json()['id']}/events", params={"after": after})
        assert r.status_code == 400 and r.json()["code"] == "request.invalid", r.text
        r = client.get(f"/v1/games/{r.url.path.split('/')[3]}/events?after=2147483647")
        assert r.status_code == 200 and r.json()["events"] == [], r.text


def test_replay_and_dispute_file_past_the_last_event_are_404_with_their_codes(
    server: ServerProcess,
) -> None:
    """``/replay/{n}`` and ``/audit/{n}`` for an event the game does not have: 404 with the
    codes they had before the typed errors (``replay.no_such_event``,
    ``audit.no_such_event``), not ``game.not_found``; a game that does not exist is
    ``game.not_found`` on both."""

    async def run() -> None:
        async with server.async_client() as client:
            created = await create_started(client)
            gid, token = created["id"], tokens_of(created)[0]
            version = (await client.get(f"/v1/games/{gid}", headers=auth(token))).json()["version"]
            for path, code in (
                ("replay", "replay.no_such_event"),
                ("audit", "audit.no_such_event"),
            ):
                for n in (0, version + 1):
                    r = await client.get(f"/v1/games/{gid}/{path}/{n}", headers=auth(token))
                    assert_problem(r, 404, code)
                ok = await client.get(f"/v1/games/{gid}/{path}/{version}", headers=auth(token))
                assert ok.status_code == 200, ok.text
                missing = f"/v1/games/00000000-0000-4000-8000-000000000000/{path}/1"
                assert_problem(await client.get(missing), 404, "game.not_found")

    asyncio.run(run())
