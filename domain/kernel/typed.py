"""Turning JSON, or JSON already parsed into builtins, into typed values — fast.

``msgspec.convert(value, type=...)`` and ``msgspec.json.decode(raw, type=...)`` build the type's
decoding plan on every call; for a tagged union of a game's events that is ~10 µs, more than the
rest of folding an event. A :class:`msgspec.json.Decoder` builds it once. Builtins go through
JSON (encode, then the cached decoder: ~1 µs), which accepts and refuses exactly what
``convert`` does for values that came from JSON — the only values the platform converts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Union, get_args

import msgspec

_encoder = msgspec.json.Encoder()


_decoders: dict[Any, msgspec.json.Decoder[Any]] = {}


def decoder(target: Any) -> msgspec.json.Decoder[Any]:
    """The one JSON decoder of ``target`` (a type, or a union of Struct types)."""
    found = _decoders.get(target)
    if found is None:
        found = _decoders[target] = msgspec.json.Decoder(target)
    return found


def typed(raw: Mapping[str, Any] | bytes | str | Any, target: Any) -> Any:
    """``raw`` (JSON bytes/str, or JSON-shaped builtins) as a ``target``; raises
    :class:`msgspec.ValidationError` or :class:`msgspec.DecodeError` like ``msgspec`` does."""
    if isinstance(raw, (bytes, str)):
        return decoder(target).decode(raw)
    try:
        text = _encoder.encode(raw)
    except TypeError:  # not JSON-shaped after all: let convert judge it
        return msgspec.convert(raw, type=target)
    return decoder(target).decode(text)


def tag_of(struct: type[msgspec.Struct]) -> Any:
    """The tag a tagged Struct type carries on the wire (its ``type``)."""
    return struct.__struct_config__.tag


def union_with(union: Any, *readings: type[msgspec.Struct]) -> Any:
    """The tagged union ``union`` with each of ``readings`` in place of the member of the same
    tag: a game's event views are its events, but an event with hidden values is read through
    a type whose hidden fields may be null."""
    by_tag = {tag_of(r): r for r in readings}
    members = [by_tag.pop(tag_of(m), m) for m in get_args(union)]
    if by_tag:
        raise ValueError(f"no event of tags {sorted(by_tag)} in the union")
    return Union[tuple(members)]  # noqa: UP007 - built at run time
