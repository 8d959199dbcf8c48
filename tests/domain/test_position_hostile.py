"""Positions are hostile input beyond their numbers (review of issue 35): a position whose
strings are not the game's (a worker id with no colour or kind) is ``position.invalid``,
never an exception below it (a 500 at ``POST /v1/games`` with a position)."""

from __future__ import annotations

import msgspec
import pytest

from domain.kernel import CommandError, LocalGame, Rng
from domain.registry import GAMES


def _jolly_position() -> dict[str, object]:
    game = GAMES["jolly-cargo"]
    table = LocalGame.new(game, bytes([2]) * 32, 2, game.decode_options(game.bot_options))
    chooser = Rng(bytes([2]) * 32, 0)
    for _ in range(40):
        seat = chooser.choice(game.to_act(table.state))
        table.submit(seat, chooser.choice(game.legal(table.state, seat)))
    position: dict[str, object] = msgspec.to_builtins(game.export_position(table.state))
    return position


@pytest.mark.parametrize("stranger", ["zz", "red", "red-", "-", ""])
def test_a_shared_square_with_a_worker_that_is_no_worker_is_invalid(stranger: str) -> None:
    game = GAMES["jolly-cargo"]
    position = _jolly_position()
    workers = position["workers"]
    assert isinstance(workers, dict)
    square, stack = next((sq, st) for sq, st in workers.items() if "-D" in st[0])
    workers[square] = [*stack, stranger]  # a Dockhand and one more: the check reads their ids
    with pytest.raises(CommandError) as refused:  # as POST /v1/games starts a game from it
        LocalGame.from_position(game, b"s" * 32, game.decode_position(position))
    assert refused.value.code == "position.invalid"


def test_a_huge_stranger_comes_back_cut() -> None:
    """A 100 KB worker id is named in the refusal cut, not whole (the detail echoes it)."""
    game = GAMES["jolly-cargo"]
    position = _jolly_position()
    workers = position["workers"]
    assert isinstance(workers, dict)
    square = next(iter(workers))
    workers[square] = ["q" * 100_000]
    with pytest.raises(CommandError) as refused:
        LocalGame.from_position(game, b"s" * 32, game.decode_position(position))
    assert refused.value.code == "position.invalid"
    assert len(refused.value.message) <= 1_001
