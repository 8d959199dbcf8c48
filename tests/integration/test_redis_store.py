"""The Redis projection write: replaced only by a newer version, in one script that deletes no
key first (fields the new record lacks are removed, the others overwritten), and every Redis
failure raised as StoreUnavailable."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from projections.redis_store import _WRITE_IF_NEWER, RedisStore
from projections.store import StoreUnavailable


def test_write_if_newer_overwrites_in_place_and_refuses_older(redis_url: str) -> None:
    async def run() -> None:
        prefix = f"t{uuid.uuid4().hex[:12]}"
        store = RedisStore.from_url(redis_url, prefix)
        try:
            assert await store.write("g", 2, {"a": b"1", "b": b"2"})
            assert await store.write("g", 3, {"a": b"3"})  # b is gone, a overwritten
            assert await store.fields("g", ["version", "a", "b"]) == [b"3", b"3", None]
            assert not await store.write("g", 3, {"a": b"x"})  # not newer: refused
            assert not await store.write("g", 1, {"a": b"y"})
            assert await store.fields("g", ["a"]) == [b"3"]
        finally:
            await store.redis.delete(f"{prefix}:{{g}}:game")
            await store.close()

    asyncio.run(run())


def test_the_script_is_checked_against_maxmemory_before_it_runs() -> None:
    # The shebang makes Redis 7 refuse the whole script when full; no DEL to slip past it.
    assert _WRITE_IF_NEWER.startswith("#!lua\n")
    assert "'DEL'" not in _WRITE_IF_NEWER


def test_an_unreachable_redis_is_store_unavailable_quickly_then_at_once() -> None:
    async def run() -> None:
        # Nothing listens on port 1: refused at once; then the store skips Redis for a while.
        store = RedisStore.from_url("redis://127.0.0.1:1/0", "x", connect_timeout=0.5, timeout=0.5)
        try:
            with pytest.raises(StoreUnavailable):
                await store.fields("g", ["a"])
            with pytest.raises(StoreUnavailable, match="unreachable"):
                await store.write("g", 1, {"a": b"1"})
            assert not await store.ping()
        finally:
            await store.close()

    asyncio.run(run())
