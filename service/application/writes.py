"""How a write goes: under the game's admission limit, a dependency failure turned into
:class:`~service.application.errors.Unavailable` (:meth:`Writes.run`); events appended under the
game's row lock with the table they lead to cached (:meth:`Writes.append`: the lobby, table
talk); the projection brought up to date in the background after the commit
(:meth:`Writes.project`). A command takes another path to the store, one compare-and-set
statement (:mod:`service.application.play`), and shares ``run`` and ``project``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import msgspec
import structlog

from domain.platform.events import LobbyJoined
from domain.platform.table import Table, fold_collecting, table_result
from ledger.records import NewEvent
from ledger.ruling import Pending, fold_new, lobby_pending
from service.application.errors import ApplicationError
from service.application.faults import Admission, Faults
from service.application.projection import Projection
from service.application.tables import Tables
from service.eventstore.port import LockedGame
from service.observability import COMMANDS

log = structlog.get_logger("manifest")

T = TypeVar("T")


class Writes:
    """The writes of one process: admission and faults around each, appends under a row lock,
    projections scheduled after the commit."""

    def __init__(
        self, tables: Tables, projector: Projection, faults: Faults, admission: Admission
    ) -> None:
        self.tables = tables
        self.projector = projector
        self.faults = faults
        self.admission = admission

    async def run(self, game_id: str, write: Callable[[], Awaitable[T]], kind: str) -> T:
        """Run a write to one game under its admission limit; a dependency failure is
        :class:`Unavailable` and says whether the write may have been recorded (``kind``:
        ``command`` or ``write``, :meth:`Faults.unavailable_for`)."""
        try:
            with self.admission.enter(game_id):
                return await write()
        except ApplicationError:
            raise
        except Exception as error:
            failed = self.faults.unavailable_for(error, kind)
            if failed is None:
                raise
            log.warning("write not answered", game=game_id, error=repr(error))
            COMMANDS.labels(game="?", outcome=failed.code).inc()
            raise failed from error

    async def append(
        self,
        locked: LockedGame,
        events: list[Any],
        snapshots: dict[int, bytes],
        *,
        seat: int | None,
        command_id: str | None,
    ) -> Table:
        """Append ``events`` (Structs) under the lock; returns the table after them and adds
        the replay snapshots passed to ``snapshots`` (to write only once committed)."""
        keys = await self.tables.keys(locked.row.id)
        if locked.row.version == 0:
            pending = [lobby_pending(1 + i, e, keys) for i, e in enumerate(events)]
            table, folded = fold_collecting(None, pending, locked.row.id)
        else:
            base = await self.tables.at_lock(locked)
            table, pending, folded = fold_new(base, events, keys.seed, keys.messages)
        snapshots.update(folded)
        status = table.status if table.status != locked.row.status else None
        result = None
        if table.status == "finished" and table.state is not None:
            outcome = table_result(table)
            result = None if outcome is None else msgspec.to_builtins(outcome)
        names = table.names if any(isinstance(e, LobbyJoined) for e in events) else None
        runs = _seat_runs(pending, seat)
        for i, (run_seat, run) in enumerate(runs):
            last = i == len(runs) - 1
            appended = await locked.append(
                expected_version=locked.row.version,
                events=[NewEvent(p.type, p.data, p.public) for p in run],
                seat=run_seat,
                command_id=command_id,
                status=status if last else None,
                result=result if last else None,
                players=names if last else None,
            )
        self.tables.remember(table, appended.head)
        return table

    def project(
        self,
        table: Table,
        snapshots: dict[int, bytes] | None = None,
        known: dict[str, bytes] | None = None,
        lazy: bool = False,
    ) -> None:
        """After commit: bring the projection to ``table`` (unless it is already there or
        beyond), with the replay snapshots folded on the way — in the background, so the answer
        never waits for Redis (failures are retried, counted, and repaired by catch-up).
        ``lazy`` (a move): the table and the ``known`` views only, the others built when read;
        else (lobby, table talk: a few per game, and every seat waits on them) every view."""
        self.projector.schedule(table, snapshots, known, lazy=lazy)


def _seat_runs(pending: list[Pending], seat: int | None) -> list[tuple[int | None, list[Pending]]]:
    """``pending`` split into runs that share the ``seat`` column. An event appended without an
    acting seat (a player joining, the set-up's private deals) is stored with the seat it
    concerns, the ``seat`` its data names (``lobby.joined``, ``cities_dealt``); with an acting
    seat, every event is that seat's."""
    runs: list[tuple[int | None, list[Pending]]] = []
    for p in pending:
        concerned = seat
        if seat is None and isinstance(p.data, dict):
            named = p.data.get("seat")
            concerned = named if isinstance(named, int) and not isinstance(named, bool) else None
        if runs and runs[-1][0] == concerned:
            runs[-1][1].append(p)
        else:
            runs.append((concerned, [p]))
    return runs
