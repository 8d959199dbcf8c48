"""``kernel.copier``: the one deep copy of a state, shared by every game."""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec
import msgspec.inspect as mi
import pytest

from domain.cargo_empire import CARGO_EMPIRE
from domain.jolly_cargo import JOLLY_CARGO
from domain.kernel import Game, copier, play_random_game
from domain.registry import all_games


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


# --- every state Struct of every game carries every field over --------------------------------
def _struct_types(root: type[Any]) -> list[type[Any]]:
    """The Struct types a state type reaches (itself first)."""
    found: list[type[Any]] = []

    def walk(t: mi.Type) -> None:
        if isinstance(t, mi.Metadata):
            walk(t.type)
        if isinstance(t, mi.StructType):
            if t.cls in found:
                return
            found.append(t.cls)
            for f in t.fields:
                walk(f.type)
        for inner in ("item_type", "key_type", "value_type"):
            if hasattr(t, inner):
                walk(getattr(t, inner))
        for member in getattr(t, "types", ()):
            walk(member)

    walk(mi.type_info(root))
    return found


class _Unlike:
    """Values unlike any default: each call gives fresh ones (ints, strings, literals other than
    the default, the non-None member of an optional, one-item containers)."""

    def __init__(self) -> None:
        self.n = 0
        self.depth = 0

    def value(self, t: mi.Type, default: Any = msgspec.NODEFAULT) -> Any:
        self.n += 1
        if isinstance(t, mi.Metadata):  # Annotated bounds: the value within them
            return self.value(t.type, default)
        if isinstance(t, mi.BoolType):
            return default is not True
        if isinstance(t, (mi.IntType, mi.FloatType)):
            return 1000 + self.n
        if isinstance(t, mi.StrType):
            return f"v{self.n}"
        if isinstance(t, mi.LiteralType):
            others = [v for v in t.values if v != default]
            return (others or list(t.values))[self.n % len(others or t.values)]
        if isinstance(t, mi.UnionType):
            members = [m for m in t.types if not isinstance(m, mi.NoneType)]
            return self.value(members[0], default)
        if isinstance(t, mi.ListType):
            return [] if self.depth > 3 else [self.value(t.item_type)]
        if isinstance(t, mi.DictType):
            if self.depth > 3:
                return {}
            return {self.value(t.key_type): self.value(t.value_type)}
        if isinstance(t, mi.StructType):
            return self.struct(t)
        if isinstance(t, mi.AnyType):
            return {"any": [self.n]}
        raise TypeError(f"no value unlike the default for {t!r}")

    def struct(self, t: mi.StructType) -> Any:
        self.depth += 1
        try:
            values = {f.name: self.value(f.type, _default(f)) for f in t.fields}
        finally:
            self.depth -= 1
        return t.cls(**values)


def _default(f: mi.Field) -> Any:
    if f.default is not msgspec.NODEFAULT:
        return f.default
    if f.default_factory is not msgspec.NODEFAULT:
        return f.default_factory()
    return msgspec.NODEFAULT


def forgotten_fields(cls: type[Any], copy: Any) -> list[str]:
    """The fields of ``cls`` that ``copy`` does not carry over: on a value whose every field
    (and every nested one) differs from its default, each field of the copy must equal the
    original's, and every mutable container must be a new one."""
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    original = _Unlike().struct(info)
    before = msgspec.to_builtins(original)
    copied = copy(original)
    assert type(copied) is cls
    wrong = []
    for f in info.fields:
        if f.default is not msgspec.NODEFAULT or f.default_factory is not msgspec.NODEFAULT:
            assert getattr(original, f.name) != _default(f), f"{cls.__name__}.{f.name}"
        mine, theirs = getattr(original, f.name), getattr(copied, f.name)
        if msgspec.to_builtins(mine) != msgspec.to_builtins(theirs):
            wrong.append(f.name)
        elif isinstance(mine, (list, dict)) and mine is theirs:
            wrong.append(f"{f.name} (shared)")
    assert msgspec.to_builtins(original) == before, "the copy changed the original"
    return wrong


def _copy_of(cls: type[Any]) -> Any:
    """How a game copies a value of ``cls``: its ``copy`` method, else the kernel's copier (a
    nested Struct without one is copied by its owner's copier)."""
    method = getattr(cls, "copy", None)
    return method if method is not None else copier(cls)


STATE_TYPES = [
    (game.id, cls)
    for game in all_games()
    for cls in _struct_types(game.state_type)
    if not cls.__struct_config__.frozen
]


@pytest.mark.parametrize(
    ("game_id", "cls"), STATE_TYPES, ids=[f"{g}-{c.__name__}" for g, c in STATE_TYPES]
)
def test_every_state_struct_of_every_game_copies_every_field(game_id: str, cls: type[Any]) -> None:
    assert forgotten_fields(cls, _copy_of(cls)) == []


def test_the_state_types_are_every_games_mutable_parts() -> None:
    names = {(g, c.__name__) for g, c in STATE_TYPES}
    assert ("empire-builder", "Player") in names and ("empire-builder", "Turn") in names
    assert {g for g, _ in names} == {g.id for g in all_games()}


class Kept(msgspec.Struct):
    money: int
    cards: list[int]
    face: str = ""
    skip: int = 0

    def copy(self) -> Kept:  # the attack: a hand-written copy that forgets ``skip``
        return Kept(self.money, list(self.cards), self.face)


class Shared(msgspec.Struct):
    paid: list[int] = []

    def copy(self) -> Shared:  # the attack: a copy that shares a mutable list
        return Shared(self.paid)


def test_a_copy_that_forgets_a_field_or_shares_a_list_is_caught() -> None:
    assert forgotten_fields(Kept, Kept.copy) == ["skip"]
    assert forgotten_fields(Shared, Shared.copy) == ["paid (shared)"]
    assert forgotten_fields(Kept, copier(Kept)) == []
