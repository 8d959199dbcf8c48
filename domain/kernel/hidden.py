"""Hidden values of events, and the salted commitments that stand for them in the hash chain.

A hash over a low-entropy secret (a crate's colour, a card, a private message) is a leak: anyone
holding the public bytes can try every value. So the chained ("public") form of an event holds,
in place of each hidden value, a commitment to it; the clear event is kept beside it, server
side, for folding.

How a game declares hidden fields
---------------------------------
A game overrides :meth:`domain.kernel.Game.hidden`: given one of its events, the list of
:class:`Secret` in it. A secret is the *path* of a value in the event's JSON data
(``msgspec.to_builtins(event)``; object keys as ``str``, list indices as ``int``) and the *seats*
that may read it while the game is live (empty: nobody, not even the seat that caused the
event). Everything not named is public. Paths of one event never nest (neither is a prefix of
the other), never name the ``type`` tag, and ``hidden`` is a pure function of the event. That is
all a game does: the service commits, redacts and opens every named value on every endpoint
(events, dispute files, exports, command answers), and the audit checks every commitment after
the end. Once the game is finished every seat's secrets are open to everyone. Example (CARGO)::

    def hidden(self, event):
        if isinstance(event, CratePlaced):
            return [Secret(("colour",))]          # face down: nobody reads it while live
        return []

Name each card of a hand separately (``("cards", 0)``, ``("cards", 1)``, …) when the number of
cards is public, and the whole value when even its size is secret.

Commitments (construction "v2"; fixed: changing it invalidates every stored chain)::

    path_bytes  = msgspec.json.encode(path)          # a JSON array, no whitespace: b'["cards",0]'
    salt        = HMAC-SHA256(key, b"hide" || u64be(version) || path_bytes)
    value_bytes = msgspec.json.encode(value, order="sorted")    # canonical JSON, keys sorted
    commitment  = SHA-256(salt || value_bytes)       # 32 bytes, written as 64 lowercase hex digits

``version`` is the event's version (its 1-based position in the game's stream). ``key`` is the
game's secret 32-byte seed for a game's own hidden values — revealed in ``seed.revealed`` when the
game ends, so anyone can then recompute every salt and check every commitment — and the game's
32-byte *message key* for private table talk, which is never revealed: a private message is
opened only to its addressees (each is given the salt of its path).

In the public form of an event, the value at each hidden path is replaced by the object
``{"commitment": "<64 hex digits>"}``. An *opening* of a path is its clear value and its salt:
whoever holds one recomputes the commitment, puts it back at the path and so recovers the public
form, whose canonical bytes the chain hashes (:mod:`ledger.chain`).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Iterable
from typing import Any

import msgspec

Path = tuple[str | int, ...]

#: The key of the object that stands for a hidden value in an event's public form.
COMMITMENT = "commitment"
_DOMAIN = b"hide"


class Secret(msgspec.Struct, frozen=True):
    """One hidden value of an event: where it is, and who may read it while the game is live."""

    path: Path
    #: The seats that may read the value while the game is live (empty: nobody).
    seats: tuple[int, ...] = ()


#: The name of the class attribute by which an event Struct (or a position Struct) declares
#: where its hidden values may be, for the OpenAPI document (an event as a caller reads it may
#: hold ``{"commitment": ...}`` there: ``service.http.gameschemas``): dotted paths of field
#: names, ``*`` standing for any list index (``"cards.*"``, ``"position.players.*.hand"``).
#: Every path :meth:`Game.hidden` returns matches one (``tests/domain/test_hidden.py``).
HIDDEN_PATHS = "hidden_paths"


def declared_paths(cls: type) -> tuple[str, ...]:
    """The hidden-path patterns ``cls`` declares (:data:`HIDDEN_PATHS`); none by default."""
    found: tuple[str, ...] = getattr(cls, HIDDEN_PATHS, ())
    return found


def matches(pattern: str, path: Path) -> bool:
    """Whether ``path`` (a :class:`Secret`'s) is one the ``pattern`` declares."""
    parts = pattern.split(".")
    return len(parts) == len(path) and all(
        (p == "*" and isinstance(step, int)) or p == step
        for p, step in zip(parts, path, strict=True)
    )


def path_bytes(path: Iterable[str | int]) -> bytes:
    return msgspec.json.encode(list(path))


def salt(key: bytes, version: int, path: Iterable[str | int]) -> bytes:
    """``HMAC-SHA256(key, b"hide" || u64be(version) || path_bytes)``."""
    message = _DOMAIN + version.to_bytes(8, "big") + path_bytes(path)
    return hmac.new(key, message, hashlib.sha256).digest()


def commitment(salt_bytes: bytes, value: Any) -> str:
    """``SHA-256(salt || canonical JSON of value)`` in hex."""
    return hashlib.sha256(salt_bytes + msgspec.json.encode(value, order="sorted")).hexdigest()


def sealed(digest: str) -> dict[str, str]:
    """What stands in the public form for a value committed to as ``digest``."""
    return {COMMITMENT: digest}


def is_sealed(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get(COMMITMENT), str)


def get_at(data: Any, path: Iterable[str | int]) -> Any:
    """The value at ``path`` (KeyError / IndexError / TypeError when there is none)."""
    for key in path:
        data = data[key]
    return data


def set_at(data: Any, path: Path, value: Any) -> Any:
    """A copy of ``data`` with ``value`` at ``path`` (only the containers on the path are
    copied; ``data`` is left as it was)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(data, dict):
        out: Any = dict(data)
    elif isinstance(data, list):
        out = list(data)
    else:
        raise TypeError(f"no container at {head!r}")
    out[head] = set_at(data[head], rest, value)
    return out


def public_form(
    data: Any, secrets: Iterable[Secret], version: int, key: bytes | Callable[[Secret], bytes]
) -> Any:
    """``data`` with the value at each secret's path replaced by its commitment (``key``: the
    key of every secret, or a function giving each secret's key)."""
    out = data
    for secret in secrets:
        k = key(secret) if callable(key) else key
        digest = commitment(salt(k, version, secret.path), get_at(data, secret.path))
        out = set_at(out, secret.path, sealed(digest))
    return out
