"""The scripted greedy bot: it only sends commands the rules accept (a refusal fails the test),
and two of them play the standard terms ($250M, five majors) to a real win: the endings, the
turns they take, the deliveries of every seat and the winner's money and majors are asserted
(nothing is timed)."""

from __future__ import annotations

import statistics
from typing import Any

import pytest

from domain.empire_builder import EMPIRE_BUILDER
from domain.empire_builder import events as ev
from domain.empire_builder.board import MAP, edge_key
from domain.empire_builder.commands import EndTurn
from domain.empire_builder.greedy import GreedyBot
from domain.empire_builder.options import Options
from domain.empire_builder.rules import connected_majors
from domain.kernel import LocalGame, Rng

from .support import at, centre

AnyGame = LocalGame[Any, Any, Any, Any, Any]
#: a safety net: a greedy game that has not been won by then has failed
SAFETY = 300


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


def greedy_game(game: int, seats: int = 2) -> AnyGame:
    """Greedy bots in every seat, on the standard terms (a turn limit only as a safety net)."""
    seed = game.to_bytes(4, "big") * 8
    table: AnyGame = LocalGame.new(EMPIRE_BUILDER, seed, seats, Options(turn_limit=SAFETY))
    bots = [GreedyBot() for _ in range(seats)]
    while EMPIRE_BUILDER.to_act(table.state):
        s = EMPIRE_BUILDER.to_act(table.state)[0]
        table.submit(s, bots[s].choose(table.state, s))  # a refusal fails the test
    return table


def deliveries(table: AnyGame) -> list[int]:
    return [sum(1 for e in table.events if isinstance(e, ev.LoadDelivered) and e.seat == s)
            for s in range(table.state.seats)]


def longest_dry_spell(table: AnyGame, seat: int) -> int:
    """The most turns of ``seat`` in a row, after its building turns, without a delivery."""
    turns, last, worst = 0, 3, 0
    for e in table.events:
        if isinstance(e, (ev.TurnEnded, ev.TurnLost)) and e.seat == seat:
            turns += 1
        elif isinstance(e, ev.LoadDelivered) and e.seat == seat:
            worst, last = max(worst, turns - last), turns
    return max(worst, turns - last)


def network(table: AnyGame, seat: int, start: int) -> set[int]:
    """The mileposts a train at ``start`` reaches over ``seat``'s track and the free zones."""
    seen, todo = {start}, [start]
    while todo:
        m = todo.pop()
        for n in (*MAP.inside[m], *MAP.adjacent[m]):
            if n not in seen and (n in MAP.inside[m]
                                  or table.state.track.get(edge_key(m, n)) == seat):
                seen.add(n)
                todo.append(n)
    return seen


def assert_won_by_the_rules(table: AnyGame) -> None:
    state = table.state
    outcome = EMPIRE_BUILDER.outcome(state)
    assert outcome is not None and outcome.details["reason"] == "won", state.reason
    (winner,) = outcome.winners
    assert state.worth(winner) >= state.options.money_to_win
    assert connected_majors(state, winner) >= state.options.majors_to_win
    assert outcome.scores == [state.worth(s) for s in range(state.seats)]


def test_the_greedy_bot_builds_runs_and_delivers() -> None:
    table, me = duel(1, 20, idle_opponent=True)
    delivered = [e for e in table.events if isinstance(e, ev.LoadDelivered) and e.seat == me]
    assert delivered
    assert any(isinstance(e, ev.TrackBuilt) and e.seat == me for e in table.events)
    assert table.state.players[me].money > 0


def test_two_greedy_bots_play_a_standard_game_to_a_win_and_both_deliver() -> None:
    table = greedy_game(0)
    assert_won_by_the_rules(table)
    assert max(p.turns for p in table.state.players) <= 150
    assert min(deliveries(table)) > 3, deliveries(table)


def test_the_bot_builds_from_where_its_train_is() -> None:
    # seat 0's train stands in Denver on a stub of its own track, with $60M; seat 1 only ends
    # its turns. Every section it builds joins the train's network, and the train delivers.
    # (The old bot built a plan's route out of the supply city when that was a major, away from
    # its train, which then sat idle for the rest of the game.)
    denver = centre("Denver")
    stub = [denver, min(MAP.adjacent[denver])]
    t = at({"players": [{"train": denver, "money": 60, "track": [stub]},
                        {"train": centre("Atlanta")}]})
    bot = GreedyBot()
    for _ in range(25):  # turns of seat 0
        while t.state.current() == 0:
            t.submit(0, bot.choose(t.state, 0))  # a refusal fails the test
        t.submit(1, EndTurn())
    train = t.state.players[0].train
    assert train is not None
    reach = network(t, 0, train)
    built = [e for e in t.events if isinstance(e, ev.TrackBuilt) and e.seat == 0]
    assert built and all(set(e.path) <= reach for e in built), "track off the train's network"
    assert deliveries(t)[0] >= 2


@pytest.mark.slow
def test_two_greedy_bots_win_standard_games_in_150_turns_median_and_no_seat_stalls() -> None:
    games = [greedy_game(g) for g in range(20)]
    endings = [t.state.reason for t in games]
    turns = [max(p.turns for p in t.state.players) for t in games]
    counts = [d for t in games for d in deliveries(t)]
    spells = [longest_dry_spell(t, s) for t in games for s in range(2)]
    print(f"\nEmpire Builder, greedy against greedy, 20 two-player games on the standard terms:"
          f" {endings.count('won')} won, turns median {statistics.median(turns)} (max"
          f" {max(turns)}), deliveries per seat {min(counts)}–{max(counts)}, longest dry spell"
          f" {max(spells)} turns")
    for table in games:
        assert_won_by_the_rules(table)
    assert statistics.median(turns) <= 150
    assert min(counts) >= 5, "a seat stalled"
    assert max(spells) <= 40, "a seat went 40 turns without a delivery"


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


@pytest.mark.slow
def test_greedy_bots_in_every_seat_count_finish_without_a_refusal() -> None:
    for seats in range(3, 7):
        table = greedy_game(seats, seats)
        outcome = EMPIRE_BUILDER.outcome(table.state)
        assert outcome is not None and outcome.details["reason"] == "won", (seats, outcome)
        assert_won_by_the_rules(table)
