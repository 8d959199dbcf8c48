"""A marathon's failing game names its seed: ``with seeds.named(seed, n=n): ...`` around one
game's checks turns an ``AssertionError`` into one that starts with the game's number and seed
(hex), so the game is replayed alone with ``play_random_game(GAME, bytes.fromhex(...), ...)``."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def named(seed: bytes, **which: object) -> Iterator[None]:
    try:
        yield
    except AssertionError as error:
        where = " ".join(f"{k}={v}" for k, v in which.items())
        raise AssertionError(f"game {where} seed {seed.hex()}: {error}") from error
