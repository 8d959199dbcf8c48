"""Positions are hostile input (issue 35), through the API: a number outside its field's
documented range is 422 ``position.out_of_range`` naming the field, and nothing is written.
The issue's two attacks: an Empire Builder position with every seat's ``skip`` at 150,000 (one
``end_turn`` then emitted 300,000 events on the event loop: 19 s, 656 MB), and one whose money
had 4,300 digits (a ``borrow`` of 1 then made it unencodable, for good). Against the real
server process; every bound of every game is tried in ``tests/domain/test_position_bounds.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from .apihelp import assert_problem, pg
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]

#: (game, position, the field named, its bound)
ATTACKS: list[tuple[str, dict[str, Any], str, dict[str, int]]] = [
    ("empire-builder",
     {"players": [{"cards": [0, 1, 2], "skip": 150_000}, {"cards": [3, 4, 5], "skip": 150_000}]},
     "players[0].skip", {"maximum": 3}),
    ("empire-builder",
     {"players": [{"cards": [0, 1, 2], "money": int("9" * 4300)}, {"cards": [3, 4, 5]}]},
     "players[0].money", {"maximum": 1_000_000}),
    ("empire-builder",
     {"players": [{"cards": [0, 1, 2]}, {"cards": [3, 4, 5]}], "options": {"turn_limit": 2**63}},
     "options.turn_limit", {"maximum": 100_000}),
    ("cargo-empire", {"players": [{"deliveries": -1}, {}]},
     "players[0].deliveries", {"minimum": 0}),
    ("jolly-cargo",
     {"players": [{"colour": "red", "score": 2**64}, {"colour": "green"}], "crates": {},
      "workers": {}},
     "players[0].score", {"maximum": 63}),
    ("curious-cargo", {"players": [{}, {}], "round": 10**30}, "round", {"maximum": 1000}),
]  # fmt: skip


def test_out_of_range_positions_are_422_naming_the_field_and_write_nothing(
    server: ServerProcess,
) -> None:
    asyncio.run(_attacks(server))


async def _attacks(server: ServerProcess) -> None:
    async with pg(server.pg_dsn) as store, server.async_client() as client:
        pool: Any = store._pool
        before = (await pool.fetchval("SELECT count(*) FROM games"),
                  await pool.fetchval("SELECT count(*) FROM events"))  # fmt: skip
        for game, position, field, bound in ATTACKS:
            response = await client.post(
                "/v1/games",
                json={"game": game, "seats": len(position["players"]),
                      "players": [f"p{i}" for i in range(len(position["players"]))],
                      "position": position},
            )  # fmt: skip
            body = assert_problem(response, 422, "position.out_of_range")
            assert body["field"] == field, body
            assert {k: body[k] for k in bound} == bound, body
            assert field in body["detail"], body
        after = (await pool.fetchval("SELECT count(*) FROM games"),
                 await pool.fetchval("SELECT count(*) FROM events"))  # fmt: skip
        assert after == before
