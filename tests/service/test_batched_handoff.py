"""service/eventstore/batched.py, the hand-off between requests and their batch (no database:
what PostgreSQL does with a batch is in tests/integration/test_batched_appends.py): every
caller wakes up, with an answer or an error, whatever happens to the batch."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest

from service.eventstore.appending import CommandAppend
from service.eventstore.batched import Appends

#: An append's arguments, as optimistic.append_command builds them (one event).
ARGS = CommandAppend(
    game_id="g",
    version=0,
    head=b"h0",
    new_version=1,
    new_head=b"h1",
    at=datetime.now(UTC),
    status=None,
    result=None,
    seat=0,
    command_id="c",
    versions=[1],
    types=["t"],
    data=["{}"],
    prev_hashes=[b"h0"],
    hashes=[b"h1"],
    publics=[None],
    idempotency_key=None,
    command_type="move",
    body="{}",
    received_at=datetime.now(UTC),
    response="{}",
)


class Pool:
    """Answers the batch statement as ``answer`` says, after ``delay`` seconds."""

    def __init__(self, answer: Any, delay: float = 0.0) -> None:
        self.answer = answer
        self.delay = delay
        self.sent: list[int] = []

    async def fetchrow(self, sql: str, *columns: Any) -> Any:
        self.sent.append(len(columns[0]))
        await asyncio.sleep(self.delay)
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


def test_a_caller_that_gave_up_before_the_send_is_left_out() -> None:
    async def body() -> None:
        pool = Pool({"moved": [0, 1]})
        appends = Appends(pool, 32)
        calls = [asyncio.ensure_future(appends.append(ARGS)) for _ in range(3)]
        await asyncio.sleep(0)  # all three waiting
        calls[1].cancel()
        results = await asyncio.gather(*calls, return_exceptions=True)
        assert pool.sent == [2]
        assert results[0] is True and results[2] is True
        assert isinstance(results[1], asyncio.CancelledError)

    asyncio.run(body())


def test_a_batch_cancelled_at_shutdown_answers_each_member_with_an_error() -> None:
    async def body() -> None:
        appends = Appends(Pool({"moved": [0, 1]}, delay=30), 32)
        calls = [asyncio.ensure_future(appends.append(ARGS)) for _ in range(2)]
        await asyncio.sleep(0.05)
        for task in appends._tasks:
            task.cancel()
        results = await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 5)
        # an error the fault handling answers 503 ("may have been recorded"), not a cancellation
        assert all(type(r) is ConnectionError for r in results), results

    asyncio.run(body())


@pytest.mark.parametrize("answer", [None, {"nothing": 1}, RuntimeError("broken")])
def test_no_member_waits_forever_when_the_answer_is_unusable(answer: Any) -> None:
    async def body() -> None:
        appends = Appends(Pool(answer), 32)
        calls = [asyncio.ensure_future(appends.append(ARGS)) for _ in range(3)]
        results = await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 5)
        assert all(isinstance(r, Exception) for r in results), results

    asyncio.run(body())


def test_a_full_batch_goes_at_once_and_the_rest_follow() -> None:
    async def body() -> None:
        pool = Pool({"moved": [0, 1, 2]})
        appends = Appends(pool, 3)
        calls = [asyncio.ensure_future(appends.append(ARGS)) for _ in range(5)]
        results = await asyncio.wait_for(asyncio.gather(*calls), 5)
        assert pool.sent == [3, 2]
        assert results == [True, True, True, True, True]

    asyncio.run(body())


def test_alone_in_its_turn_an_append_is_sent_by_its_caller() -> None:
    async def body() -> None:
        pool = Pool({"moved": []})
        assert await Appends(pool, 32).append(ARGS) is False
        assert await Appends(pool, 1).append(ARGS) is False
        assert pool.sent == []

    asyncio.run(body())
