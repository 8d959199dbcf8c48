"""The per-event seeded generator.

Every game has a secret 32-byte seed. The generator handed to ``decide`` for the command that
will produce event number ``n`` is a pure function of ``(seed, n)``, so re-running ``decide`` on a
stored command reproduces the stored events exactly, on any platform and Python version.

Construction (version 1), SHA-256 in counter mode::

    block_i = SHA-256( b"manifest.rng.v1" || seed || u64be(n) || u64be(i) )    i = 0, 1, 2, ...

The blocks are concatenated into a byte stream. ``below(k)`` draws a uniform integer in
``[0, k)`` by rejection sampling: it reads 8 bytes as an unsigned big-endian integer ``x`` and
accepts it when ``x < 2**64 - (2**64 % k)``, returning ``x % k``. Everything else (dice, choice,
shuffle) is built on ``below``; ``shuffle`` is the Fisher–Yates shuffle drawing
``below(i + 1)`` for ``i`` from ``len - 1`` down to 1.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

_DOMAIN = b"manifest.rng.v1"
_SPAN = 1 << 64


class Rng:
    """Deterministic generator for one event number of one game."""

    __slots__ = ("_buffer", "_counter", "_prefix", "draws")

    def __init__(self, seed: bytes, event_number: int) -> None:
        if len(seed) != 32:
            raise ValueError("a game seed is exactly 32 bytes")
        if event_number < 0:
            raise ValueError("event numbers are non-negative")
        self._prefix = _DOMAIN + seed + event_number.to_bytes(8, "big")
        self._counter = 0
        self._buffer = b""
        self.draws = 0

    def _take(self, count: int) -> bytes:
        while len(self._buffer) < count:
            block = hashlib.sha256(self._prefix + self._counter.to_bytes(8, "big")).digest()
            self._buffer += block
            self._counter += 1
        taken, self._buffer = self._buffer[:count], self._buffer[count:]
        return taken

    def below(self, k: int) -> int:
        """A uniform integer in ``[0, k)``."""
        if k <= 0:
            raise ValueError("below() needs a positive bound")
        self.draws += 1
        limit = _SPAN - (_SPAN % k)
        while True:
            x = int.from_bytes(self._take(8), "big")
            if x < limit:
                return x % k

    def die(self, sides: int = 6) -> int:
        """A roll of a fair die numbered 1..sides."""
        return self.below(sides) + 1

    def choice(self, items: Sequence[T]) -> T:
        if not items:
            raise ValueError("choice() from an empty sequence")
        return items[self.below(len(items))]

    def shuffled(self, items: Sequence[T]) -> list[T]:
        """A new list with the items in a uniformly random order (Fisher–Yates)."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out


def seed_commitment(seed: bytes) -> str:
    """The public commitment to a seed: hex SHA-256 of the seed bytes."""
    return hashlib.sha256(seed).hexdigest()
