"""The contract is as small as docs/adding-a-game.md says: a fifth game, defined here in a few
dozen lines (two seats, one command), registered, and played to its end over HTTP — the lobby,
``/legal`` lists, the kernel's common refusals, the replay and the audit — with nothing in
``service/`` or ``projections/`` told about it. The guide's example is this module's game, word
for word (the last test checks it)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from litestar.testing import AsyncTestClient

from domain import registry
from domain.kernel import (
    Decider,
    Folder,
    Game,
    Outcome,
    PositionForm,
    Presentation,
    Rng,
    RuleError,
)
from service.http.app import create_app
from service.settings import Settings

# --- the guide's example: docs/adding-a-game.md (with the domain.kernel import above) ------ #


class Options(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    target: int = 5  # the total that wins


class Add(msgspec.Struct, frozen=True, tag="add", tag_field="type", forbid_unknown_fields=True):
    n: int


class Started(msgspec.Struct, frozen=True, tag="started", tag_field="type"):
    target: int
    first: int
    total: int = 0


class Added(msgspec.Struct, frozen=True, tag="added", tag_field="type"):
    seat: int
    n: int


Event = Started | Added


class Position(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    target: int
    turn: int
    total: int


class State(msgspec.Struct):
    target: int
    turn: int  # the seat to act
    total: int = 0
    winner: int | None = None


def decide(state: State, seat: int, command: Add, rng: Rng) -> list[Event]:
    if command.n not in (1, 2):
        raise RuleError("rule.bad_number", "add 1 or 2")
    return [Added(seat, command.n)]


def outcome(state: State) -> Outcome | None:
    if state.winner is None:
        return None
    return Outcome(scores=[int(s == state.winner) for s in (0, 1)], winners=[state.winner])


def apply(event: Added, state: State) -> None:
    state.total += event.n
    state.turn = 1 - event.seat
    if state.total >= state.target:
        state.winner = event.seat


TINY: Game[State, Add, Event, Options, Position] = Game(
    id="tiny",
    title="Race to five",
    min_seats=2,
    max_seats=2,
    state_type=State,
    command_type=Add,
    event_type=Event,
    options_type=Options,
    seats=lambda state: 2,
    decider=Decider(
        start=lambda options, seats, rng: [Started(options.target, rng.below(2))],
        decide=decide,
        evolve=Folder(
            openings={Started: lambda e: State(e.target, e.first, e.total)},
            apply=apply,
            copy=lambda s: msgspec.structs.replace(s),
        ),
        legal=lambda state, seat: [Add(1), Add(2)] if state.turn == seat else [],
        to_act=lambda state: [] if state.winner is not None else [state.turn],
        outcome=outcome,
    ),
    presentation=Presentation(
        view_type=State,
        view=lambda state, viewer: state,
        event_view_type=Event,
        event_view=lambda event, viewer: event,
        position=PositionForm(
            type=Position,
            start=lambda p, rng: [Started(p.target, p.turn, p.total)],
            export=lambda s: Position(s.target, s.turn, s.total),
            seats=lambda p: 2,
        ),
    ),
)
# --- end of the guide's example -------------------------------------------------------------- #

pytestmark = [pytest.mark.integration]


@pytest.fixture
def tiny_registered() -> Iterator[None]:
    """TINY in the registry for this test only (the one line a game adds to
    ``domain/registry.py``, plus its edition)."""
    registry.GAMES[TINY.id] = TINY
    registry.EDITIONS[TINY.id] = {1: TINY}
    try:
        yield
    finally:
        del registry.GAMES[TINY.id], registry.EDITIONS[TINY.id]


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_a_tiny_game_plays_to_its_end_over_http(
    tiny_registered: None, fresh_database: str, redis_url: str
) -> None:
    asyncio.run(_play(fresh_database, redis_url))


async def _play(fresh_database: str, redis_url: str) -> None:
    settings = Settings(
        pg_dsn=fresh_database, redis_url=redis_url, redis_prefix="tiny37:", access_log=False
    )
    async with AsyncTestClient(app=create_app(settings)) as client:
        rules = (await client.get("/v1/rules")).json()
        assert "tiny" in [r["game"] for r in rules]
        r = await client.post("/v1/games", json={"game": "tiny", "seats": 2, "players": ["a", "b"]})
        assert r.status_code == 201, r.text
        created = r.json()
        base, tokens = f"/v1/games/{created['id']}", [s["token"] for s in created["seats"]]
        moves = 0
        while (doc := (await client.get(base)).json())["status"] == "active":
            seat = doc["to_act"][0]
            other = 1 - seat
            assert (await client.get(base + "/legal", headers=auth(tokens[other]))).json()[
                "commands"
            ] == []
            legal = (await client.get(base + "/legal", headers=auth(tokens[seat]))).json()
            assert legal["commands"] == [{"type": "add", "n": 1}, {"type": "add", "n": 2}]
            assert legal["complete"] is True
            # the kernel's refusal, which the tiny game never wrote
            command = {"command": legal["commands"][0]}
            r = await client.post(base + "/commands", json=command, headers=auth(tokens[other]))
            assert r.status_code == 422 and r.json()["code"] == "rule.not_your_turn", r.text
            three = {"command": {"type": "add", "n": 3}}
            r = await client.post(base + "/commands", json=three, headers=auth(tokens[seat]))
            assert r.status_code == 422 and r.json()["code"] == "rule.bad_number", r.text
            r = await client.post(
                base + "/commands",
                json={"command": legal["commands"][moves % 2], "expected_version": doc["version"]},
                headers=auth(tokens[seat]),
            )
            assert r.status_code == 200, r.text
            moves += 1
            assert moves < 10
        assert doc["status"] == "finished"
        assert doc["view"]["total"] >= 5 and doc["result"]["winners"] == [doc["view"]["winner"]]
        r = await client.post(
            base + "/commands", json={"command": {"type": "add", "n": 1}}, headers=auth(tokens[0])
        )
        assert r.status_code == 409 and r.json()["code"] == "game.finished", r.text

        events = (await client.get(base + "/events")).json()
        kinds = [e["type"] for e in events["events"]]
        assert kinds[0] == "lobby.created" and kinds.count("added") == moves
        told = [e["sentence"]["text"] for e in events["events"] if e["type"] == "added"]
        assert told[0] in ("a added 1", "b added 1"), told  # its catalogue, messages/en.po

        replay = await client.get(base + f"/replay/{doc['version']}")
        assert replay.status_code == 200, replay.text
        assert replay.json()["view"] == doc["view"]

        audit = await client.get(base + "/audit")
        assert audit.status_code == 200, audit.text
        report = audit.json()
        assert report["ok"] is True, report


def test_the_guide_shows_this_modules_game_word_for_word() -> None:
    guide = (Path(__file__).resolve().parents[2] / "docs" / "adding-a-game.md").read_text()
    shown = re.search(r"```python\n(.*?)```", guide, re.S)
    assert shown is not None, "docs/adding-a-game.md has no python example"
    source = Path(__file__).read_text()
    imports = re.search(r"from domain\.kernel import \(.*?\)\n", source, re.S)
    assert imports is not None
    example = source.split("# --- the guide's example")[1].split("# --- end of the guide's")[0]
    example = example.split("\n", 1)[1]
    assert shown.group(1).strip() == f"{imports.group(0)}\n{example.strip()}".strip()
