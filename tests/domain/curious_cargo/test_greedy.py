"""The greedy bot (``domain/curious_cargo/greedy.py``) plays Curious Cargo to its real endings:
most games end by shipping or a star (the uniform random bot's all end by the empty bag), and
every final score is recomputed here from the state by the manual's table, independently of
``rules.score``. The quick run plays a few games; the slow suite 200 and prints the endings."""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any

import pytest

from domain.curious_cargo import CURIOUS_CARGO as G
from domain.curious_cargo import events as ev
from domain.curious_cargo.greedy import GreedyBot
from domain.curious_cargo.options import Options
from domain.curious_cargo.state import Player, State
from domain.kernel import LocalGame, Rng, play_bot_game
from tests.support.duels import duel_wins

#: The manual's and the components' numbers, written out again (docs/rules/curious-cargo.md).
SHIPPING_COLUMNS = [1, 2, 3, 5, 7, 10]
#: Goods shipped that end the game, by the shipping board side (two colours; D34: three).
GOAL = {2: 9, 3: 11}
RECEIVING_SLOTS = [1, 2, 4, 7]
TRACK_POINTS = [0, 0, 1, 1, 2, 2, 3, 3, 3, 4, 5]
REAL_ENDINGS = {"shipped", "star"}


def points(p: Player) -> int:
    total = 0
    for colour in p.shipped:  # red and teal, and purple in the 3-colour variant
        if p.shipped[colour]:
            total += SHIPPING_COLUMNS[p.shipped[colour] - 1]  # the rightmost emptied column
        if p.received[colour]:
            total += RECEIVING_SLOTS[p.received[colour] - 1]  # the rightmost filled slot
    emptied = min(p.shipped.values())  # complete columns: every good gone
    total += {5: 4, 6: 8}.get(emptied, 0)
    total += TRACK_POINTS[p.forklift]
    return total + p.construction + p.trucking + sum(p.splitters.values())


def star_count(p: Player) -> int:
    return sum(n == 4 for n in p.received.values()) + (p.forklift == 10)


def check_ending(table: LocalGame[Any, Any, Any, Any, Any]) -> list[str]:
    """The ending's triggers, each checked against the state, and the result against the rules."""
    s: State = table.state
    ended = [e for e in table.events if isinstance(e, ev.GameEnded)]
    assert len(ended) == 1 and s.step == "finished" and G.to_act(s) == []
    triggers = list(ended[0].triggers)
    holds = {
        "shipped": any(
            sum(p.shipped.values()) >= GOAL[s.options.colour_count()] for p in s.players
        ),
        "star": any(star_count(p) for p in s.players),
        "bag_empty": not s.bag,
        "deck_empty": not s.deck,
    }
    assert triggers == [t for t, held in holds.items() if held]
    assert all(p.construction <= 3 and p.trucking <= 3 and p.hand == [] for p in s.players)
    outcome = G.outcome(s)
    assert outcome is not None
    assert outcome.scores == [points(p) for p in s.players]
    eligible = [seat for seat, p in enumerate(s.players) if min(p.shipped.values()) >= 2]
    if len(eligible) < 2:
        assert outcome.winners == eligible
    else:

        def rank(seat: int) -> tuple[int, int, int, bool]:
            p = s.players[seat]
            return star_count(p), points(p), p.forklift, s.top == seat

        assert outcome.winners == [max(eligible, key=rank)]
    assert G.fold(table.events) == s
    return triggers


def greedy_games(count: int, tag: str, board: int = 1, colours: int = 2) -> Counter[str]:
    endings: Counter[str] = Counter()
    for n in range(count):
        seed = hashlib.sha256(f"curious-cargo/greedy/{tag}/{n}".encode()).digest()
        options = Options(first_player=[0, 1, None][n % 3], draft=n % 4 != 0)
        if (board, colours) != (1, 2):
            options = Options(
                first_player=options.first_player,
                draft=options.draft,
                board=board,  # type: ignore[arg-type]
                colours=colours,  # type: ignore[arg-type]
            )
        bots = [GreedyBot(Rng(seed, 1_000_000 + k)) for k in (0, 1)]
        table, _ = play_bot_game(G, seed, bots, options)  # a refused command fails the test
        triggers = check_ending(table)
        endings.update(triggers)
        endings["real"] += bool(REAL_ENDINGS & set(triggers))
        endings["winner"] += bool(table.state.winners)
        endings["purple"] += sum(p.shipped.get("purple", 0) for p in table.state.players)
    return endings


def test_greedy_games_end_by_shipping_or_a_star() -> None:
    endings = greedy_games(6, "quick")
    assert endings["real"] >= 5, endings
    assert endings["shipped"] >= 3 and endings["winner"] >= 4, endings


def test_the_greedy_bot_beats_the_random_bot() -> None:
    assert duel_wins(G, GreedyBot, Options(), "curious-cargo", 4, check_ending) >= 3


@pytest.mark.slow
def test_80_greedy_games_reach_real_endings() -> None:
    endings = greedy_games(80, "slow")
    print(f"\nCurious Cargo, 80 greedy games: {dict(endings)}")
    assert endings["real"] >= 72, endings


@pytest.mark.slow
@pytest.mark.parametrize("board", [2, 3, 4, 5, 6])
def test_greedy_games_on_boards_2_to_6_reach_real_endings(board: int) -> None:
    endings = greedy_games(10, f"board-{board}", board=board)
    print(f"\nCurious Cargo board {board}, 10 greedy games: {dict(endings)}")
    assert endings["real"] >= 8 and endings["winner"] >= 8, endings


@pytest.mark.slow
@pytest.mark.parametrize("board", [1, 3])
def test_greedy_games_in_the_three_colour_variant_ship_purple(board: int) -> None:
    endings = greedy_games(10, f"purple-{board}", board=board, colours=3)
    print(f"\nCurious Cargo 3 colours, board {board}, 10 greedy games: {dict(endings)}")
    assert endings["real"] >= 8 and endings["purple"] >= 20 and endings["winner"] >= 3, endings
