"""``GET /v1/games/{id}/audit``, computed once per (game, head).

The audit is a pure function of the stream up to the head (rejected commands are not
adjudicated), so its report is kept per game at the head it was computed for (an LRU of
``MANIFEST_AUDIT_CACHE`` games per process) and concurrent requests for the same head wait for
one computation. The answer carries an ``ETag`` naming the version, the head and the count of
refusals past the cap (the one part of the answer not fixed by the head); a client sending it
back in ``If-None-Match`` gets 304 without anything being computed.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec

from . import rejections
from .history import History
from .lru import LRU
from .problems import Problem


class AuditCache:
    def __init__(self, history: History, size: int, rejected_cap: int) -> None:
        self.history = history
        self.rejected_cap = rejected_cap
        self._reports: LRU[str, tuple[bytes, dict[str, Any]]] = LRU(max(1, size))
        self._running: dict[tuple[str, bytes], asyncio.Future[dict[str, Any]]] = {}
        #: how many reports were computed (for tests and metrics)
        self.computed = 0

    async def state(self, game_id: str) -> tuple[str, bytes, dict[str, int]]:
        """The ETag of the audit now, with the head and the refusals counted past the cap."""
        row = await self.history.store.get_game(game_id)
        if row is None:
            raise Problem(404, "game.not_found", f"no game {game_id}")
        unrecorded = await rejections.unrecorded(self.history.store.pool, game_id)
        etag = f'"{row.version}-{row.head.hex()[:32]}-{sum(unrecorded.values())}"'
        return etag, bytes(row.head), unrecorded

    async def report(self, game_id: str, head: bytes, unrecorded: dict[str, int]) -> bytes:
        cached = self._reports.get(game_id)
        if cached is not None and cached[0] == head:
            report = cached[1]
        else:
            report = await self._compute(game_id, head)
        answer = {
            **report,
            "rejected": {"cap_per_seat": self.rejected_cap, "unrecorded": unrecorded},
        }
        return msgspec.json.encode(answer)

    async def _compute(self, game_id: str, head: bytes) -> dict[str, Any]:
        key = (game_id, head)
        running = self._running.get(key)
        if running is not None:
            return await asyncio.shield(running)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._running[key] = future
        try:
            report = await self.history.audit(game_id)
            self.computed += 1
            chain = report.get("chain") or {}
            if chain.get("head") == head.hex():  # the game did not move meanwhile
                self._reports.put(game_id, (head, report))
            future.set_result(report)
            return report
        except BaseException as error:
            future.set_exception(error)
            future.exception()  # retrieved: no "never retrieved" warning if nobody waits
            raise
        finally:
            del self._running[key]
