"""The background projection writer: the answer never waits for it, failures are retried,
counted and shown as lag, and what is still pending after the retries is picked up again by
the catch-up worker's pass."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import pytest

from projections import projector as projector_module
from projections.projector import FAILURES, Projector
from projections.store import MemoryStore, StoreUnavailable


class Flaky(MemoryStore):
    """Fails the first ``failures`` writes (as a full or stalled Redis does)."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures
        self.attempts = 0

    async def write(self, game_id: str, version: int, fields: Mapping[str, bytes]) -> bool:
        self.attempts += 1
        if self.failures > 0:
            self.failures -= 1
            raise StoreUnavailable("redis: OOM command not allowed")
        return await super().write(game_id, version, fields)


def table(version: int) -> Any:
    return SimpleNamespace(game_id="g", version=version)


@pytest.fixture(autouse=True)
def plain_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        projector_module, "table_fields", lambda t, known=None: {"doc": str(t.version).encode()}
    )


async def _no_events(game_id: str, after: int) -> list[Any]:
    return []


def test_failures_are_retried_and_counted_and_the_newest_table_wins() -> None:
    async def run() -> None:
        store = Flaky(failures=2)
        p = Projector(store, _no_events, retries=3, backoff=0.01)
        before = FAILURES.labels(stage="view")._value.get()
        p.schedule(table(5))  # returns at once: nothing awaited
        p.schedule(table(7))
        p.schedule(table(6))  # older than what is pending: ignored
        assert p.lag() >= 0 and "g" in p._pending
        await p.drain(timeout=5)
        assert await store.version("g") == 7
        assert FAILURES.labels(stage="view")._value.get() - before == 2
        assert p.lag() == 0 and not p._pending

    asyncio.run(run())


def test_a_write_still_failing_stays_pending_with_its_lag_until_the_next_pass() -> None:
    async def run() -> None:
        store = Flaky(failures=5)
        p = Projector(store, _no_events, retries=2, backoff=0.01)
        p.schedule(table(3), snapshots={100: b"snap"})
        await p.drain(timeout=5)
        assert store.attempts == 2 and "g" in p._pending  # gave up: left to the worker
        await asyncio.sleep(0.05)
        assert p.lag() >= 0.05
        while "g" in p._pending:  # each catch-up pass starts the writer again
            assert p.retry_pending() == 1
            await p.drain(timeout=5)
        assert await store.version("g") == 3
        assert await store.snapshot("g", 100) == b"snap"  # written after the view
        assert p.lag() == 0

    asyncio.run(run())
