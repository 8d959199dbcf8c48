"""1,000 games of CARGO played to the end by uniformly random bots: 2, 3 and 4 players, with and
without the fast variant, crates placed by the players and at random."""

from __future__ import annotations

import hashlib

import pytest

from domain.jolly_cargo import JOLLY_CARGO
from domain.jolly_cargo.options import Options
from domain.kernel import play_random_game
from tests.support import seeds

CONFIGS = [  # (seats, fast variant, games) — 1,000 games in all
    (2, False, 167),
    (2, True, 167),
    (3, False, 167),
    (3, True, 167),
    (4, False, 166),
    (4, True, 166),
]


def _play(seats: int, fast: bool, games: int) -> None:
    for n in range(games):
        seed = hashlib.sha256(f"bots/{seats}/{fast}/{n}".encode()).digest()
        options = Options(crate_placement="random" if n % 2 else "players", fast_variant=fast)
        with seeds.named(seed, n=n, seats=seats, fast=fast):
            table, outcome = play_random_game(JOLLY_CARGO, seed, seats, options)
            state = table.state
            assert state.phase == "finished"
            assert outcome.scores == [p.score for p in state.players]
            assert outcome.winners and set(outcome.winners) <= set(range(seats))
            best = max(outcome.scores)
            assert all(outcome.scores[w] == best for w in outcome.winners)
            assert any(state.crates_on_dock(p.colour or "") == 0 for p in state.players)
            assert JOLLY_CARGO.to_act(state) == []


@pytest.mark.slow
@pytest.mark.parametrize(("seats", "fast", "games"), CONFIGS)
def test_bot_games_run_to_a_result(seats: int, fast: bool, games: int) -> None:
    _play(seats, fast, games)


@pytest.mark.parametrize(("seats", "fast"), [(s, f) for s, f, _ in CONFIGS])
def test_a_few_bot_games_run_to_a_result(seats: int, fast: bool) -> None:
    """The quick default run's share of the marathon: its first games of every configuration."""
    _play(seats, fast, 3)


def test_a_failing_game_names_its_seed() -> None:
    """A marathon's failure says which game: its number, configuration and seed."""
    seed = hashlib.sha256(b"bots/2/False/0").digest()
    expected = f"game n=0 seats=2 seed {seed.hex()}: boom"
    with pytest.raises(AssertionError, match=expected), seeds.named(seed, n=0, seats=2):
        raise AssertionError("boom")
