"""``GET /v1/games/{id}/audit``, computed once per state of the game's stored material.

An audit must catch any edit of the stored rows, including edits that leave the game's head
untouched — so a report is not keyed by the head alone but by a *fingerprint* of everything the
audit reads: a SHA-256, computed inside PostgreSQL, over the row versions (``xmin``, ``ctid``)
of every event, command, secret and game row of the game, and the refusals counted past the
cap. Any write to any of those rows changes it. It costs one statement that returns 32 bytes;
re-adjudicating a game (re-running ``decide`` for every command) is what it saves: about 8 ms
against 300 ms for a 2,000-event game (``python -m bench.audit``). Reports are kept per game
(an LRU of ``MANIFEST_AUDIT_CACHE`` games per process), concurrent requests for the same
fingerprint wait for one computation, and the answer's ``ETag`` is the fingerprint: a client
sending it in ``If-None-Match`` gets 304 without anything being computed. A finished game's
report is also kept in PostgreSQL under its fingerprint (``migrations/0008_kept_documents.sql``),
so another process, or this one after a restart, reads it instead of re-adjudicating.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec

from infra.lru import LRU
from service.application.errors import NotFound
from service.application.history import History
from service.eventstore import kept, rejections


class AuditCache:
    def __init__(self, history: History, size: int, rejected_cap: int) -> None:
        self.history = history
        self.rejected_cap = rejected_cap
        self._reports: LRU[str, tuple[bytes, dict[str, Any]]] = LRU(max(1, size))
        self._running: dict[tuple[str, bytes], asyncio.Future[dict[str, Any]]] = {}
        #: how many reports were computed (for tests and metrics)
        self.computed = 0

    async def state(self, game_id: str) -> tuple[str, bytes, rejections.Unrecorded]:
        """The ETag of the audit now, the fingerprint it names, and the refusals counted but
        not recorded (past the cap or a storage budget)."""
        fingerprint = await self.history.store.fingerprint(game_id)
        if fingerprint is None:
            raise NotFound("game.not_found", f"no game {game_id}")
        unrecorded = await self.history.store.unrecorded_refusals(game_id)
        return f'"{bytes(fingerprint).hex()[:40]}"', bytes(fingerprint), unrecorded

    async def report(
        self, game_id: str, fingerprint: bytes, unrecorded: rejections.Unrecorded
    ) -> bytes:
        cached = self._reports.get(game_id)
        if cached is not None and cached[0] == fingerprint:
            report = cached[1]
        else:
            report = await self._compute(game_id, fingerprint)
        answer = {
            **report,
            "rejected": {
                "cap_per_seat": self.rejected_cap,
                "unrecorded": unrecorded.by_seat,
                "over_budget": unrecorded.over_budget,
            },
        }
        return msgspec.json.encode(answer)

    async def _compute(self, game_id: str, fingerprint: bytes) -> dict[str, Any]:
        key = (game_id, fingerprint)
        running = self._running.get(key)
        if running is not None:
            return await asyncio.shield(running)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._running[key] = future
        try:
            stored = await self.history.store.kept_document(
                game_id, "audit", [kept.EVERYONE], fingerprint
            )
            if stored is not None:  # a finished game's report, kept in PostgreSQL
                report = msgspec.json.decode(stored, type=dict[str, Any])
                self._reports.put(game_id, (fingerprint, report))
                future.set_result(report)
                return report
            report = await self.history.audit(game_id)
            self.computed += 1
            after = await self.history.store.fingerprint(game_id)
            if after is not None and bytes(after) == fingerprint:  # nothing moved meanwhile
                self._reports.put(game_id, (fingerprint, report))
                row = await self.history.store.get_game(game_id)
                if row is not None and row.status == "finished":
                    body = msgspec.json.encode(report)
                    await self.history.store.keep_document(
                        game_id, "audit", kept.EVERYONE, fingerprint, body
                    )
            future.set_result(report)
            return report
        except BaseException as error:
            future.set_exception(error)
            future.exception()  # retrieved: no "never retrieved" warning if nobody waits
            raise
        finally:
            del self._running[key]
