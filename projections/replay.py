"""Replaying a game: the table after any event ``n``, answered by folding at most ``every``
events onto the snapshot at or below ``n`` (snapshots are kept every ``every`` events).

A snapshot is the table after event ``k * every``: one value forever, so it is written whenever
a fold passes that version (after appends, catch-up, rebuild or a seek that had to build it)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from domain.platform.table import (
    SNAPSHOT_EVERY,
    StreamEvent,
    Table,
    copy_table,
    decode_table,
    fold_collecting,
    fold_stream,
)
from projections.store import ProjectionStore

ReadRange = Callable[[str, int, int | None], Awaitable[Sequence[StreamEvent]]]


class Replayer:
    def __init__(
        self, store: ProjectionStore, read_range: ReadRange, every: int = SNAPSHOT_EVERY
    ) -> None:
        self.store = store
        self.read_range = read_range
        self.every = every

    async def table_at(self, game_id: str, n: int) -> tuple[Table, int]:
        """The table after event ``n`` (1 ≤ n ≤ the game's version), and how many events were
        folded onto the snapshot to answer (not counting building a missing snapshot)."""
        base = n - n % self.every
        table = await self._snapshot_table(game_id, base) if base else None
        events = await self.read_range(game_id, base, n - base)
        if len(events) != n - base:
            raise LookupError(f"the game has no event {n}")
        return fold_stream(None if table is None else copy_table(table), events, game_id), len(
            events
        )

    async def _snapshot_table(self, game_id: str, version: int) -> Table:
        raw = await self.store.snapshot(game_id, version)
        if raw is not None:
            return decode_table(raw)
        # Missing (Redis was emptied, or the game predates snapshots): build it from the nearest
        # snapshot below, writing every snapshot passed.
        below = [v for v in await self.store.snapshot_versions(game_id) if v < version]
        start = max(below, default=0)
        table = await self._snapshot_table(game_id, start) if start else None
        events = await self.read_range(game_id, start, version - start)
        if len(events) != version - start:
            raise LookupError(f"the game has no event {version}")
        built, snapshots = fold_collecting(table, events, game_id, self.every)
        await self.store.put_snapshots(game_id, snapshots)
        return built
