"""``POST /v1/games/{id}/queries`` over HTTP: Empire Builder's survey and planner answered from
the current state with nothing appended; hostile queries refused with problem JSON."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from domain.empire_builder.board import MAP

from .apihelp import assert_problem, auth
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]
GAME = "empire-builder"


def test_queries_answer_and_never_append(server: ServerProcess) -> None:
    asyncio.run(_queries(server))


async def _queries(server: ServerProcess) -> None:
    async with server.async_client() as client:
        r = await client.post("/v1/games", json={"game": GAME, "seats": 2,
                                                 "players": ["ann", "bob"]})
        assert r.status_code == 201, r.text
        created: dict[str, Any] = r.json()
        base = f"/v1/games/{created['id']}"
        tokens = [s["token"] for s in created["seats"]]
        doc = (await client.get(base)).json()
        version, me = doc["version"], doc["to_act"][0]

        async def ask(query: Any, token: str | None) -> Any:
            return await client.post(base + "/queries", headers=auth(token),
                                     json={"query": query})

        r = await ask({"type": "plan", "to": "Denver"}, tokens[me])
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["version"] == version
        plan = body["answer"]
        assert MAP.city_at[plan["path"][-1]] == "Denver"
        # a path over the turn's $20M: its affordable head
        assert plan["problem"] is None or plan["problem"]["code"] == "rule.turn_limit"
        head = plan["path"] if plan["problem"] is None else plan["path"][: plan["problem"]["step"]]
        assert len(head) >= 2
        r = await ask({"type": "survey", "path": head}, tokens[me])
        survey = r.json()["answer"]
        assert survey["problem"] is None
        # the other seat asks as at the start of its own turn
        r = await ask({"type": "survey", "path": head}, tokens[1 - me])
        assert r.status_code == 200 and r.json()["answer"]["cost"] == survey["cost"]
        assert (await client.get(base)).json()["version"] == version  # nothing appended
        # the survey's cost is what the build is charged
        r = await client.post(base + "/commands", headers=auth(tokens[me]),
                              json={"command": {"type": "build", "path": head,
                                                "cost": survey["cost"]}})
        assert r.status_code == 200, r.text
        after = (await client.get(base)).json()
        assert after["view"]["players"][me]["money"] == 60 - survey["cost"]
        # hostile queries
        assert_problem(await ask({"type": "telepathy"}, tokens[me]), 422, "query.invalid")
        assert_problem(await ask({"type": "survey", "path": "far"}, tokens[me]), 422,
                       "query.invalid")
        assert_problem(await ask({"type": "plan", "to": "Atlantis"}, tokens[me]), 422,
                       "rule.no_such_city")
        assert_problem(await ask({"type": "plan", "to": "Denver"}, None), 422,
                       "query.needs_seat")
        assert_problem(await ask({"type": "plan", "to": "Denver"}, "not-a-token"), 401)
        json_body = {**auth(tokens[me]), "content-type": "application/json"}
        assert_problem(await client.post(base + "/queries", headers=json_body,
                                         content=b"{not json"), 400)
        assert_problem(await client.post(base + "/queries", headers=auth(tokens[me]),
                                         json={"question": {}}), 400)
        assert_problem(await client.post("/v1/games/nope/queries", json={"query": {}}), 404)
        assert (await client.get(base)).json()["version"] == after["version"]
        # a game without queries says so; an open game has nothing to ask about
        r = await client.post("/v1/games", json={"game": "cargo-empire", "seats": 2,
                                                 "players": ["a", "b"]})
        other = r.json()
        assert_problem(await client.post(f"/v1/games/{other['id']}/queries",
                                         json={"query": {"type": "survey"}}), 422,
                       "query.unsupported")
        r = await client.post("/v1/games", json={"game": GAME, "seats": 2})
        opened = r.json()
        assert_problem(await client.post(f"/v1/games/{opened['id']}/queries",
                                         json={"query": {"type": "plan", "to": 1}}), 409,
                       "game.not_started")
