"""A 4-player Empire Builder game over HTTP with the online version's extras: changed terms,
borrowing (announced to every player), a flood drawn in a trade-in (the flooded river refuses
rebuilding), a survey, then random play to the end; replayed and audited clean."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest

from domain.empire_builder.board import MAP
from domain.empire_builder.cards import EVENTS
from domain.platform.table import fold_stream
from domain.registry import get_game

from .apihelp import assert_problem, auth, check_replay_line, pg
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]
GAME = "empire-builder"
FLOOD = next(e for e in EVENTS if e.name == "Mississippi flood")
AREAS = frozenset().union(*(e.area for e in EVENTS))


def river_edge() -> tuple[int, int, int]:
    for key in sorted(FLOOD.edges):
        a, b = divmod(key, 4096)
        for n in sorted(MAP.adjacent[a]):
            if (MAP.adjacent[a][n] == 0 and all(MAP.city_at[m] is None for m in (n, a, b))
                    and not {n, a, b} & AREAS):
                return n, a, b
    raise LookupError


def test_four_players_terms_borrowing_flood_trade_in_replayed_and_audited(
    server: ServerProcess,
) -> None:
    asyncio.run(_play(server))


async def _play(server: ServerProcess) -> None:
    n, a, b = river_edge()
    centre = {name: MAP.cities[name].mileposts[0] for name in ("Los Angeles", "Seattle",
                                                               "Toronto", "New York")}
    position = {
        "players": [
            {"cards": [0, 1, 2], "train": centre["Los Angeles"], "turns": 3},
            {"cards": [3, 4, 5], "train": centre["Seattle"], "turns": 3,
             "track": [[n, a, b]]},
            {"cards": [6, 7, 8], "train": centre["Toronto"], "turns": 3},
            {"cards": [9, 10, 11], "train": centre["New York"], "turns": 3},
        ],
        # the flood is the deck's only card: the first draw; then the discards are the deck
        "deck": [FLOOD.id],
        "discard": list(range(12, 120)),
        "options": {"money_to_win": 150, "majors_to_win": 3, "turn_limit": 3,
                    "borrowing": True},
    }
    rng = random.Random(4)
    async with server.async_client() as client:
        r = await client.post("/v1/games", json={
            "game": GAME, "seats": 4, "players": ["ann", "bob", "cy", "dee"],
            "invited": ["ann", "bob", "cy", "dee"], "position": position})
        assert r.status_code == 201, r.text
        created: dict[str, Any] = r.json()
        base = f"/v1/games/{created['id']}"
        tokens = [s["token"] for s in created["seats"]]
        commands = 0

        async def send(seat: int, command: dict[str, Any]) -> dict[str, Any]:
            nonlocal commands
            r = await client.post(base + "/commands", headers=auth(tokens[seat]),
                                  json={"command": command})
            assert r.status_code == 200, r.text
            commands += 1
            body: dict[str, Any] = r.json()
            return body

        doc = (await client.get(base)).json()
        assert doc["view"]["options"]["money_to_win"] == 150 and doc["to_act"] == [0]
        # borrowing: announced to every player (a public event), twice owed
        await send(0, {"type": "borrow", "amount": 10})
        seen = (await client.get(base + "/events", headers=auth(tokens[2]))).json()
        events = seen["events"] if isinstance(seen, dict) else seen
        assert any(e.get("type") == "borrowed" or e.get("data", {}).get("type") == "borrowed"
                   for e in events)
        doc = (await client.get(base, headers=auth(tokens[3]))).json()
        assert doc["view"]["players"][0]["money"] == 70 and doc["view"]["players"][0]["debt"] == 20
        # a trade-in draws the flood (the only card left but the discards): seat 1's bridge goes
        await send(0, {"type": "trade_in"})
        doc = (await client.get(base)).json()
        assert doc["view"]["effects"][0]["river"] == "Mississippi"
        assert [a, b] not in doc["view"]["tracks"][1] and [min(n, a), max(n, a)] in \
            doc["view"]["tracks"][1]
        assert doc["to_act"] == [1]
        # seat 1 surveys the rebuild and is told why not; the build is refused the same way
        r = await client.post(base + "/queries", headers=auth(tokens[1]),
                              json={"query": {"type": "survey", "path": [a, b]}})
        assert r.json()["answer"]["problem"]["code"] == "rule.flooded"
        assert_problem(await client.post(base + "/commands", headers=auth(tokens[1]),
                                         json={"command": {"type": "build", "path": [a, b]}}),
                       422, "rule.flooded")
        await send(1, {"type": "choose_face", "face": "banker"})
        # then random play to the turn limit
        while True:
            doc = (await client.get(base)).json()
            if doc["status"] == "finished":
                break
            seat = doc["to_act"][0]
            legal = (await client.get(base + "/legal", headers=auth(tokens[seat]))).json()
            await send(seat, rng.choice(legal["commands"]))
            assert commands < 3000, "the game does not end"
        version = doc["version"]
        audit = (await client.get(base + "/audit")).json()
        assert audit["ok"], audit["problems"]
        assert audit["adjudication"]["commands"] == commands
        lines = (await client.get(base + "/replay")).text.splitlines()
        assert len(lines) == version
        async with pg(server.pg_dsn) as store:
            stored = await store.read(created["id"])
            assert any(e.type == "event_card_drawn" for e in stored)
            table = None
            for k, (line, event) in enumerate(zip(lines, stored, strict=True), start=1):
                table = fold_stream(table, [event], created["id"])
                check_replay_line(json.loads(line), k, version, table)
        assert table is not None and get_game(GAME).outcome(table.state) is not None
