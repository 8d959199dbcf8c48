"""``kernel.copier``: the one deep copy of a state, shared by every game."""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec
import pytest

from domain.cargo_empire import CARGO_EMPIRE
from domain.jolly_cargo import JOLLY_CARGO
from domain.kernel import Game, copier, play_random_game


class Leaf(msgspec.Struct):
    items: list[int]


class Frozen(msgspec.Struct, frozen=True):
    name: str


class Node(msgspec.Struct):
    value: int
    leaves: dict[str, Leaf]
    maybe: Leaf | None
    frozen: Frozen
    children: list[Node] = []
    blob: dict[str, Any] = {}


def test_a_copy_is_equal_and_shares_nothing_mutable() -> None:
    tree = Node(1, {"a": Leaf([1])}, Leaf([2]), Frozen("f"),
                [Node(2, {}, None, Frozen("g"))], {"x": [1, {"y": 2}]})
    copied = copier(Node)(tree)
    assert copied == tree and copied is not tree
    assert copied.frozen is tree.frozen  # immutable: shared
    copied.leaves["a"].items.append(9)
    assert copied.maybe is not None
    copied.maybe.items.append(9)
    copied.children[0].value = 7
    copied.blob["x"][1]["y"] = 3
    assert tree == Node(1, {"a": Leaf([1])}, Leaf([2]), Frozen("f"),
                        [Node(2, {}, None, Frozen("g"))], {"x": [1, {"y": 2}]})
    assert copier(Node) is copier(Node)  # built once


def test_copier_refuses_what_is_not_a_struct_type() -> None:
    with pytest.raises(TypeError):
        copier(dict)


@pytest.mark.parametrize("game", [CARGO_EMPIRE, JOLLY_CARGO], ids=lambda g: g.id)
def test_every_games_state_copies_deeply(game: Game[Any, Any, Any, Any, Any]) -> None:
    table, _ = play_random_game(game, hashlib.sha256(game.id.encode()).digest(), 3)
    state = table.state
    before = msgspec.json.encode(state)
    copied = state.copy()
    assert copied == state
    for name in state.__struct_fields__:  # every mutable container is a new one
        value = getattr(state, name)
        if isinstance(value, (list, dict)) and value:
            assert getattr(copied, name) is not value, name
    copied.players[0] = copied.players[1]
    assert msgspec.json.encode(state) == before
