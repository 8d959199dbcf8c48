"""Reads of the current game: a viewer's document and a seat's legal commands, never older than
the stored version (``games.version``): from the first tier that may answer by the rules of
:mod:`service.application.freshness` (views built here, the projection's views, this process's
table, the projection's table, else the table folded from PostgreSQL — and the projection
repaired). The host token reads the spectator's document with the invite code."""

from __future__ import annotations

import asyncio

import msgspec
import structlog

from domain.platform.table import Table
from service.application.errors import NotFound
from service.application.freshness import (
    TIERS,
    Stored,
    Tier,
    built_answers,
    projected_table_answers,
    projected_view,
    projection_current,
)
from service.application.projection import Projection, ProjectionDown
from service.application.seats import Seats
from service.application.tables import Tables
from service.application.tokens import HOST_PREFIX
from service.eventstore.port import EventLog

log = structlog.get_logger("manifest")


class Documents:
    """The current game as a viewer sees it, and a seat's legal commands."""

    def __init__(
        self, store: EventLog, tables: Tables, seats: Seats, projector: Projection
    ) -> None:
        self.store = store
        self.tables = tables
        self.seats = seats
        self.projector = projector

    async def document(self, game_id: str, field: str) -> bytes:
        """A projection field, never older than the stored version (``games.version``): a
        projection behind it, missing, or unreadable is answered from PostgreSQL instead.

        Whatever answers, it is the view at the version PostgreSQL had when asked, which is at
        least every version acknowledged before this request. A view this process built (or
        stored after its own move) at the table it holds is served once PostgreSQL says that
        table is still the latest (same version and head), without asking Redis; else the
        projection and PostgreSQL are asked at once."""
        local = self._built(game_id, field)
        if local is None:
            found, (have, raw) = await asyncio.gather(
                self.store.version_head(game_id), self._projected(game_id, field)
            )
        else:
            found = await self.store.version_head(game_id)
            (version, head), built = local
            if built_answers(None if found is None else Stored(*found), version, head):
                return built
            have, raw = await self._projected(game_id, field)
        if found is None or found[0] == 0:
            raise NotFound("game.not_found", f"no game {game_id}")
        stored = Stored(*found)
        body = projected_view(raw, stored)
        if body is not None:
            return body
        # Not built at this version yet (lazy views), or the projection is behind or failing.
        current = projection_current(have, stored)
        table = await self._view_table(game_id, stored, current)
        if not current:  # repair: a record that lags moves on (lazily), a missing one is whole
            self.projector.schedule(table, lazy=have is not None)
        body = await self.projector.views.view(table, field, keep=have is not None)
        if body is None:
            raise NotFound("game.not_found", f"no game {game_id}")
        return body

    def _built(self, game_id: str, field: str) -> tuple[tuple[int, bytes], bytes] | None:
        """((version, head), view) of the table this process holds, if it built that view."""
        cached = self.tables.latest(game_id)
        if cached is None or Tier.BUILT not in TIERS:
            return None
        head, table = cached
        body = self.projector.views.built(game_id, field, table.version)
        return None if body is None else ((table.version, head), body)

    async def _view_table(self, game_id: str, stored: Stored, current: bool) -> Table:
        """The table to build a view from, at the stored version or newer: this process's (at
        the stored head), the projection's (``current``: at least at that version), else
        folded from PostgreSQL (:mod:`service.application.freshness`)."""
        if current and self.tables.cached(game_id, stored.head, stored.version) is None:
            try:
                table = await self.projector.load(game_id)
            except ProjectionDown as error:
                log.warning("view built from PostgreSQL", game=game_id, reason=str(error))
                table = None
            if table is not None and projected_table_answers(table, stored):
                return table
        return await self.tables.stored(game_id, stored.head, stored.version)

    async def _projected(self, game_id: str, field: str) -> tuple[bytes | None, bytes | None]:
        """(version, field) of the projection; (None, None) when Redis fails."""
        try:
            have, raw = await self.projector.store.fields(game_id, ["version", field])
        except ProjectionDown as error:
            log.warning("view served from PostgreSQL", game=game_id, reason=str(error))
            return None, None
        return have, raw

    async def game_document(self, game_id: str, token: str | None) -> bytes:
        if token is not None and token.startswith(HOST_PREFIX):
            return await self._host_document(game_id, token)
        seat = await self.seats.seat_for(game_id, token)
        return await self.document(game_id, "doc:spectator" if seat is None else f"doc:seat:{seat}")

    async def _host_document(self, game_id: str, token: str) -> bytes:
        """What the host token reads: the game as a spectator sees it, with the invite code
        to hand out (the host is no seat: it sees no hidden thing)."""
        await self.seats.require_host(game_id, token)
        row = await self.tables.row(game_id)
        doc = msgspec.json.decode(await self.document(game_id, "doc:spectator"))
        doc["invite_code"] = row.invite_code
        return msgspec.json.encode(doc)

    async def legal_document(self, game_id: str, token: str | None) -> bytes:
        seat = await self.seats.require_seat(game_id, token, "read")  # a read, not an act
        return await self.document(game_id, f"legal:{seat}")
