"""Coarse deadlines (:mod:`infra.deadlines`) bound a block as ``asyncio.timeout`` does —
TimeoutError past the bound, nothing left behind within it, an outside cancellation kept as
one, nesting — from one loop timer per tick instead of one per block. On asyncio and uvloop."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
import uvloop

from infra.deadlines import Deadlines

TICK = 0.02
LOOPS = [pytest.param(asyncio.run, id="asyncio"), pytest.param(uvloop.run, id="uvloop")]
Run = Callable[[Coroutine[Any, Any, Any]], Any]


@pytest.mark.parametrize("run", LOOPS)
def test_a_block_past_its_bound_raises_timeout_error_within_a_tick(run: Run) -> None:
    async def main() -> tuple[float, int]:
        deadlines = Deadlines(tick=TICK)
        started = time.monotonic()
        with pytest.raises(TimeoutError), deadlines.within(0.1):
            await asyncio.Event().wait()  # blocks until cut
        task = asyncio.current_task()
        assert task is not None
        return time.monotonic() - started, task.cancelling()

    elapsed, cancelling = run(main())
    # Not early, but for the loop's clock: uvloop's loop.time() counts whole milliseconds and
    # is read once per loop turn (CI saw 0.09991 s); a tick late at most (and a loaded machine).
    assert 0.1 - 0.002 <= elapsed < 0.1 + TICK + 0.5
    assert cancelling == 0  # the task's cancellation was taken back, as asyncio.timeout does


@pytest.mark.parametrize("run", LOOPS)
def test_a_block_within_its_bound_leaves_nothing_behind(run: Run) -> None:
    async def main() -> None:
        deadlines = Deadlines(tick=TICK)
        for _ in range(3):
            with deadlines.within(0.05):
                await asyncio.sleep(0.01)
        await asyncio.sleep(0.15)  # past every deadline above: nothing may cancel this
        task = asyncio.current_task()
        assert task is not None and task.cancelling() == 0
        assert deadlines._open == {}
        assert deadlines._timer is None  # no timer runs while no block is in flight

    run(main())


@pytest.mark.parametrize("run", LOOPS)
def test_many_blocks_in_flight_share_one_timer(run: Run) -> None:
    async def main() -> None:
        deadlines = Deadlines(tick=TICK)
        timers: set[int] = set()

        async def one(i: int) -> int:
            with deadlines.within(5):
                timers.add(id(deadlines._timer))
                await asyncio.sleep(0)
            return i

        assert await asyncio.gather(*(one(i) for i in range(200))) == list(range(200))
        assert len(timers) == 1

    run(main())


@pytest.mark.parametrize("run", LOOPS)
def test_a_cancellation_from_outside_stays_a_cancellation(run: Run) -> None:
    async def main() -> None:
        deadlines = Deadlines(tick=TICK)

        async def bounded() -> None:
            with deadlines.within(0.05):
                await asyncio.Event().wait()  # blocks until cut

        task = asyncio.create_task(bounded())
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

        # Both at once: the deadline fires and, before the task runs again, it is cancelled
        # from outside too.
        async def stuck() -> None:
            with deadlines.within(0.01):
                await asyncio.Event().wait()  # blocks until cut

        while deadlines._timer is not None:  # the first block's timer has stopped
            await asyncio.sleep(TICK)
        check = deadlines._check

        def check_then_cancel() -> None:
            check()
            if any(b.fired for b in deadlines._open.values()):
                task.cancel()

        deadlines._check = check_then_cancel  # type: ignore[method-assign]
        task = asyncio.create_task(stuck())
        with pytest.raises(asyncio.CancelledError):
            await task

    run(main())


@pytest.mark.parametrize("run", LOOPS)
def test_bounds_nest(run: Run) -> None:
    async def main() -> list[str]:
        deadlines = Deadlines(tick=TICK)
        seen = []
        with deadlines.within(5):  # the inner, shorter one fires: the outer block goes on
            try:
                with deadlines.within(0.05):
                    await asyncio.Event().wait()  # blocks until cut
            except TimeoutError:
                seen.append("inner")
            await asyncio.sleep(0.01)
            seen.append("outer went on")
        try:
            # the outer, shorter one fires through the inner
            with deadlines.within(0.05), deadlines.within(5):
                await asyncio.Event().wait()  # blocks until cut
        except TimeoutError:
            seen.append("outer")
        return seen

    assert run(main()) == ["inner", "outer went on", "outer"]


def test_a_task_that_ended_inside_its_block_is_forgotten() -> None:
    async def main() -> None:
        deadlines = Deadlines(tick=TICK)

        async def leaves_without_exit() -> None:
            deadlines.within(5).__enter__()  # a block whose exit never runs

        await asyncio.create_task(leaves_without_exit())
        assert len(deadlines._open) == 1
        await asyncio.sleep(3 * TICK)
        assert deadlines._open == {}
        assert deadlines._timer is None

    asyncio.run(main())


def test_a_bound_needs_a_task() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        outside: asyncio.Future[BaseException] = loop.create_future()

        def callback() -> None:  # on the loop, but in no task
            try:
                Deadlines().within(1).__enter__()
            except RuntimeError as error:
                outside.set_result(error)

        loop.call_soon(callback)
        assert "task" in str(await outside)

    asyncio.run(main())


@pytest.mark.parametrize("run", LOOPS)
def test_a_swallowed_expiry_leaves_no_cancellation_behind(run: Run) -> None:
    async def main() -> int:
        deadlines = Deadlines(tick=TICK)
        # the block gives up by itself (as asyncio.timeout allows)
        with deadlines.within(0.01), contextlib.suppress(asyncio.CancelledError):
            await asyncio.Event().wait()  # blocks until cut
        task = asyncio.current_task()
        assert task is not None
        await asyncio.sleep(3 * TICK)  # a pending cancellation would land here
        return task.cancelling()

    assert run(main()) == 0


def test_a_failing_check_keeps_the_deadlines_watched() -> None:
    async def main() -> None:
        deadlines = Deadlines(tick=TICK)

        class Broken:
            @property
            def task(self) -> Any:
                raise RuntimeError("a bound that cannot be checked")

        loop = asyncio.get_running_loop()
        handler_saw: list[Any] = []
        loop.set_exception_handler(lambda _loop, context: handler_saw.append(context))
        with pytest.raises(TimeoutError), deadlines.within(0.1):
            deadlines._open[0] = Broken()  # type: ignore[assignment]
            await asyncio.Event().wait()  # still bounded: the broken entry is reported and dropped
        assert [c["message"] for c in handler_saw] == ["a deadline could not be checked"]
        assert deadlines._open == {}

    asyncio.run(main())
