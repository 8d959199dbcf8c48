"""Attacks of an independent reviewer (branch r1, second round), each kept as a test."""

from __future__ import annotations

import asyncio
import re
import uuid
from typing import Any
from urllib.parse import quote

import pytest
from redis.asyncio import Redis

from projections.projector import Projector
from projections.store import MemoryStore
from service.application.bodies import CommandBody, CreateGame
from service.application.gameplay import Manifest
from service.application.play import _Stale
from service.application.queries import QueryBody
from service.audit.receipts import load_signer
from service.eventstore.migrate import migrate
from service.problems import Problem

from .apihelp import GAME, assert_problem, auth, pg
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]


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
    assert keys and all(canonical in k for k in keys), keys  # no copy under another spelling


async def _keys(server: ServerProcess) -> list[str]:
    redis = Redis.from_url(server.redis_url)
    try:
        return [k.decode() async for k in redis.scan_iter(match=f"{server.prefix}:*")]
    finally:
        await redis.aclose()


@pytest.mark.own_server  # reads every route's metric labels
def test_metrics_labels_are_routes_not_paths(server: ServerProcess) -> None:
    """The request metrics are labelled by route: a client sending many paths (game ids,
    numbers, unknown games, unrouted paths) adds no label of its own — each label is a
    server memory cell for as long as the process lives."""
    with server.client() as client:
        created = client.post(
            "/v1/games", json={"game": GAME, "seats": 2, "players": ["a", "b"]}
        ).json()
        game_id = created["id"]
        for n in range(1, 4):
            client.get(f"/v1/games/{game_id}/replay/{n}")
        for i in range(20):
            client.get(f"/v1/games/{uuid.uuid4()}")  # 404: unknown games
            client.get(f"/v1/games/nothing-{i}/legal")  # routed, then 404: not a game id
            client.get(f"/v1/rules/nothing-{i}/assets/map")  # routed, then 404: no such game
            client.get(f"/v1/nothing-{i}")  # not routed
        metrics = client.get("/metrics").text
    routes = set(re.findall(r'manifest_http_requests_total\{[^}]*route="([^"]*)"', metrics))
    assert "/v1/games/{id}/replay/{n}" in routes and "/v1/games/{id}" in routes, routes
    assert not any(game_id in r or "nothing" in r for r in routes), routes
    assert len(routes) < 10, routes


def test_a_query_answers_on_the_stored_state_not_a_stale_cached_one(fresh_database: str) -> None:
    """Two instances serve one game. Instance A answers a query (and keeps the table), B
    records a move; A's next answer must be on the state after that move — its version the
    stored one — not on the table A had cached (a view older than an acknowledged move)."""

    async def run() -> None:
        await migrate(fresh_database)
        async with pg(fresh_database) as events:
            signer = await load_signer(events._pool)

            def instance() -> Manifest:
                reader = lambda g, after: events.read(g, after=after)  # noqa: E731
                return Manifest(events, Projector(MemoryStore(), reader), signer)

            a, b = instance(), instance()
            created = await a.create(
                CreateGame(game="empire-builder", seats=2, players=["ann", "bob"])
            )
            me = created.to_act[0]
            token = created.seats[me].token
            plan = QueryBody(query={"type": "plan", "to": "Denver"})
            before = await a.query(created.id, token, plan)
            assert before.version == created.version
            path = before.answer["path"]
            problem = before.answer["problem"]
            head = path if problem is None else path[: problem["step"]]
            survey = await b.query(created.id, token, QueryBody({"type": "survey", "path": head}))
            build = {"type": "build", "path": head, "cost": survey.answer["cost"]}
            moved = await b.command(created.id, token, CommandBody(build), None)
            assert moved.version > created.version
            after = await a.query(created.id, token, plan)
            assert after.version == moved.version

    asyncio.run(run())


def test_a_command_that_loses_every_race_is_a_503_with_retry_after(fresh_database: str) -> None:
    """A command re-decided because its game moved on, every time, ends in 503
    ``version.contention`` — with ``Retry-After``, as every 503 (it had none), and nothing
    recorded. The races are forced: each decision finds the game moved (the state it read is
    dropped and read again from PostgreSQL, as after a real lost race)."""

    class Racing(Manifest):
        async def _decide_and_append(self, *args: object, **kwargs: object) -> Any:
            self.tries += 1
            raise _Stale

    async def run() -> None:
        await migrate(fresh_database)
        async with pg(fresh_database) as events:
            reader = lambda g, after: events.read(g, after=after)  # noqa: E731
            manifest = Racing(
                events, Projector(MemoryStore(), reader), await load_signer(events._pool)
            )
            manifest.tries = 0
            created = await manifest.create(CreateGame(game=GAME, seats=2, players=["a", "b"]))
            token = created.seats[created.to_act[0]].token
            with pytest.raises(Problem) as caught:
                await manifest.command(created.id, token, CommandBody({"type": "end_turn"}), "k1")
            problem = caught.value
            assert (problem.status, problem.code) == (503, "version.contention")
            assert problem.headers["Retry-After"] == str(manifest.faults.retry_after)
            assert manifest.tries > 1  # re-decided, not refused at once
            row = await events.get_game(created.id)
            assert row is not None and row.version == created.version  # nothing recorded

    asyncio.run(run())
