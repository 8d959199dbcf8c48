"""Perft-style check of worker-action generation: on positions from seeded bot games, the
``move`` commands ``legal`` lists are exactly the ones ``decide`` accepts among *every* step
sequence (1 or 2 steps of 4 directions × move/push/pull) of every worker and every stack of
Dockhands sharing a square — an oracle that shares nothing with the generator but ``decide``.
CI plays two games per seat count; a local run one (``tests/support/budget.py``)."""

from __future__ import annotations

import hashlib
from itertools import combinations, product
from typing import Any

import msgspec
import pytest

from domain.jolly_cargo import JOLLY_CARGO
from domain.jolly_cargo import commands as cmd
from domain.jolly_cargo.board import DIRECTIONS
from domain.jolly_cargo.options import Options
from domain.jolly_cargo.pieces import crew, is_dockhand
from domain.jolly_cargo.state import State
from domain.kernel import Rng, RuleError, play_random_game
from tests.support import budget

_STEPS = [cmd.Step(d, k) for d in DIRECTIONS for k in ("move", "push", "pull")]
_SEQUENCES = [[s] for s in _STEPS] + [list(p) for p in product(_STEPS, repeat=2)]


def _positions(seats: int, game: int, every: int) -> list[State]:
    seed = hashlib.sha256(f"perft/{seats}/{game}".encode()).digest()
    table, _ = play_random_game(JOLLY_CARGO, seed, seats, Options(crate_placement="random"))
    out, state = [], None
    for event in table.events:
        state = JOLLY_CARGO.evolve(state, event)
        if state.phase == "play" and JOLLY_CARGO.outcome(state) is None:
            out.append(state)
    return out[::every]


def _actor_groups(state: State, seat: int) -> list[list[str]]:
    colour = state.players[seat].colour
    assert colour is not None
    mine = [w for w in crew(colour) if w in state.workers]
    groups = [[w] for w in mine]
    dockhands = [w for w in mine if is_dockhand(w)]
    for size in range(2, len(dockhands) + 1):
        for stack in combinations(dockhands, size):
            if len({state.workers[w] for w in stack}) == 1:
                groups.append(list(stack))
    return groups


def _accepted_moves(state: State, seat: int) -> set[bytes]:
    accepted = set()
    for actors in _actor_groups(state, seat):
        for steps in _SEQUENCES:
            move = cmd.Move(actors, steps)
            try:
                JOLLY_CARGO.decide(state, seat, move, Rng(bytes(32), 1))
            except RuleError:
                continue
            accepted.add(msgspec.json.encode(move))
    return accepted


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_listed_moves_are_exactly_the_accepted_ones(seats: int) -> None:
    checked = 0
    games = 2 if budget.full_run() else 1
    for game in range(games):
        for state in _positions(seats, game, every=12):
            for seat in JOLLY_CARGO.to_act(state):
                listed: list[Any] = [
                    msgspec.json.encode(c)
                    for c in JOLLY_CARGO.legal(state, seat)
                    if isinstance(c, cmd.Move)
                ]
                assert len(listed) == len(set(listed)), "a move is listed twice"
                assert set(listed) == _accepted_moves(state, seat)
                checked += 1
    assert checked >= 10 * games
