"""The bounds of refused commands' storage, without a server (issue 25): a body kept whole or
as a prefix with the hash of the whole, the per-client and per-process budgets as token
buckets, and the over-budget counts written in batches (``service/eventstore/rejections.py``).
The integration tests (``tests/integration/test_refusal_storage.py``) run them against
PostgreSQL."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

from service.eventstore.rejections import Bounded, Budget, Tally, canonical_body


def test_a_short_body_is_kept_whole_with_its_hash() -> None:
    body = {"expected_version": 3, "command": {"type": "pass"}}
    raw = b'{"command":{"type":"pass"},"expected_version":3}'
    assert canonical_body(body) == raw  # keys sorted, no spaces
    kept = Bounded.of(body, len(raw))
    assert (kept.body, kept.prefix, kept.size) == (body, None, len(raw))
    assert kept.sha256 == hashlib.sha256(raw).digest()
    assert kept.stored_bytes() == len(raw)


def test_a_long_body_is_cut_at_a_character_boundary() -> None:
    body = {"command": {"type": "say", "text": "é" * 100}}
    raw = canonical_body(body)
    prefix_end = raw.index(b"\xc3") + 1  # the first byte of an é: a cut inside a character
    kept = Bounded.of(body, prefix_end)
    assert kept.body is None and kept.size == len(raw)
    assert kept.prefix == raw[: prefix_end - 1].decode()  # the partial character is dropped
    assert kept.sha256 == hashlib.sha256(raw).digest()
    assert kept.stored_bytes() == prefix_end - 1
    assert Bounded.of(body, 0).prefix == ""


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_each_client_has_its_budget_refilled_over_the_minute() -> None:
    clock = Clock()
    budget = Budget(per_client=3, bytes_per_minute=0, clock=clock)
    assert [budget.take("a", 10) for _ in range(4)] == [True, True, True, False]
    assert budget.take("b", 10)  # another address: a bucket of its own
    clock.now += 20.0  # a third of a minute: one refusal's worth
    assert budget.take("a", 10) and not budget.take("a", 10)


def test_the_bytes_budget_is_shared_and_spends_nothing_when_refused() -> None:
    clock = Clock()
    budget = Budget(per_client=2, bytes_per_minute=1000, clock=clock)
    assert budget.take("a", 600)
    assert not budget.take("b", 600)  # 400 bytes left, whichever client asks
    assert budget.take("b", 400)
    # refused for bytes: "c" keeps both its refusals
    assert not budget.take("c", 1)
    clock.now += 60.0
    assert budget.take("c", 500) and budget.take("c", 500) and not budget.take("c", 0)


def test_zero_turns_a_budget_off() -> None:
    budget = Budget(per_client=0, bytes_per_minute=0, clock=Clock())
    assert all(budget.take("a", 10**9) for _ in range(1000))


class FakePool:
    """Records the counts written; fails the first ``fail`` writes."""

    def __init__(self, fail: int = 0) -> None:
        self.fail = fail
        self.written: list[dict[tuple[str, int], int]] = []

    async def execute(
        self, sql: str, games: list[Any], seats: list[int], counts: list[int]
    ) -> None:
        if self.fail:
            self.fail -= 1
            raise OSError("PostgreSQL is down")
        self.written.append({(str(g), s): n for g, s, n in zip(games, seats, counts, strict=True)})


async def until(condition: Any) -> None:
    for _ in range(3000):  # a generous bound (30 s), not a timing
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the counts were never written")


GAME = "6f1c2a6e-8d2b-4a3e-9a0c-2b1d3e4f5a6b"


def test_over_budget_refusals_are_written_together_and_kept_through_a_failure() -> None:
    async def run() -> list[dict[tuple[str, int], int]]:
        pool = FakePool(fail=1)
        tally = Tally(pool, every=0.01)
        for seat in (0, 0, 1, 0):
            tally.add(GAME, seat)
        await until(lambda: len(pool.written) == 1)  # the first write failed: kept for the next
        tally.add(GAME, 1)
        await until(lambda: len(pool.written) == 2)
        return pool.written

    written = asyncio.run(run())
    assert written == [{(GAME, 0): 3, (GAME, 1): 1}, {(GAME, 1): 1}]


class SlowPool(FakePool):
    """Its first write waits until ``release`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.writing = asyncio.Event()
        self.release = asyncio.Event()

    async def execute(
        self, sql: str, games: list[Any], seats: list[int], counts: list[int]
    ) -> None:
        if not self.written:
            self.writing.set()
            await self.release.wait()
        await super().execute(sql, games, seats, counts)


def test_refusals_counted_while_a_write_is_under_way_are_written_without_another() -> None:
    """Review of issue 25: a refusal counted while the batch was being written found the flush
    task still running and started none; once the write ended nothing looked at the counts
    again, so they waited in memory for the next refusal over budget — forever, if the flood
    had stopped (the audit's ``over_budget`` stayed short, lost when the process stopped)."""

    async def run() -> list[dict[tuple[str, int], int]]:
        pool = SlowPool()
        tally = Tally(pool, every=0.01)
        tally.add(GAME, 0)
        await pool.writing.wait()
        tally.add(GAME, 1)  # during the write; then no refusal at all
        pool.release.set()
        await until(lambda: len(pool.written) == 2)
        return pool.written

    assert asyncio.run(run()) == [{(GAME, 0): 1}, {(GAME, 1): 1}]
