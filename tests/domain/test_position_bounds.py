"""Positions are hostile input: every integer of every game's position form (its options too)
has a documented range inside int64 (:mod:`domain.kernel.bounds`), and a number outside it is
refused with ``position.out_of_range`` naming the field, before any rule sees it.

The walk goes over the position *types*, so a field added later without a range fails here;
and it sends, for every integer field, its bound plus one and minus one (and int64, and a
4,300-digit number) inside an otherwise decodable position."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec
import msgspec.inspect as mi
import pytest

from domain.kernel import CommandError, LocalGame, Rng
from domain.kernel.bounds import INT64_MAX, INT64_MIN, range_of
from domain.registry import all_games

GAMES = {g.id: g for g in all_games()}
ROOT = Path(__file__).resolve().parents[2]

#: A step into a value: a field name, a list index, or a dict key (the key itself).
Step = tuple[str, Any]
Steps = tuple[Step, ...]


def _render(path: Steps) -> str:
    out = ""
    for kind, part in path:
        if kind == "field":
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return out


def _walk(t: mi.Type, path: Steps, ints: list[tuple[Steps, mi.Type, bool]]) -> Any:
    """A decodable skeleton of ``t`` (every field present, every list one long, every dict
    one key), collecting each integer type with its path (and whether it is a dict's key)."""
    if isinstance(t, mi.Metadata) and not isinstance(t.type, mi.IntType):
        return _walk(t.type, path, ints)
    if isinstance(t, mi.StructType):
        return {
            f.encode_name: _walk(f.type, (*path, ("field", f.encode_name)), ints) for f in t.fields
        }
    if isinstance(t, (mi.ListType, mi.VarTupleType, mi.SetType, mi.FrozenSetType)):
        return [_walk(t.item_type, (*path, ("index", 0)), ints)]
    if isinstance(t, mi.DictType):
        key: Any
        if isinstance(t.key_type, (mi.IntType, mi.Metadata)):
            ints.append((path, t.key_type, True))
            key = (range_of(t.key_type) or (0, 0))[0]
        elif isinstance(t.key_type, mi.LiteralType):
            key = t.key_type.values[0]
        else:
            key = "k"
        return {str(key): _walk(t.value_type, (*path, ("key", key)), ints)}
    if isinstance(t, mi.UnionType):
        chosen = next(x for x in t.types if not isinstance(x, mi.NoneType))
        return _walk(chosen, path, ints)
    if isinstance(t, (mi.IntType, mi.Metadata)):
        ints.append((path, t, False))
        return (range_of(t) or (0, 0))[0]
    if isinstance(t, mi.LiteralType):
        return t.values[0]
    if isinstance(t, mi.BoolType):
        return False
    if isinstance(t, mi.StrType):
        return "x"
    if isinstance(t, (mi.NoneType, mi.AnyType)):
        return None
    raise AssertionError(f"{_render(path)}: a position holds no {type(t).__name__}")


def _skeleton(game_id: str) -> tuple[Any, list[tuple[Steps, mi.Type, bool]]]:
    ints: list[tuple[Steps, mi.Type, bool]] = []
    skeleton = _walk(mi.type_info(GAMES[game_id].position_type), (), ints)
    return skeleton, ints


def _child(node: Any, step: Step) -> Any:
    kind, part = step
    return node[str(part)] if kind == "key" else node[part]


def _set(doc: Any, path: Steps, value: int, key: bool) -> None:
    """``doc`` with the integer at ``path`` set to ``value`` (a dict key: the dict's only key)."""
    node = doc
    for step in path if key else path[:-1]:
        node = _child(node, step)
    if key:
        (only,) = node.values()
        node.clear()
        node[str(value)] = only
        return
    kind, part = path[-1]
    node[str(part) if kind == "key" else part] = value


def bounds_of(game_id: str) -> dict[str, tuple[int, int]]:
    """Every integer field of a game's position form and its range (``a[0]`` for a list's
    items, ``a['k']`` for a dict's values; a dict's keys as ``a (keys)``)."""
    _, ints = _skeleton(game_id)
    out = {}
    for path, t, key in ints:
        found = range_of(t)
        assert found is not None
        out[_render(path) + (" (keys)" if key else "")] = found
    return out


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_every_integer_of_the_position_form_has_a_range_inside_int64(game_id: str) -> None:
    _, ints = _skeleton(game_id)
    assert ints, "no integer found: the walk is broken"
    unbounded = [_render(p) for p, t, _ in ints if range_of(t) is None]
    assert not unbounded, f"{game_id}: integers without a documented range: {unbounded}"
    for _, t, _ in ints:
        lo, hi = range_of(t) or (0, 0)
        assert INT64_MIN <= lo <= hi <= INT64_MAX


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_the_ranges_are_in_the_published_schema(game_id: str) -> None:
    text = msgspec.json.encode(GAMES[game_id].position_schema()).decode()
    for lo, hi in bounds_of(game_id).values():
        assert f'"minimum":{lo},"maximum":{hi}' in text


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_a_number_out_of_its_range_is_refused_naming_the_field(game_id: str) -> None:
    game = GAMES[game_id]
    skeleton, ints = _skeleton(game_id)
    game.decode_position(skeleton)  # the skeleton itself decodes: only the number is wrong
    for path, t, key in ints:
        lo, hi = range_of(t) or (0, 0)
        where = _render(path)
        for value, side, bound in [
            (hi + 1, "maximum", hi), (INT64_MAX, "maximum", hi), (int("9" * 4300), "maximum", hi),
            (lo - 1, "minimum", lo), (-(2**70), "minimum", lo),
        ]:
            doc = msgspec.json.decode(msgspec.json.encode(skeleton))
            _set(doc, path, value, key)
            for sent in (doc, msgspec.json.encode(doc)):  # parsed, or bytes as a body comes
                with pytest.raises(CommandError) as refused:
                    game.decode_position(sent)
                error = refused.value
                assert error.code == "position.out_of_range", (where, value, error.message)
                assert error.details["field"] == where, (where, error.details)
                assert error.details[side] == bound, (where, error.details)
                assert where in error.message
            doc_ok = msgspec.json.decode(msgspec.json.encode(skeleton))
            _set(doc_ok, path, hi, key)
            game.decode_position(doc_ok)  # the bound itself is inside


def _doc_name(field: str) -> str:
    """A field as the rules docs name it: ``players[].skip``, ``tokens{}`` (a map's values)."""
    field = field.replace("[0]", "[]")
    return re.sub(r"\[(\d+|'[^']*')\]", "{}", field)


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_the_rules_doc_lists_every_bound(game_id: str) -> None:
    """docs/rules/<game>.md, "Bounds": each field with its range, as the types have it."""
    text = " ".join((ROOT / "docs" / "rules" / f"{game_id}.md").read_text().split())
    missing = [
        f"`{_doc_name(field)}` {lo:,}–{hi:,}"
        for field, (lo, hi) in bounds_of(game_id).items()
        if f"`{_doc_name(field)}` {lo:,}–{hi:,}" not in text
    ]
    assert not missing, f"docs/rules/{game_id}.md lacks {missing}"


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_every_position_a_game_reaches_is_inside_the_bounds(game_id: str) -> None:
    """The ranges refuse only what cannot occur: after every command of random games, the
    exported position decodes again with its ranges checked."""
    game = GAMES[game_id]
    for seats in sorted({game.min_seats, game.max_seats}):
        options = game.decode_options(game.bot_options)
        table = LocalGame.new(game, bytes([seats]) * 32, seats, options)
        chooser = Rng(bytes([seats]) * 32, 0)
        checked = 0
        while game.outcome(table.state) is None:
            seat = chooser.choice(game.to_act(table.state))
            table.submit(seat, chooser.choice(game.legal(table.state, seat)))
            try:
                exported = game.export_position(table.state)
            except CommandError:  # set-up, or the end: no position
                continue
            game.decode_position(msgspec.to_builtins(exported))
            checked += 1
        assert checked, f"{game_id} with {seats}: no position exported"


def test_options_out_of_range_are_refused_at_creation_too() -> None:
    """Empire Builder's terms are a position's ``options`` and a new game's: a turn limit of
    10**30 (then encoded into ``lobby.created`` and every document) is ``options.invalid``."""
    game = GAMES["empire-builder"]
    with pytest.raises(CommandError) as refused:
        game.decode_options({"turn_limit": 10**30})
    assert refused.value.code == "options.invalid"
    assert refused.value.details == {"field": "turn_limit"}
    game.decode_options({"turn_limit": 100_000, "money_to_win": 1_000_000})
