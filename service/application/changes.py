"""A game's live changes for its streams: the caller's document now, then again after every
accepted change, with one read of a document shared by every stream of the process that a change
wakes (:mod:`service.http.streams` caps the streams; :mod:`projections.fanout` hears the
changes). Every stream reads under a :class:`~service.application.seats.Grant`, re-checked
after each read: a stream whose token no longer holds its seat ends before it sends what it
read (the one mechanism for any long-lived read: a stream of another kind reads through
:meth:`LiveChanges.changes` too)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

import msgspec
import structlog

from service.application.documents import Documents
from service.application.projection import Projection
from service.application.seats import Grant, Seats

log = structlog.get_logger("manifest")


class LiveChanges:
    def __init__(self, seats: Seats, documents: Documents, projections: Projection) -> None:
        self.seats = seats
        self.documents = documents
        self.projections = projections
        #: documents being read for live streams, by (game, view field, version heard): the
        #: streams woken by one change share one read (:meth:`_read_for_streams`)
        self._stream_reads: dict[tuple[str, str, int], asyncio.Future[bytes]] = {}

    async def changes(self, grant: Grant) -> AsyncGenerator[bytes, None]:
        """The grant's game document now, then again after every accepted change (a
        version heard, or ``None``: changes may have been missed, re-read). Subscribed before
        the first document is read, so no change falls between. Ends, without sending the
        document just read, once ``grant`` no longer holds (:meth:`still`). Raises
        :class:`StoreUnavailable` when changes can no longer be heard."""
        game_id, field = grant.game_id, grant.field
        sent = -1
        versions = self.projections.store.subscribe(game_id)
        try:
            async for version in versions:
                if version is not None and version <= sent:
                    continue
                doc = (
                    await self.documents.document(game_id, field)
                    if version is None
                    else await self._read_for_streams(game_id, field, version)
                )
                if not await self.still(grant):
                    return
                current = int(msgspec.json.decode(doc)["version"])
                if current > sent:
                    sent = current
                    yield doc
        finally:
            closing = getattr(versions, "aclose", None)
            if closing is not None:
                await closing()

    async def still(self, grant: Grant) -> bool:
        """Does the stream's grant still hold (:meth:`Seats.holds`)? Logged when not."""
        if await self.seats.holds(grant):
            return True
        log.info("live stream ended", game=grant.game_id, reason="its token holds no seat now")
        return False

    async def _read_for_streams(self, game_id: str, field: str, version: int) -> bytes:
        """The document ``field`` of ``game_id``, read once for every stream of this process
        woken by ``version``: a move of a game that 800 spectators follow costs one read, not
        800 (a PostgreSQL query and a Redis read each). Any read begun after ``version`` was
        heard is at that version or later, so sharing it is never stale. A stream that leaves
        does not cancel the read the others wait on."""
        key = (game_id, field, version)
        read = self._stream_reads.get(key)
        if read is None:
            read = asyncio.ensure_future(self.documents.document(game_id, field))
            self._stream_reads[key] = read

            def done(finished: asyncio.Future[bytes]) -> None:
                del self._stream_reads[key]
                if not finished.cancelled():
                    finished.exception()  # retrieved: every waiter may have left

            read.add_done_callback(done)
        return await asyncio.shield(read)
