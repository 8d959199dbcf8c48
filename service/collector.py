"""The cyclic garbage collector of a serving process (``MANIFEST_GC_THRESHOLD``).

CPython collects its youngest generation every 700 net container allocations. A request
allocates hundreds (decoded bodies, events, views, asyncio futures), almost all freed by
reference counting the moment the request ends, so under load a worker ran a collection ~160
times a second and every tenth or hundredth of them walked the older generations too (the cached
tables and states): 1.96 s of a worker's 25.5 s of CPU in a 20 s ``bench.e2e`` run, 7 %. With a
first threshold of 20,000 the same run spent 0.04 s collecting and moved 5–14 % more moves per
second (two pairs of runs). What it costs: cyclic garbage (tracebacks, finished tasks) lives up
to 20,000 allocations longer before it is found — a few megabytes at most. 0 leaves CPython's
default.
"""

from __future__ import annotations

import gc


def tune_collector(threshold: int) -> None:
    """Collect the youngest generation every ``threshold`` net allocations (0: CPython's
    default); the older generations keep their own thresholds."""
    if threshold > 0:
        _, older, oldest = gc.get_threshold()
        gc.set_threshold(threshold, older, oldest)
