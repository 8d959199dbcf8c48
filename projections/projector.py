"""Bringing projections up to date from the event store: after every append, in the catch-up
worker, and in ``manifest rebuild``. Each folds the events after the version a projection
reflects (a dense read, so none is skipped) onto that projection (so none is applied twice) and
writes the result only if it is newer than what is stored (see :mod:`projections.store`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence

import msgspec
import structlog

from .replay import fold_collecting
from .store import ProjectionStore
from .table import (
    StreamEvent,
    Table,
    decode_table,
    encode_table,
    game_document,
    legal_document,
    viewer_keys,
)

ReadEvents = Callable[[str, int], Awaitable[Sequence[StreamEvent]]]
ListGames = Callable[[str | None, int], Awaitable[Sequence[tuple[str, int]]]]

log = structlog.get_logger("manifest.projections")
_encoder = msgspec.json.Encoder()


def table_fields(table: Table, known: Mapping[str, bytes] | None = None) -> dict[str, bytes]:
    """Every field of a game's projection; ``known`` fields (already computed by the caller for
    this same table) are used as they are."""
    known = known or {}
    fields = {"table": encode_table(table)}
    for key in viewer_keys(table):
        name = f"doc:{key}"
        fields[name] = known.get(name) or _encoder.encode(game_document(table, key))
    for seat in range(table.seats):
        name = f"legal:{seat}"
        fields[name] = known.get(name) or _encoder.encode(legal_document(table, seat))
    return fields


class Projector:
    def __init__(self, store: ProjectionStore, read_events: ReadEvents) -> None:
        self.store = store
        self.read_events = read_events

    async def load(self, game_id: str) -> Table | None:
        (raw,) = await self.store.fields(game_id, ["table"])
        return None if raw is None else decode_table(raw)

    async def publish_table(
        self,
        table: Table,
        snapshots: Mapping[int, bytes] | None = None,
        known: Mapping[str, bytes] | None = None,
    ) -> bool:
        """Store ``table`` unless the projection already reflects its version or a later one,
        and keep the replay ``snapshots`` folded on the way."""
        if snapshots:
            await self.store.put_snapshots(table.game_id, snapshots)
        return await self.store.write(table.game_id, table.version, table_fields(table, known))

    async def catch_up(self, game_id: str) -> Table | None:
        """Make the projection reflect every stored event; returns it (None: no such game)."""
        current = await self.load(game_id)
        after = 0 if current is None else current.version
        events = await self.read_events(game_id, after)
        if not events:
            return current
        table, snapshots = fold_collecting(current, events, game_id)
        await self.publish_table(table, snapshots)
        return table

    async def repair(self, list_games: ListGames, page: int = 500) -> int:
        """One pass of the catch-up worker: every game whose projection lags the store is
        caught up. Returns how many were repaired."""
        repaired = 0
        cursor: str | None = None
        while True:
            games = await list_games(cursor, page)
            if not games:
                return repaired
            stored = await self.store.versions([g for g, _ in games])
            for (game_id, version), have in zip(games, stored, strict=True):
                if version > 0 and (have is None or have < version):
                    await self.catch_up(game_id)
                    repaired += 1
            cursor = games[-1][0]

    async def run_worker(self, list_games: ListGames, every: float, stop: asyncio.Event) -> None:
        """Repair projections every ``every`` seconds until ``stop`` is set."""
        while not stop.is_set():
            try:
                repaired = await self.repair(list_games)
                if repaired:
                    log.info("projections repaired", games=repaired)
            except Exception:  # keep the worker alive through a Redis or PostgreSQL outage
                log.exception("catch-up pass failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every)
