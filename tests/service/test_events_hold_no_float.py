"""No event holds a float, by its type: so what the append hashes is exactly what PostgreSQL's
jsonb reads back (jsonb may rewrite a float's digits, never an integer's or a string's).

This replaced a check at run time that encoded and decoded every event of every append to find
a float (5 µs a move, ``service.eventstore.optimistic`` before issue 35) though no event type
could carry one: a field added with a float fails here instead. ``lobby.created`` carries the
game's options and position as plain JSON (``Any``), written from the game's typed options and
position (``service.application.lobby``), whose types are walked too."""

from __future__ import annotations

from typing import Any

import msgspec.inspect as mi
import pytest

from domain.platform.events import PlatformEvent
from domain.registry import all_games

GAMES = {g.id: g for g in all_games()}


def _floats(t: mi.Type, at: str, seen: set[type], out: list[str]) -> list[str]:
    if isinstance(t, mi.Metadata):
        _floats(t.type, at, seen, out)
    elif isinstance(t, (mi.FloatType, mi.DecimalType)):
        out.append(at)
    elif isinstance(t, mi.StructType):
        if t.cls not in seen:
            seen.add(t.cls)
            for f in t.fields:
                _floats(f.type, f"{at}.{f.encode_name}", seen, out)
    elif isinstance(t, (mi.ListType, mi.VarTupleType, mi.SetType, mi.FrozenSetType)):
        _floats(t.item_type, f"{at}[]", seen, out)
    elif isinstance(t, mi.TupleType):
        for i, x in enumerate(t.item_types):
            _floats(x, f"{at}[{i}]", seen, out)
    elif isinstance(t, mi.DictType):
        _floats(t.key_type, f"{at}{{key}}", seen, out)
        _floats(t.value_type, f"{at}{{}}", seen, out)
    elif isinstance(t, mi.UnionType):
        for x in t.types:
            _floats(x, at, seen, out)
    return out


def _of(target: Any, name: str) -> list[str]:
    return _floats(mi.type_info(target), name, set(), [])


def test_no_platform_event_holds_a_float() -> None:
    assert _of(PlatformEvent, "platform") == []


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_no_event_of_a_game_holds_a_float(game_id: str) -> None:
    game = GAMES[game_id]
    assert _of(game.event_type, game_id) == []
    # what lobby.created carries as plain JSON, from these types
    assert _of(game.options_type, f"{game_id} options") == []
    assert _of(game.position_type, f"{game_id} position") == []


def test_the_walk_finds_a_float() -> None:
    import msgspec

    class Sample(msgspec.Struct):
        x: list[dict[str, float | None]]

    assert _of(Sample, "sample") == ["sample.x[]{}"]
