"""The projection adapter (issue 36): the one module of the application that imports
:mod:`projections`. What the application asks of the projections is :class:`Projection`
(schedule a table's projection, load the projected table, the views built here and from a
table, the projection store's fields and versions; and, for the entry points, the catch-up
worker's lifecycle), a replayer of states
(:func:`replayer`), a stored view's version (:func:`view_version`) and the one failure it
handles, :data:`ProjectionDown` (reads then fall back to the event log).
``tests/test_layers.py`` keeps every other application module off :mod:`projections`."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Protocol

from domain.platform.table import SNAPSHOT_EVERY, Table
from projections.poison import Poisoned
from projections.projector import ListGames
from projections.replay import ReadRange, Replayer
from projections.store import ProjectionStore, StoreUnavailable, split_view
from projections.views import Views

#: The projection store did not answer in time, refused a write, or is gone.
ProjectionDown = StoreUnavailable


class Projection(Protocol):
    """What the application uses of :class:`projections.projector.Projector`."""

    @property
    def views(self) -> Views: ...
    @property
    def store(self) -> ProjectionStore: ...
    def schedule(
        self,
        table: Table,
        snapshots: Mapping[int, bytes] | None = None,
        known: Mapping[str, bytes] | None = None,
        *,
        lazy: bool = False,
    ) -> None: ...
    async def load(self, game_id: str) -> Table | None: ...

    # the process's lifecycle, for the entry points and the edge (catch-up, readiness, drain)
    @property
    def last_pass_error(self) -> str | None: ...
    @property
    def poisoned(self) -> Poisoned: ...
    def lag(self) -> float: ...
    async def drain(self, timeout: float) -> None: ...
    async def catch_up(self, game_id: str) -> Table | None: ...
    async def run_worker(
        self, list_games: ListGames, every: float, stop: asyncio.Event
    ) -> None: ...


class Replay(Protocol):
    """A game's state after any event (:class:`projections.replay.Replayer`)."""

    async def table_at(self, game_id: str, n: int) -> tuple[Table, int]: ...


def replayer(projection: Projection, read_range: ReadRange) -> Replay:
    """States at any version, from the projection's snapshots and the log's events."""
    return Replayer(projection.store, read_range, SNAPSHOT_EVERY)


def view_version(raw: bytes) -> tuple[int | None, bytes]:
    """A stored view's version and body (:func:`projections.store.split_view`)."""
    return split_view(raw)
