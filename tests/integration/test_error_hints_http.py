"""Errors that say what to do, over HTTP (issue 43): a command type or an option the game does
not have is answered with the valid ones and the nearest suggested; the problem's title fits
the request (a game's options are not "Unprocessable command")."""

from __future__ import annotations

import asyncio

import pytest

from .apihelp import assert_problem, auth, create_started, tokens_of
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]


def test_typos_are_answered_with_what_to_send(server: ServerProcess) -> None:
    asyncio.run(_typos(server))


async def _typos(server: ServerProcess) -> None:
    async with server.async_client() as client:
        created = await create_started(client)
        game_id, tokens = created["id"], tokens_of(created)
        seat = (await client.get(f"/v1/games/{game_id}")).json()["to_act"][0]
        r = await client.post(
            f"/v1/games/{game_id}/commands",
            json={"command": {"type": "place_wroker"}},
            headers=auth(tokens[seat]),
        )
        problem = assert_problem(r, 422, "command.invalid")
        assert problem["title"] == "Unprocessable command"
        assert problem["detail"].startswith(
            "unknown command type 'place_wroker' (did you mean 'place_worker'?); the valid types:"
        )
        assert "GET /v1/games/{id}/legal" in problem["detail"]

        r = await client.post(
            "/v1/games",
            json={"game": "jolly-cargo", "seats": 2, "options": {"crate_placment": "players"}},
        )
        problem = assert_problem(r, 422, "options.invalid")
        assert problem["title"] == "Invalid game options"
        assert "(did you mean 'crate_placement'?)" in problem["detail"]
        assert "the valid options: colours, crate_placement, fast_variant" in problem["detail"]

        r = await client.post("/v1/games", json={"game": "jolly-cargo", "seats": 9})
        problem = assert_problem(r, 422, "lobby.bad_seats")
        assert problem["title"] == "Invalid game settings"
