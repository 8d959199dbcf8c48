"""Bounds on the numbers of a position: a position is hostile input (any client may send one),
so every integer of every game's position form (its options too) carries a documented range
on its type, ``Annotated[int, between(lo, hi)]``, inside int64, and tighter where the game
gives a sense (a seat number, a card id, a few turns). The range is in the position's JSON
schema (``GET /v1/rules``: ``minimum``/``maximum``) and :func:`check` enforces it when a
position is imported (``Game.decode_position``): a number outside it is
``position.out_of_range`` naming the field, before any rule sees it.

Why a check at import and not msgspec's own ``Meta(ge=, le=)``: msgspec would enforce those
on every decoding of the type, and a recorded ``position_loaded`` event carries the position —
so a stream recorded before a bound was tightened would stop folding, and a stored stream
always folds (``tests/domain/test_folding_checks_nothing.py``). A field added later without a
range is caught by ``tests/domain/test_position_bounds.py``, which walks every position type.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import msgspec
import msgspec.inspect as mi

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def between(lo: int, hi: int) -> msgspec.Meta:
    """The documented range ``lo`` to ``hi`` (both included) of an integer field."""
    if not INT64_MIN <= lo <= hi <= INT64_MAX:
        raise ValueError(f"a range inside int64, not {lo} to {hi}")
    return msgspec.Meta(extra_json_schema={"minimum": lo, "maximum": hi})


def range_of(t: mi.Type) -> tuple[int, int] | None:
    """The documented range of an integer type (``between``), or None."""
    if isinstance(t, mi.Metadata) and isinstance(t.type, mi.IntType):
        extra = t.extra_json_schema or {}
        lo, hi = extra.get("minimum"), extra.get("maximum")
        if isinstance(lo, int) and isinstance(hi, int):
            return lo, hi
    return None


class OutOfRange(Exception):
    """A number outside its field's range: ``field`` (``players[0].skip``), the value's side."""

    def __init__(self, field: str, value: int, lo: int, hi: int, key: bool) -> None:
        self.field = field
        self.bound = {"maximum": hi} if value > hi else {"minimum": lo}
        word = f"at most {hi}" if value > hi else f"at least {lo}"
        super().__init__(f"{'a key of ' if key else ''}{field} is {word}")


@cache
def _info(target: type) -> mi.Type:
    return mi.type_info(target)


def check(value: msgspec.Struct) -> None:
    """Raise :class:`OutOfRange` for the first integer of ``value`` (a decoded position or
    options Struct) outside its documented range."""
    _walk(value, _info(type(value)), "")


def _walk(value: Any, t: mi.Type, at: str) -> None:
    bounds = range_of(t)
    if bounds is not None:
        lo, hi = bounds
        if isinstance(value, int) and not lo <= value <= hi:
            raise OutOfRange(at or "$", value, lo, hi, key=False)
        return
    if isinstance(t, mi.Metadata):
        _walk(value, t.type, at)
    elif isinstance(t, mi.StructType):
        for f in t.fields:
            _walk(getattr(value, f.name), f.type, f"{at}.{f.encode_name}" if at else f.encode_name)
    elif isinstance(t, (mi.ListType, mi.VarTupleType, mi.SetType, mi.FrozenSetType)):
        for i, item in enumerate(value):
            _walk(item, t.item_type, f"{at}[{i}]")
    elif isinstance(t, mi.DictType):
        keys = range_of(t.key_type)
        for k, v in value.items():
            if keys is not None and isinstance(k, int) and not keys[0] <= k <= keys[1]:
                raise OutOfRange(at, k, *keys, key=True)
            _walk(v, t.value_type, f"{at}[{k!r}]")
    elif isinstance(t, mi.UnionType) and value is not None:
        others = [x for x in t.types if not isinstance(x, mi.NoneType)]
        if len(others) == 1:  # an optional value (the only unions of a position)
            _walk(value, others[0], at)
            return
        for alternative in others:
            struct = isinstance(alternative, mi.StructType) and isinstance(value, alternative.cls)
            number = range_of(alternative) is not None and isinstance(value, int)
            if struct or number:
                _walk(value, alternative, at)
