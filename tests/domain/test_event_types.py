"""No game's events carry a float (issue 36): a game command's events are chained and signed
before the append (``ledger.ruling.chained``) and written as chained, which is exact only
because ``jsonb`` reads back every integer, string, bool and null as it was written — a float
it may respell (``1e+20`` → ``100000000000000000000``), and the stored chain would not verify.
Read from each game's event type with :mod:`msgspec.inspect`, so a float field added to any
event fails here."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from domain.platform.events import PlatformEvent
from domain.registry import GAMES


def floats_in(kind: Any) -> list[str]:
    """The paths to the float fields of a type, found through structs, unions and collections."""
    found: list[str] = []
    seen: set[int] = set()

    def walk(info: msgspec.inspect.Type, path: str) -> None:
        if isinstance(info, msgspec.inspect.FloatType):
            found.append(path or "<root>")
        elif isinstance(info, msgspec.inspect.StructType):
            if id(info.cls) in seen:
                return
            seen.add(id(info.cls))
            for field in info.fields:
                walk(field.type, f"{info.cls.__name__}.{field.name}")
        elif isinstance(info, msgspec.inspect.UnionType):
            for member in info.types:
                walk(member, path)
        elif isinstance(info, msgspec.inspect.ListType | msgspec.inspect.SetType):
            walk(info.item_type, f"{path}[]")
        elif isinstance(info, msgspec.inspect.TupleType):
            for member in info.item_types:
                walk(member, f"{path}()")
        elif isinstance(info, msgspec.inspect.VarTupleType):
            walk(info.item_type, f"{path}()")
        elif isinstance(info, msgspec.inspect.DictType):
            walk(info.value_type, f"{path}{{}}")

    walk(msgspec.inspect.type_info(kind), "")
    return found


@pytest.mark.parametrize("game", list(GAMES.values()), ids=lambda g: g.id)
def test_no_event_of_a_game_has_a_float(game: Any) -> None:
    assert floats_in(game.event_type) == []


def test_no_platform_event_has_a_float() -> None:
    assert floats_in(PlatformEvent) == []


class Moved(msgspec.Struct, tag="moved"):
    to: str
    speed: float | None = None


class Inner(msgspec.Struct):
    weights: dict[str, list[float]]


class Wrapped(msgspec.Struct, tag="wrapped"):
    inner: Inner


def test_a_float_field_is_found() -> None:
    assert floats_in(Moved | Wrapped) == ["Moved.speed", "Inner.weights{}[]"]
