"""The answer to an accepted command says who acts next and, for the seat that sent it, its
legal commands now — so a client need not ask ``GET /legal`` while it keeps the turn."""

from __future__ import annotations

import asyncio
import random

import pytest

from .apihelp import auth, create_started, tokens_of
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]


def test_command_answer_carries_to_act_and_the_seats_legal_commands(
    server: ServerProcess,
) -> None:
    asyncio.run(_hints(server))


async def _hints(server: ServerProcess) -> None:
    rng = random.Random(5)
    async with server.async_client() as client:
        created = await create_started(client)
        base = f"/v1/games/{created['id']}"
        tokens = tokens_of(created)
        kept_turn = passed_turn = 0
        for _ in range(120):
            doc = (await client.get(base)).json()
            seat = doc["to_act"][0]
            legal = (await client.get(base + "/legal", headers=auth(tokens[seat]))).json()
            r = await client.post(
                base + "/commands",
                headers=auth(tokens[seat]),
                json={
                    "command": rng.choice(legal["commands"]),
                    "expected_version": legal["version"],
                },
            )
            assert r.status_code == 200, r.text
            answer = r.json()
            now = (await client.get(base)).json()
            assert answer["to_act"] == now["to_act"]
            mine = (await client.get(base + "/legal", headers=auth(tokens[seat]))).json()
            assert mine["version"] == answer["version"]
            assert answer["legal"] == mine["commands"]
            if seat in answer["to_act"]:
                assert answer["legal"], "a seat still to act has legal commands"
                kept_turn += 1
            else:
                assert answer["legal"] == []
                passed_turn += 1
        assert kept_turn and passed_turn  # both cases were seen
