"""The heavy-read bulkhead and byte ranges (``service/http/bulkhead.py``), without a server:
the caps per client and per process with their problem answers, slots given back on error,
and the ``Range`` forms (docs/api.md, "Replay")."""

from __future__ import annotations

import asyncio

import pytest

from service.http.bulkhead import Bulkhead, _range
from service.problems import Problem


def test_caps_answer_429_per_client_then_503_per_process_and_free_their_slots() -> None:
    async def run() -> None:
        gate = Bulkhead(per_client=1, per_process=2, retry_after=7)
        async with gate.slot(b"a", "replay"):
            with pytest.raises(Problem) as mine:
                async with gate.slot(b"a", "export"):
                    raise AssertionError("admitted past the client's cap")
            assert mine.value.status == 429 and mine.value.code == "rate.limited"
            assert mine.value.headers["Retry-After"] == "7"
            assert mine.value.extra["quota"] == "heavy_concurrent"
            async with gate.slot(b"b", "replay"):
                with pytest.raises(Problem) as full:
                    async with gate.slot(b"c", "audit"):
                        raise AssertionError("admitted past the process's cap")
                assert full.value.status == 503 and full.value.code == "service.unavailable"
                assert full.value.headers["Retry-After"] == "7"
        assert gate.running == 0 and gate.refused == {429: 1, 503: 1}
        with pytest.raises(ValueError):  # a failing read gives its slot back
            async with gate.slot(b"a", "replay"):
                raise ValueError
        async with gate.slot(b"a", "replay"), gate.slot(b"b", "replay"):
            assert gate.running == 2

    asyncio.run(run())


@pytest.mark.parametrize(
    ("spec", "size", "expected"),
    [
        ("bytes=0-99", 1000, (0, 99)),
        ("bytes=990-2000", 1000, (990, 999)),  # a last byte past the end: to the end
        ("bytes=5-", 1000, (5, 999)),
        ("bytes=-10", 1000, (990, 999)),
        ("bytes=-5000", 1000, (0, 999)),
        ("bytes=1000-", 1000, False),  # starts past the end: 416
        ("bytes=-0", 1000, False),
        ("bytes=0-", 0, False),
        ("bytes=0-1,5-6", 1000, None),  # several ranges: the whole body
        ("bytes=9-3", 1000, None),  # invalid: ignored
        ("items=0-3", 1000, None),
        ("bytes=a-b", 1000, None),
        ("bytes=", 1000, None),
        ("bytes=-", 1000, None),
        # not ASCII digits (headers are Latin-1: "²".isdigit() but int("²") raises): ignored
        ("bytes=\u00b2-", 1000, None),
        ("bytes=0-\u00b3", 1000, None),
        ("bytes=-\u00b9", 1000, None),
        # past Python's int-from-text digit limit (4,300): a number past any end, not a 500
        ("bytes=" + "9" * 5000 + "-", 1000, False),
        ("bytes=0-" + "9" * 5000, 1000, (0, 999)),
        ("bytes=-" + "9" * 5000, 1000, (0, 999)),
        ("bytes=" + "0" * 30 + "5-", 1000, (5, 999)),  # leading zeros are still a number
    ],
)
def test_range_forms(spec: str, size: int, expected: object) -> None:
    assert _range(spec, size) == expected


def test_a_shared_computation_outlives_the_cancelled_request_that_started_it() -> None:
    """Requests for the same kept document wait for one computation (``Kept._once``). When the
    request that started it is cancelled (its client gone, the server's deadline), the others
    still get the document — the first one's cancellation is not theirs."""
    from typing import Any, cast

    from service.application.kept import Kept

    async def run() -> None:
        kept = Kept(cast(Any, None))
        gate = asyncio.Event()
        started = asyncio.Event()
        calls = 0

        async def compute() -> bytes:
            nonlocal calls
            calls += 1
            started.set()
            await gate.wait()
            return b"document"

        first = asyncio.create_task(kept._once(("replay", "g"), compute))
        await started.wait()
        second = asyncio.create_task(kept._once(("replay", "g"), compute))
        await asyncio.sleep(0)  # the second now waits on the first's computation
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        gate.set()
        assert await second == b"document"
        assert calls == 2 and not kept._running  # computed again, for the one still waiting

    asyncio.run(run())
