"""The background projection writer: the answer never waits for it, failures are retried,
counted and shown as lag, and what is still pending after the retries is picked up again by
the catch-up worker's pass."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import pytest
import structlog

from projections import projector as projector_module
from projections.projector import FAILURES, IDLE_WRITERS, Projector
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


def game(game_id: str, version: int) -> Any:
    return SimpleNamespace(game_id=game_id, version=version)


class Slow(MemoryStore):
    """Every write waits for ``gate`` (to hold many writers busy at once) and notes the log
    context it runs in."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.contexts: list[dict[str, Any]] = []

    async def write(self, game_id: str, version: int, fields: Mapping[str, bytes]) -> bool:
        self.contexts.append(structlog.contextvars.get_contextvars())
        await self.gate.wait()
        return await super().write(game_id, version, fields)


async def _written(p: Projector, game_id: str) -> None:
    while game_id in p._pending:
        await asyncio.sleep(0.001)


async def _with_an_idle_writer() -> tuple[Slow, Projector]:
    """A projector whose one writer has written game "a" and waits for the next game."""
    store = Slow()
    store.gate.set()
    p = Projector(store, _no_events)
    p.schedule(game("a", 1))
    await _written(p, "a")
    return store, p


def test_a_writer_goes_on_to_the_next_game_instead_of_a_task_per_move() -> None:
    async def run() -> None:
        store, p = await _with_an_idle_writer()
        (writer,) = p._tasks
        for i, game_id in enumerate(["b", "c", "a", "b"]):
            p.schedule(game(game_id, 2 + i))
            await _written(p, game_id)
        assert p._tasks == {writer} and not writer.done()  # the same task wrote them all
        assert [await store.version(g) for g in "abc"] == [4, 5, 3]
        await p.drain(timeout=5)
        assert writer.done() and not p._tasks and not p._idle  # drain ends the idle writers

    asyncio.run(run())


def test_games_written_at_once_each_get_a_writer_and_few_stay_idle() -> None:
    async def run() -> None:
        store = Slow()
        p = Projector(store, _no_events)
        for i in range(40):
            p.schedule(game(f"g{i}", 1))
        await asyncio.sleep(0.01)
        assert len(store.contexts) == 40  # all 40 writes in flight together: none waits
        store.gate.set()
        while p._pending:
            await asyncio.sleep(0.001)
        await asyncio.sleep(0.01)
        assert len(p._tasks) == IDLE_WRITERS == len(p._idle)
        await p.drain(timeout=5)
        assert not p._tasks

    asyncio.run(run())


def test_a_writer_carries_no_request_context() -> None:
    async def run() -> None:
        store = Slow()
        store.gate.set()
        p = Projector(store, _no_events)
        for request_id in ["r1", "r2"]:
            structlog.contextvars.bind_contextvars(request_id=request_id, seat=1)
            p.schedule(game("g", len(store.contexts) + 1))
            structlog.contextvars.clear_contextvars()
            while p._pending:
                await asyncio.sleep(0.001)
        assert store.contexts == [{}, {}]  # not r1's, and not r1's again for r2
        await p.drain(timeout=5)

    asyncio.run(run())


def test_a_game_handed_to_a_writer_cancelled_before_it_ran_can_be_written_later() -> None:
    async def run() -> None:
        store, p = await _with_an_idle_writer()
        p.schedule(game("b", 1))  # handed to the idle writer, which has not run yet
        await p.drain(timeout=0)  # ... and is cancelled (shutdown) before it does
        assert "b" not in p._writing
        p.schedule(game("b", 2))  # a later schedule is not skipped as "being written"
        await _written(p, "b")
        assert await store.version("b") == 2
        await p.drain(timeout=5)

    asyncio.run(run())


def test_no_writer_outlives_drain_even_when_a_write_arrives_during_it() -> None:
    async def run() -> None:
        _, p = await _with_an_idle_writer()
        p.schedule(game("b", 1))
        draining = asyncio.create_task(p.drain(timeout=0))
        await asyncio.sleep(0)  # drain is cancelling and gathering the writers
        p.schedule(game("c", 1))  # a write scheduled in the middle of it
        await draining
        assert all(task.done() for task in p._tasks) and not p._idle

    asyncio.run(run())
