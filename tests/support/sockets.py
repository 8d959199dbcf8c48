"""Who listens on a port and who holds its connections, read from /proc (Linux)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def _tcp_table() -> list[list[str]]:
    rows: list[list[str]] = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            rows += [line.split() for line in Path(table).read_text().splitlines()[1:]]
    return rows


def listeners(port: int) -> int:
    """Sockets listening on ``port`` (state 0A in /proc/net/tcp)."""
    return sum(1 for r in _tcp_table() if r[3] == "0A" and int(r[1].rsplit(":", 1)[1], 16) == port)


def connections_by_process(port: int, pids: set[int]) -> list[int]:
    """How many established connections to ``port`` each of ``pids`` holds, most first:
    how the kernel (or the first process to accept) spread the load clients' connections."""
    inodes = {
        r[9]: 0 for r in _tcp_table() if r[3] == "01" and int(r[1].rsplit(":", 1)[1], 16) == port
    }
    counts: dict[int, int] = {}
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                    if target.startswith("socket:[") and target[8:-1] in inodes:
                        counts[pid] = counts.get(pid, 0) + 1
    return sorted(counts.values(), reverse=True)
