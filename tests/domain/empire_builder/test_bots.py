"""Random bots play whole games, 2 to 6 players, to their end without an error. Uniformly random
play spends its money on track and never wins, so bot games end by the ``turn_limit`` option
(docs/rules/empire-builder.md, "Turn limit")."""

from __future__ import annotations

import pytest

from domain.empire_builder import EMPIRE_BUILDER
from domain.empire_builder.options import Options
from domain.kernel import play_random_game


def _games(count: int, turn_limit: int) -> dict[str, int]:
    reasons: dict[str, int] = {}
    for i in range(count):
        seats = 2 + i % 5
        table, outcome = play_random_game(
            EMPIRE_BUILDER, i.to_bytes(2, "big") * 16, seats, Options(turn_limit=turn_limit)
        )
        assert outcome.winners and len(outcome.scores) == seats
        assert EMPIRE_BUILDER.fold(table.events) == table.state
        reasons[outcome.details["reason"]] = reasons.get(outcome.details["reason"], 0) + 1
    return reasons


def test_bot_games_finish() -> None:
    assert sum(_games(10, 8).values()) == 10


def test_the_kernel_bot_uses_the_games_bot_options() -> None:
    table, outcome = play_random_game(EMPIRE_BUILDER, bytes(32), 3)
    assert table.state.options.turn_limit == 25
    assert outcome.details["reason"] == "turn_limit"


@pytest.mark.slow
def test_five_hundred_bot_games_finish() -> None:
    reasons = _games(500, 6)
    print("\nEmpire Builder: 500 random bot games ended by", reasons)
    assert sum(reasons.values()) == 500
