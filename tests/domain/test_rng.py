"""The per-event generator: a documented, platform-independent construction."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from domain.kernel import Rng, seed_commitment


def reference_below(seed: bytes, event: int, k: int) -> int:
    """``below(k)`` for the first draw, straight from the construction in ``rng.py``."""
    stream = b"".join(
        hashlib.sha256(
            b"manifest.rng.v1" + seed + event.to_bytes(8, "big") + i.to_bytes(8, "big")
        ).digest()
        for i in range(4)
    )
    limit = 2**64 - (2**64 % k)
    for offset in range(0, len(stream), 8):
        x = int.from_bytes(stream[offset : offset + 8], "big")
        if x < limit:
            return x % k
    raise AssertionError("no accepted draw in four blocks")


@pytest.mark.parametrize("k", [2, 6, 52, 60, 1000, 2**63 + 5])
@pytest.mark.parametrize("event", [0, 1, 2, 4096])
def test_first_draw_follows_the_documented_construction(event: int, k: int) -> None:
    seed = hashlib.sha256(b"fixture").digest()
    assert Rng(seed, event).below(k) == reference_below(seed, event, k)


def test_pinned_values_never_change() -> None:
    """Replays of stored games depend on these exact numbers, forever."""
    r = Rng(bytes(32), 1)
    assert [r.below(6) for _ in range(8)] == [5, 4, 5, 2, 0, 2, 5, 5]
    assert Rng(bytes(range(32)), 7).shuffled(range(10)) == [3, 5, 4, 1, 2, 0, 9, 6, 8, 7]
    r = Rng(bytes(32), 1)
    assert [r.die() for _ in range(5)] == [6, 5, 6, 3, 1]


def test_same_seed_and_event_repeat_and_others_differ() -> None:
    seed = bytes(range(32))
    first = [Rng(seed, 5).below(1 << 30) for _ in range(3)]
    assert first == [Rng(seed, 5).below(1 << 30) for _ in range(3)]
    assert Rng(seed, 5).below(1 << 30) != Rng(seed, 6).below(1 << 30)
    assert Rng(seed, 5).below(1 << 30) != Rng(bytes(32), 5).below(1 << 30)


def test_draws_are_roughly_uniform() -> None:
    r = Rng(bytes(32), 3)
    counts = Counter(r.die() for _ in range(60_000))
    assert set(counts) == {1, 2, 3, 4, 5, 6}
    assert all(9_400 < n < 10_600 for n in counts.values()), counts


def test_shuffle_is_a_permutation_and_choice_picks_a_member() -> None:
    r = Rng(bytes(32), 9)
    items = list(range(40))
    assert sorted(r.shuffled(items)) == items
    assert r.choice("abc") in "abc"


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError):
        Rng(b"short", 1)
    with pytest.raises(ValueError):
        Rng(bytes(32), -1)
    with pytest.raises(ValueError):
        Rng(bytes(32), 1).below(0)
    with pytest.raises(ValueError):
        Rng(bytes(32), 1).choice([])


def test_commitment_is_sha256_of_the_seed() -> None:
    seed = bytes(range(32))
    assert seed_commitment(seed) == hashlib.sha256(seed).hexdigest()
