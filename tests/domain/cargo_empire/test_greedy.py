"""The greedy bot (``domain/cargo_empire/greedy.py``) plays Cargo Empire to its end at every
player count: the posts run out on the last turn, the final scores are recomputed here from the
state by the rules doc's tables (independently of ``rules.score``), the winners follow the
tiebreak, the players' scores differ, and greedy beats the uniform random bot. The quick run
plays a few games; the slow suite 50 per player count and prints what it saw."""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any

import pytest

from domain.cargo_empire import CARGO_EMPIRE as G
from domain.cargo_empire.board import NAMES
from domain.cargo_empire.events import Delivered
from domain.cargo_empire.greedy import GreedyBot
from domain.cargo_empire.options import Options
from domain.cargo_empire.state import State
from domain.kernel import LocalGame, Rng, play_bot_game
from tests.support.duels import duel_wins

#: docs/rules/cargo-empire.md, "Development track": VP by marker space.
TRACK_VP = {
    "truck": [0, 0, 1, 1, 2, 3, 4, 5, 6, 8, 10],
    "train": [0, 0, 1, 2, 3, 4, 5, 6, 8, 10, 12],
    "ship": [0, 0, 0, 1, 1, 2, 2, 3, 4, 5, 6, 7, 8, 10, 12],
}
SOLO_TARGET = 55


def posts_in(s: State, city: str) -> list[int]:
    c = s.cities[city]
    return [*c.posts, *(seat for seat in c.demand.values() if seat is not None)]


def vp(s: State, seat: int) -> int:
    """The score by the rules doc: markers, 3 per post in an LV3 city, 5 per private city card
    with a post there, and the five goals."""
    p = s.players[seat]
    cities = [n for n in NAMES if seat in posts_in(s, n)]
    lv3 = [n for n in cities if s.cities[n].level == 3]
    total = sum(TRACK_VP[v][p.markers[v]] for v in TRACK_VP)
    total += 3 * sum(posts_in(s, n).count(seat) for n in lv3)
    total += 5 * sum(1 for n in p.private if n in cities)
    total += 5 if len(cities) >= 7 else 0
    total += 4 if len(lv3) >= 2 else 0
    total += 4 if len(set(p.delivered)) == 4 else 0
    total += 3 if min(p.markers.values()) >= 3 else 0
    total += 3 if p.markers["ship"] >= 8 else 0
    return total


def check_ending(table: LocalGame[Any, Any, Any, Any, Any]) -> list[int]:
    s: State = table.state
    assert s.phase == "finished" and G.to_act(s) == []
    assert all(p.supply == 0 for p in s.players)  # the posts ran out together, on the last turn
    assert s.round == 3
    outcome = G.outcome(s)
    assert outcome is not None
    scores = [vp(s, seat) for seat in range(s.seats)]
    assert outcome.scores == scores
    if s.seats == 1:
        assert outcome.winners == ([0] if scores[0] >= SOLO_TARGET else [])
    else:

        def key(seat: int) -> tuple[int, int, int]:
            on_map = sum(posts_in(s, n).count(seat) for n in NAMES)
            return scores[seat], on_map, s.players[seat].hand.total()

        best = max(key(seat) for seat in range(s.seats))
        assert outcome.winners == [seat for seat in range(s.seats) if key(seat) == best]
    delivered = Counter(e.seat for e in table.events if isinstance(e, Delivered))
    assert [delivered[seat] for seat in range(s.seats)] == [p.deliveries for p in s.players]
    assert G.fold(table.events) == s
    return scores


def greedy_games(seats: int, count: int, tag: str) -> Counter[str]:
    seen: Counter[str] = Counter()
    for n in range(count):
        seed = hashlib.sha256(f"cargo-empire/greedy/{tag}/{seats}/{n}".encode()).digest()
        options = Options(starting_posts="random" if n % 2 else "choose")
        bots = [GreedyBot(Rng(seed, 1_000_000 + k)) for k in range(seats)]
        table, _ = play_bot_game(G, seed, bots, options)  # a refused command fails the test
        scores = check_ending(table)
        seen["games"] += 1
        seen["scores all differ"] += len(set(scores)) == len(scores)
        seen["top score alone"] += scores.count(max(scores)) == 1
        seen["one winner"] += len(table.state.winners) == 1
        seen["deliveries"] += sum(p.deliveries for p in table.state.players)
    return seen


@pytest.mark.parametrize("seats", [2, 3, 4, 5])
def test_greedy_games_end_with_scores_that_differ(seats: int) -> None:
    seen = greedy_games(seats, 3, "quick")
    assert seen["top score alone"] >= 2 and seen["one winner"] >= 2, seen


def test_the_greedy_bot_beats_the_random_bot() -> None:
    assert duel_wins(G, GreedyBot, Options(), "cargo-empire", 6, check_ending) >= 5


def test_a_solo_greedy_game_scores_by_the_target() -> None:
    seen = greedy_games(1, 3, "solo")
    assert seen["deliveries"] >= 3 * 6  # it delivers on most of its 12 turns


@pytest.mark.slow
def test_20_greedy_games_per_player_count() -> None:
    lines = []
    for seats in (1, 2, 3, 4, 5):
        seen = greedy_games(seats, 20, "slow")
        lines.append(f"{seats} seats: {dict(seen)}")
        if seats > 1:
            assert seen["top score alone"] >= 16 and seen["one winner"] >= 18, seen
    print("\nCargo Empire, 20 greedy games per player count:\n" + "\n".join(lines))
