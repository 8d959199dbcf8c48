"""1,000 games of Cargo Empire for each player count, played to the end by random bots."""

from __future__ import annotations

import hashlib

import pytest

from domain.cargo_empire import CARGO_EMPIRE
from domain.cargo_empire.board import COMPONENTS, posts_per_player
from domain.cargo_empire.events import PostRetired
from domain.cargo_empire.options import Options
from domain.kernel import play_random_game
from tests.support import seeds


@pytest.mark.slow
@pytest.mark.parametrize("seats", [1, 2, 3, 4, 5])
def test_bot_games_run_to_a_result(seats: int) -> None:
    for n in range(1000):
        seed = hashlib.sha256(f"cargo-empire/bots/{seats}/{n}".encode()).digest()
        with seeds.named(seed, n=n, seats=seats):
            options = Options(starting_posts="random" if n % 2 else "choose")
            table, outcome = play_random_game(CARGO_EMPIRE, seed, seats, options)
            state = table.state
            assert state.phase == "finished" and CARGO_EMPIRE.to_act(state) == []
            assert outcome.scores == [s.total for s in state.scores]
            if seats == 1:
                won = outcome.scores[0] >= COMPONENTS.solo_target
                assert outcome.winners == ([0] if won else [])
            else:
                best = max(outcome.scores)
                assert outcome.winners and all(outcome.scores[w] == best for w in outcome.winners)
            # Every turn used a post: all ran out together, each on the map or retired.
            assert all(p.supply == 0 for p in state.players)
            on_map = sum(len(state.posts_in(c)) for c in state.cities)
            retired = sum(1 for e in table.events if isinstance(e, PostRetired))
            assert on_map + retired == seats * posts_per_player(seats)
