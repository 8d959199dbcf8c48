"""A deep copy of a game's state, written once for every state type.

``evolve`` applies an event to a copy of the state. :func:`copier` reads a msgspec Struct's
field types (``msgspec.inspect``) and writes, once per type, the copy function one would write by
hand: scalars, strings, literals and frozen Structs are shared; lists and dicts are copied (their
items too where those are mutable); mutable Structs are copied field by field, recursively. The
generated code is plain Python, as fast as the hand-written copies it replaces::

    class State(msgspec.Struct):
        ...
        def copy(self) -> State:
            return _copy(self)

    _copy = copier(State)
"""

from __future__ import annotations

import copy as _stdlib_copy
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec
import msgspec.inspect as mi

T = TypeVar("T")

_IMMUTABLE = (
    mi.IntType,
    mi.FloatType,
    mi.StrType,
    mi.BoolType,
    mi.NoneType,
    mi.LiteralType,
    mi.BytesType,
    mi.EnumType,
)

_copiers: dict[type[Any], Callable[[Any], Any]] = {}
_building: set[type[Any]] = set()


def _frozen(cls: type[Any]) -> bool:
    return bool(cls.__struct_config__.frozen)


def _immutable(t: mi.Type) -> bool:
    if isinstance(t, _IMMUTABLE):
        return True
    if isinstance(t, mi.StructType):
        return _frozen(t.cls)
    if isinstance(t, mi.UnionType):
        return all(_immutable(member) for member in t.types)
    return False


class _Writer:
    """Writes the expression that copies a value of a given type."""

    def __init__(self) -> None:
        self.names: dict[str, Any] = {"_deepcopy": _stdlib_copy.deepcopy}
        self.depth = 0

    def expression(self, value: str, t: mi.Type) -> str:
        if _immutable(t):
            return value
        if isinstance(t, mi.ListType):
            if _immutable(t.item_type):
                return f"list({value})"
            item = self._fresh()
            return f"[{self.expression(item, t.item_type)} for {item} in {value}]"
        if isinstance(t, mi.DictType) and _immutable(t.key_type):
            if _immutable(t.value_type):
                return f"dict({value})"
            key, item = self._fresh(), self._fresh()
            inner = self.expression(item, t.value_type)
            return f"{{{key}: {inner} for {key}, {item} in {value}.items()}}"
        if isinstance(t, mi.StructType):
            name = f"_copy_{t.cls.__name__}_{id(t.cls)}"
            # A type that refers back to one being built gets its copier on first use.
            self.names[name] = _Lazy(t.cls) if t.cls in _building else copier(t.cls)
            return f"{name}({value})"
        if isinstance(t, mi.UnionType):
            others = [m for m in t.types if not isinstance(m, mi.NoneType)]
            if len(others) == 1 and len(t.types) == 2:
                return f"(None if {value} is None else {self.expression(value, others[0])})"
        return f"_deepcopy({value})"

    def _fresh(self) -> str:
        self.depth += 1
        return f"_v{self.depth}"


class _Lazy:
    """A nested Struct's copier, built on first use (types may refer to each other)."""

    __slots__ = ("cls", "fn")

    def __init__(self, cls: type[Any]) -> None:
        self.cls = cls
        self.fn: Callable[[Any], Any] | None = None

    def __call__(self, value: Any) -> Any:
        fn = self.fn
        if fn is None:
            fn = self.fn = copier(self.cls)
        return fn(value)


def copier(cls: type[T]) -> Callable[[T], T]:
    """The deep-copy function of the msgspec Struct type ``cls`` (built once, then cached)."""
    found = _copiers.get(cls)
    if found is not None:
        return found
    if not (isinstance(cls, type) and issubclass(cls, msgspec.Struct)):
        raise TypeError(f"copier() takes a msgspec Struct type, not {cls!r}")
    info = mi.type_info(cls)
    if not isinstance(info, mi.StructType):
        raise TypeError(f"{cls.__name__} is not a plain Struct type")
    writer = _Writer()
    _building.add(cls)
    try:
        args = ", ".join(writer.expression(f"s.{f.name}", f.type) for f in info.fields)
    finally:
        _building.discard(cls)
    writer.names["_cls"] = cls
    source = f"def _copy(s):\n    return _cls({args})\n"
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<copier of {cls.__qualname__}>", "exec"), writer.names, namespace)
    made: Callable[[T], T] = namespace["_copy"]
    made.__doc__ = f"A deep copy of a {cls.__qualname__}.\n\n{source}"
    _copiers[cls] = made
    return made
