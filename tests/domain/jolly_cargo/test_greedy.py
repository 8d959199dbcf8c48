"""The greedy bot (``domain/jolly_cargo/greedy.py``) plays CARGO to its end: a player's side of
the dock is emptied, the final scores are recomputed here from the recorded pushes by the rules
doc's table (independently of the engine's points), the winners follow the tiebreak, scores
differ in most games, and greedy beats the uniform random bot. The quick run plays a few games
of every configuration; the slow suite 20 of each and prints what it saw."""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any

import pytest

from domain.jolly_cargo import JOLLY_CARGO as G
from domain.jolly_cargo import events as ev
from domain.jolly_cargo.greedy import GreedyBot
from domain.jolly_cargo.options import Options
from domain.jolly_cargo.state import State
from domain.kernel import LocalGame, Rng, play_bot_game
from tests.support.duels import duel_wins

CONFIGS = [(seats, fast) for seats in (2, 3, 4) for fast in (False, True)]


def recount(table: LocalGame[Any, Any, Any, Any, Any]) -> tuple[list[int], list[int]]:
    """Points and crates collected per seat, from the ops of every worker action, by the table
    of docs/rules/jolly-cargo.md: own crate loaded +3 to its owner (whoever pushed it), an
    opponent's crate into the sea +1 to the mover and one's own -1, an opponent's Dockhand
    squished +1 to the mover and one's own -1."""
    s: State = table.state
    seat_of = {p.colour: seat for seat, p in enumerate(s.players)}
    points = [0] * s.seats
    collected = [0] * s.seats
    for e in table.events:
        if not isinstance(e, ev.WorkersMoved):
            continue
        mover = s.players[e.seat].colour
        for op in e.ops:
            if isinstance(op, ev.Load):
                points[seat_of[op.colour]] += 3
                collected[seat_of[op.colour]] += 1
            elif isinstance(op, ev.CrateShift) and op.to is None:
                own = op.colour == mover
                points[e.seat] += -1 if own else 1
                collected[e.seat] += 0 if own else 1
            elif isinstance(op, ev.Squish):
                points[e.seat] += -1 if op.worker.startswith(f"{mover}-") else 1
    return points, collected


def check_ending(table: LocalGame[Any, Any, Any, Any, Any]) -> list[int]:
    s: State = table.state
    assert s.phase == "finished" and G.to_act(s) == [] and not s.held
    ended = [e for e in table.events if isinstance(e, ev.GameEnded)]
    assert len(ended) == 1
    emptied = [seat for seat, p in enumerate(s.players) if s.crates_on_dock(p.colour or "") == 0]
    assert emptied and ended[0].emptied == emptied
    points, collected = recount(table)
    outcome = G.outcome(s)
    assert outcome is not None
    assert outcome.scores == points
    assert [p.collected for p in s.players] == collected
    best = max(zip(points, collected, strict=True))
    assert outcome.winners == [
        seat for seat in range(s.seats) if (points[seat], collected[seat]) == best
    ]
    assert G.fold(table.events) == s
    return points


def greedy_games(seats: int, fast: bool, count: int, tag: str) -> Counter[str]:
    seen: Counter[str] = Counter()
    for n in range(count):
        seed = hashlib.sha256(f"jolly-cargo/greedy/{tag}/{seats}/{fast}/{n}".encode()).digest()
        options = Options(crate_placement="random" if n % 2 else "players", fast_variant=fast)
        bots = [GreedyBot(Rng(seed, 1_000_000 + k)) for k in range(seats)]
        table, _ = play_bot_game(G, seed, bots, options)  # a refused command fails the test
        points = check_ending(table)
        seen["games"] += 1
        seen["scores differ"] += len(set(points)) == len(points)
        seen["top score alone"] += points.count(max(points)) == 1
        seen["crates loaded"] += sum(p.loaded for p in table.state.players)
    return seen


@pytest.mark.parametrize(("seats", "fast"), CONFIGS)
def test_greedy_games_end_with_a_side_emptied_and_scores_that_differ(
    seats: int, fast: bool
) -> None:
    seen = greedy_games(seats, fast, 2, "quick")
    assert seen["top score alone"] >= 1 and seen["crates loaded"] >= 2, seen


def test_the_greedy_bot_beats_the_random_bot() -> None:
    assert duel_wins(G, GreedyBot, Options(), "jolly-cargo", 4, check_ending) >= 3


@pytest.mark.slow
def test_10_greedy_games_of_every_configuration() -> None:
    lines = []
    for seats, fast in CONFIGS:
        seen = greedy_games(seats, fast, 10, "slow")
        lines.append(f"{seats} seats, fast {fast}: {dict(seen)}")
        assert seen["top score alone"] >= 7, seen
    print("\nCARGO, 10 greedy games per configuration:\n" + "\n".join(lines))
