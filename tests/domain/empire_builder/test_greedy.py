"""The scripted greedy bot: it only sends commands the rules accept, it delivers, and it beats
the random bot (printed; the count of wins is asserted, nothing is timed)."""

from __future__ import annotations

from typing import Any

import pytest

from domain.empire_builder import EMPIRE_BUILDER
from domain.empire_builder import events as ev
from domain.empire_builder.commands import EndTurn
from domain.empire_builder.greedy import GreedyBot
from domain.empire_builder.options import Options
from domain.kernel import LocalGame, Rng

AnyGame = LocalGame[Any, Any, Any, Any, Any]


def duel(game: int, turns: int, idle_opponent: bool = False) -> tuple[AnyGame, int]:
    """Greedy (seat ``game % 2``) against the random bot (or one that only ends its turns)."""
    seed = game.to_bytes(4, "big") * 8
    table: AnyGame = LocalGame.new(EMPIRE_BUILDER, seed, 2, Options(turn_limit=turns))
    greedy_seat = game % 2
    bot, other = GreedyBot(), Rng(seed, 0)
    while EMPIRE_BUILDER.to_act(table.state):
        s = EMPIRE_BUILDER.to_act(table.state)[0]  # a lost load's chooser may wait too
        if s == greedy_seat:
            table.submit(s, bot.choose(table.state, s))  # a refusal fails the test
        elif idle_opponent:
            legal = EMPIRE_BUILDER.legal(table.state, s)
            table.submit(s, EndTurn() if EndTurn() in legal else legal[0])
        else:
            table.submit(s, other.choice(EMPIRE_BUILDER.legal(table.state, s)))
    return table, greedy_seat


def test_the_greedy_bot_builds_runs_and_delivers() -> None:
    table, me = duel(1, 20, idle_opponent=True)
    delivered = [e for e in table.events if isinstance(e, ev.LoadDelivered) and e.seat == me]
    assert delivered
    assert any(isinstance(e, ev.TrackBuilt) and e.seat == me for e in table.events)
    assert table.state.players[me].money > 0


@pytest.mark.slow
def test_the_greedy_bot_beats_the_random_bot_in_most_of_50_games() -> None:
    wins = 0
    for game in range(50):
        table, me = duel(game, 30)
        outcome = EMPIRE_BUILDER.outcome(table.state)
        assert outcome is not None
        wins += outcome.winners == [me]
    print(f"\nEmpire Builder: the greedy bot won {wins} of 50 two-player games against the random"
          " bot (30 turns each, the richest wins at the turn limit)")
    assert wins > 25
