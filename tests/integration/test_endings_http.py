"""Resign and abort over HTTP, for each game (docs/api.md "Ending a game"): a resignation out
of turn ends a two-seat game with ``result.reason`` ``resigned`` and a clean audit; an abort
before every seat has moved ends it with no result and a clean audit; abort after the first
moves is ``rule.abort_too_late``; ``/legal`` lists them in ``endings`` exactly when allowed; and
a resignation racing a move at the same version ends with exactly one outcome."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from litestar.testing import AsyncTestClient

from domain.registry import get_game
from service.http.app import create_app
from service.settings import Settings

pytestmark = [pytest.mark.integration]

GAMES = ["jolly-cargo", "cargo-empire", "empire-builder", "curious-cargo"]
RESIGN = {"type": "resign"}
ABORT = {"type": "abort"}


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def options_of(game: str) -> dict[str, Any]:
    if game == "jolly-cargo":
        return {"crate_placement": "random"}
    return get_game(game).bot_options or {}


class Client:
    def __init__(self, client: httpx.AsyncClient, game: str) -> None:
        self.client, self.game = client, game

    async def new(self) -> tuple[str, list[str]]:
        r = await self.client.post(
            "/v1/games",
            json={"game": self.game, "seats": 2, "options": options_of(self.game),
                  "players": ["ann", "bob"]},
        )  # fmt: skip
        assert r.status_code == 201, r.text
        created = r.json()
        return f"/v1/games/{created['id']}", [s["token"] for s in created["seats"]]

    async def doc(self, base: str) -> dict[str, Any]:
        r = await self.client.get(base)
        assert r.status_code == 200, r.text
        body: dict[str, Any] = r.json()
        return body

    async def legal(self, base: str, token: str) -> dict[str, Any]:
        r = await self.client.get(base + "/legal", headers=auth(token))
        assert r.status_code == 200, r.text
        body: dict[str, Any] = r.json()
        return body

    async def send(
        self, base: str, token: str, command: dict[str, Any], version: int | None = None
    ) -> httpx.Response:
        body: dict[str, Any] = {"command": command}
        if version is not None:
            body["expected_version"] = version
        return await self.client.post(base + "/commands", json=body, headers=auth(token))

    async def audit_ok(self, base: str) -> None:
        r = await self.client.get(base + "/audit")
        assert r.status_code == 200, r.text
        report = r.json()
        assert report["ok"] is True, report

    async def first_moves(self, base: str, tokens: list[str]) -> None:
        """The seats to act send their first listed command until abort is no longer listed."""
        for _ in range(50):
            doc = await self.doc(base)
            seat = doc["to_act"][0]
            legal = await self.legal(base, tokens[seat])
            if ABORT not in legal["endings"]:
                return
            r = await self.send(base, tokens[seat], legal["commands"][0], legal["version"])
            assert r.status_code == 200, r.text
        raise AssertionError("every seat should have moved by now")


@pytest.mark.parametrize("game", GAMES)
def test_resign_abort_and_their_refusals_over_http(
    game: str, fresh_database: str, redis_url: str
) -> None:
    asyncio.run(_endings(game, fresh_database, redis_url))


async def _endings(game: str, fresh_database: str, redis_url: str) -> None:
    settings = Settings(
        pg_dsn=fresh_database, redis_url=redis_url, redis_prefix=f"end40{game}:", access_log=False
    )
    async with AsyncTestClient(app=create_app(settings)) as raw:
        c = Client(raw, game)

        # --- resign, by a seat not to act ---------------------------------------------------
        base, tokens = await c.new()
        doc = await c.doc(base)
        idle = next((s for s in (0, 1) if s not in doc["to_act"]), 1)
        legal = await c.legal(base, tokens[idle])
        assert legal["endings"] == [RESIGN, ABORT]
        r = await c.send(base, tokens[idle], RESIGN)
        assert r.status_code == 200, r.text
        doc = await c.doc(base)
        assert doc["status"] == "finished" and doc["to_act"] == []
        assert doc["result"]["reason"] == "resigned"
        assert doc["result"]["winners"] == [1 - idle]
        assert doc["result"]["details"] == {"resigned": [idle]}
        assert "endings" not in await c.legal(base, tokens[1 - idle])
        events = (await raw.get(base + "/events")).json()["events"]
        resigned = [e for e in events if e["type"] == "game.resigned"]
        assert [(e["seat"], e["data"]) for e in resigned] == [
            (idle, {"type": "game.resigned", "seat": idle})
        ]
        assert events[-1]["type"] == "seed.revealed"
        replay = (await raw.get(base + f"/replay/{doc['version']}")).json()
        assert replay["result"]["reason"] == "resigned"
        await c.audit_ok(base)
        # the resignation's dispute file re-runs it: sent out of turn, yet every check holds
        dispute = (await raw.get(base + f"/audit/{resigned[0]['version']}")).json()
        checks = {k["check"]: k["ok"] for k in dispute["checks"]}
        assert {"to_act", "rules", "listed_as_legal"} <= checks.keys(), checks
        assert all(checks.values()), dispute["checks"]
        r = await c.send(base, tokens[1 - idle], RESIGN)
        assert r.status_code == 409 and r.json()["code"] == "game.finished", r.text

        # --- abort, before every seat moved ------------------------------------------------
        base, tokens = await c.new()
        doc = await c.doc(base)
        r = await c.send(base, tokens[doc["to_act"][0]], ABORT, doc["version"])
        assert r.status_code == 200, r.text
        doc = await c.doc(base)
        assert doc["status"] == "finished"
        assert doc["result"] == {"scores": [], "winners": [], "details": {}, "reason": "aborted"}
        await c.audit_ok(base)

        # --- abort after the first moves: refused; resign still listed ----------------------
        base, tokens = await c.new()
        await c.first_moves(base, tokens)
        for token in tokens:
            assert (await c.legal(base, token))["endings"] == [RESIGN]
        r = await c.send(base, tokens[0], ABORT)
        assert r.status_code == 422 and r.json()["code"] == "rule.abort_too_late", r.text
        assert (await c.doc(base))["status"] == "active"

        # --- the race: a resignation against a move at the same version ---------------------
        doc = await c.doc(base)
        mover = doc["to_act"][0]
        legal = await c.legal(base, tokens[mover])
        version = legal["version"]
        move, resign = await asyncio.gather(
            c.send(base, tokens[mover], legal["commands"][0], version),
            c.send(base, tokens[1 - mover], RESIGN, version),
        )
        codes = sorted([move.status_code, resign.status_code])
        assert codes == [200, 409], (move.text, resign.text)
        loser = move if move.status_code == 409 else resign
        assert loser.json()["code"] == "version.conflict", loser.text
        doc = await c.doc(base)
        if resign.status_code == 200:
            assert doc["status"] == "finished" and doc["result"]["winners"] == [mover]
        else:
            assert doc["status"] in ("active", "finished") and doc["version"] > version
            assert doc["result"] is None or doc["result"].get("reason") is None
        events = (await raw.get(base + "/events")).json()["events"]
        assert len([e for e in events if e["type"] == "game.resigned"]) == (
            1 if resign.status_code == 200 else 0
        )
        await c.audit_ok(base) if doc["status"] == "finished" else None
