"""Recorded games decide and fold as they did when recorded: every command of
``data/recorded_games.json`` (see ``recorded.py``) emits events with the recorded digest, and the
final state is the recorded one. Stored games are re-adjudicated by the audit, so a refactoring
of a game's ``decide`` that changed a single emitted event would fail here."""

from __future__ import annotations

import json
from typing import Any

import pytest

from domain.kernel import LocalGame
from domain.registry import get_game

from .recorded import FIXTURE, digest

GAMES: list[Any] = json.loads(FIXTURE.read_text())


def replay(recorded: Any) -> None:
    """Replay one recorded game, failing at the first command whose events differ."""
    game = get_game(recorded["game"])
    options = game.decode_options(recorded["options"])
    table = LocalGame.new(game, bytes.fromhex(recorded["seed"]), recorded["seats"], options)
    assert digest(table.events) == recorded["opening"], "the opening events differ"
    for i, (seat, raw, expected) in enumerate(recorded["commands"]):
        given, before = table.state, digest(table.state)
        events = table.submit(seat, game.decode_command(raw))
        assert digest(events) == expected, f"command {i} ({raw}) emitted other events"
        assert digest(given) == before, f"deciding command {i} changed the state it was given"
    assert len(table.events) == recorded["events"]
    assert digest(table.state) == recorded["state"], "the final state differs"
    assert game.outcome(table.state) is not None, "a recorded game is played to its end"


def test_every_game_and_its_endings_are_recorded() -> None:
    assert {g["game"] for g in GAMES} == {
        "jolly-cargo",
        "cargo-empire",
        "empire-builder",
        "curious-cargo",
    }


@pytest.mark.parametrize(
    "recorded", GAMES, ids=[f"{g['game']}-{g['seats']}-{i}" for i, g in enumerate(GAMES)]
)
def test_recorded_game_replays_to_the_same_events(recorded: Any) -> None:
    replay(recorded)
