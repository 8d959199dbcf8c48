"""Bringing projections up to date from the event store: after every append, in the catch-up
worker, and in ``manifest rebuild``. Each folds the events after the version a projection
reflects (a dense read, so none is skipped) onto that projection (so none is applied twice) and
writes the result only if it is newer than what is stored (see :mod:`projections.store`).

After a commit the service does not wait for the projection: :meth:`Projector.schedule` hands
the new table (``lazy``: the table and the legal commands of the mover and of the seats to act
only, every other view being built on first read, :mod:`projections.views`) to a background
writer (one per game at a time, the newest table wins), which writes the view first and the
replay snapshots after it, retrying ``retries`` times with a growing pause. A write that still
fails stays *pending*: it is logged, counted (``manifest_projection_failures_total{stage}``),
its age is the projection lag (``manifest_projection_lag_seconds``, and ``/readyz`` past
``MANIFEST_PROJECTION_LAG``), and the catch-up worker repairs it on its next pass. A game
whose projection cannot be computed at all is a poison message: logged, counted and skipped
(:mod:`projections.poison`)."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence

import msgspec
import structlog
from prometheus_client import Counter, Gauge

from domain.platform.table import (
    StreamEvent,
    Table,
    decode_table,
    encode_table,
    fold_collecting,
    game_document,
    legal_document,
    table_to_act,
    viewer_keys,
)
from projections.poison import Poison, Poisoned
from projections.store import ProjectionStore, tag_view
from projections.views import Views, table_field

__all__ = ["Poison", "Projector", "state_fields", "state_views", "table_field", "table_fields"]

ReadEvents = Callable[[str, int], Awaitable[Sequence[StreamEvent]]]
ListGames = Callable[[str | None, int], Awaitable[Sequence[tuple[str, int]]]]

log = structlog.get_logger("manifest.projections")
_encoder = msgspec.json.Encoder()

FAILURES = Counter(
    "manifest_projection_failures_total",
    "Projection writes that failed (view, snapshots: after a commit; catchup: the worker)",
    ["stage"],
)
#: With several workers (multiprocess mode) /metrics shows the worst lag of the live workers and
#: the sum of their pending games.
LAG = Gauge(
    "manifest_projection_lag_seconds",
    "Age of the oldest change this process committed that its projection does not show yet",
    multiprocess_mode="livemax",
)
PENDING = Gauge(
    "manifest_projection_pending_games",
    "Games whose projection write is pending",
    multiprocess_mode="livesum",
)

#: Writers kept waiting for the next game once theirs is written (a move then hands its game
#: to one of them instead of starting a task of its own).
IDLE_WRITERS = 16


def table_fields(table: Table, known: Mapping[str, bytes] | None = None) -> dict[str, bytes]:
    """Every field of a game's projection, each view built now (a whole record: catch-up and
    rebuild write these); ``known`` views (already computed by the caller for this same table)
    are used as they are."""
    known = known or {}
    fields = {"table": known.get("table") or encode_table(table)}
    version = table.version
    for key in viewer_keys(table):
        name = f"doc:{key}"
        body = known.get(name) or _encoder.encode(game_document(table, key))
        fields[name] = tag_view(version, body)
    for seat in range(table.seats):
        name = f"legal:{seat}"
        body = known.get(name) or _encoder.encode(legal_document(table, seat))
        fields[name] = tag_view(version, body)
    return fields


def state_views(table: Table, known: Mapping[str, bytes]) -> dict[str, bytes]:
    """The views the write path stores after a move (name -> body): the ``known`` ones (those
    the mover's answer computed anyway) and the legal commands of every seat that is to act
    now (whoever acts next reads them before anything else can change the game: building them
    here spares that read a build and a second Redis write). Every other view is built when
    first read."""
    views = {name: body for name, body in known.items() if name != "table"}
    state = table.state
    if table.status == "active" and state is not None:
        for seat in table_to_act(table):
            name = f"legal:{seat}"
            if name not in views:
                views[name] = _encoder.encode(legal_document(table, seat))
    return views


def state_fields(
    table: Table, views: Mapping[str, bytes], encoded: bytes | None = None
) -> dict[str, bytes]:
    """What the write path stores after a move: the table (``encoded`` already, when the
    ruling encoded it before the append) and its :func:`state_views`, each view tagged with
    its version."""
    fields = {"table": encoded or encode_table(table)}
    for name, body in views.items():
        fields[name] = tag_view(table.version, body)
    return fields


class _Pending:
    __slots__ = ("known", "lazy", "since", "snapshots", "table")

    def __init__(
        self,
        table: Table,
        snapshots: dict[int, bytes],
        known: Mapping[str, bytes] | None,
        lazy: bool,
    ) -> None:
        self.table = table
        self.snapshots = snapshots
        self.known = known
        self.lazy = lazy
        self.since = time.monotonic()


class Projector:
    def __init__(
        self,
        store: ProjectionStore,
        read_events: ReadEvents,
        *,
        retries: int = 3,
        backoff: float = 0.1,
    ) -> None:
        self.store = store
        #: the views, built on first read (:mod:`projections.views`)
        self.views = Views(store)
        self.read_events = read_events
        self.retries = retries
        self.backoff = backoff
        self._pending: dict[str, _Pending] = {}
        self._writing: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        #: writers waiting for a game (each on its own future; see ``_writer``)
        self._idle: list[asyncio.Future[str]] = []
        #: why the last catch-up pass failed (None: it succeeded, or none ran yet)
        self.last_pass_error: str | None = None
        #: poison messages: games whose projection cannot be computed (:mod:`.poison`)
        self.poisoned = Poisoned()
        LAG.set_function(self.lag)
        PENDING.set_function(lambda: len(self._pending))

    # --- after a commit: in the background ---------------------------------------------------
    def schedule(
        self,
        table: Table,
        snapshots: Mapping[int, bytes] | None = None,
        known: Mapping[str, bytes] | None = None,
        *,
        lazy: bool = False,
    ) -> None:
        """Bring the projection to ``table`` in the background (never raises, never waits).
        ``lazy``: write the table and the ``known`` views only (:func:`state_fields`); else
        every view (:func:`table_fields`)."""
        game_id = table.game_id
        entry = self._pending.get(game_id)
        if entry is None:
            self._pending[game_id] = _Pending(table, dict(snapshots or {}), known, lazy)
        else:
            entry.snapshots.update(snapshots or {})
            if table.version > entry.table.version:
                entry.table, entry.known, entry.lazy = table, known, lazy
        self._start_writer(game_id)

    def _start_writer(self, game_id: str) -> None:
        """A writer for ``game_id`` unless one runs: an idle one if any (a task per move cost
        ~2 % of a worker's CPU under load), else a new one."""
        if game_id in self._writing:
            return
        self._writing.add(game_id)
        loop = asyncio.get_running_loop()
        while self._idle:
            waiting = self._idle.pop()
            if not waiting.done() and waiting.get_loop() is loop:
                waiting.set_result(game_id)
                return
        # A context of its own: it goes on to write games of later requests, whose log
        # context (request id, seat) is not the one of the request that started it.
        task = loop.create_task(self._writer(game_id), context=contextvars.Context())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _writer(self, game_id: str) -> None:
        """Write ``game_id``'s projection, then wait for the next game handed over by
        ``_start_writer`` — unless ``IDLE_WRITERS`` already wait."""
        loop = asyncio.get_running_loop()
        while True:
            await self._drain(game_id)
            if len(self._idle) >= IDLE_WRITERS:
                return
            handed: asyncio.Future[str] = loop.create_future()
            self._idle.append(handed)
            try:
                game_id = await handed
            except asyncio.CancelledError:
                if handed.done() and not handed.cancelled():  # handed a game, then cancelled
                    self._writing.discard(handed.result())  # another writer may take it
                raise

    async def _drain(self, game_id: str) -> None:
        failures = 0
        try:
            while (entry := self._pending.get(game_id)) is not None:
                table, snapshots = entry.table, entry.snapshots
                entry.snapshots = {}
                try:
                    await self.publish_table(table, snapshots, entry.known, lazy=entry.lazy)
                except Poison as poison:
                    self.poisoned.note(poison)
                    self._pending.pop(game_id, None)  # retrying cannot help
                    return
                except Exception as error:
                    entry.snapshots = {**snapshots, **entry.snapshots}
                    failures += 1
                    log.warning(
                        "projection write failed",
                        game=game_id,
                        version=table.version,
                        attempt=failures,
                        error=str(error),
                    )
                    if failures >= self.retries:
                        return  # stays pending: the catch-up worker repairs it
                    await asyncio.sleep(self.backoff * 2 ** (failures - 1))
                    continue
                self._settle(game_id, table.version)
        finally:
            self._writing.discard(game_id)

    def retry_pending(self) -> int:
        """Start a writer again for every pending game whose writer gave up (each pass of the
        catch-up worker). Returns how many."""
        idle = [g for g in self._pending if g not in self._writing]
        for game_id in idle:
            self._start_writer(game_id)
        return len(idle)

    def _settle(self, game_id: str, version: int) -> None:
        entry = self._pending.get(game_id)
        if entry is not None and entry.table.version <= version and not entry.snapshots:
            del self._pending[game_id]

    def lag(self) -> float:
        """Seconds since the oldest change not yet written to the projections (0: none)."""
        if not self._pending:
            return 0.0
        return time.monotonic() - min(e.since for e in self._pending.values())

    async def drain(self, timeout: float) -> None:
        """Let pending writes finish (at shutdown), at most ``timeout`` seconds; then end the
        writers, idle or late."""
        deadline = time.monotonic() + timeout
        while self._writing and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        while True:  # again if a write was scheduled meanwhile: no writer outlives drain()
            idle, self._idle = self._idle, []
            for waiting in idle:
                waiting.cancel()
            tasks = [task for task in self._tasks if not task.done()]
            if not tasks:
                return
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def load(self, game_id: str) -> Table | None:
        (raw,) = await self.store.fields(game_id, ["table"])
        return None if raw is None else decode_table(raw)

    async def publish_table(
        self,
        table: Table,
        snapshots: Mapping[int, bytes] | None = None,
        known: Mapping[str, bytes] | None = None,
        *,
        lazy: bool = False,
    ) -> bool:
        """Store ``table`` unless the projection already reflects its version or a later one,
        then keep the replay ``snapshots`` folded on the way (after the view, never instead of
        it). ``lazy``: only the table and its :func:`state_views`, the other views left as
        they are (each carries its own version); else the whole record, every view built. Raises on
        any failure (counted by stage)."""
        try:  # pure: a failure here is the game's own, not the store's
            if lazy:
                views = state_views(table, known or {})
                fields = state_fields(table, views, (known or {}).get("table"))
            else:
                fields = table_fields(table, known)
        except Exception as error:
            raise Poison(table.game_id, table.version, error) from error
        try:
            if lazy:
                self.views.keep_built(table, views)  # readers in this process need no Redis
                wrote = await self.store.advance(table.game_id, table.version, fields)
            else:
                wrote = await self.store.write(table.game_id, table.version, fields)
        except Exception:
            FAILURES.labels(stage="view").inc()
            raise
        if snapshots:
            try:
                await self.store.put_snapshots(table.game_id, snapshots)
            except Exception:
                FAILURES.labels(stage="snapshots").inc()
                raise
        return wrote

    async def catch_up(self, game_id: str) -> Table | None:
        """Make the projection reflect every stored event; returns it (None: no such game)."""
        current = await self.load(game_id)
        after = 0 if current is None else current.version
        try:
            events = await self.read_events(game_id, after)
        except (msgspec.ValidationError, msgspec.DecodeError) as error:  # a row unreadable
            raise Poison(game_id, after, error) from error
        if not events:
            return current
        try:
            table, snapshots = fold_collecting(current, events, game_id)
        except Exception as error:  # a stream that does not fold
            raise Poison(game_id, events[-1].version, error) from error
        await self.publish_table(table, snapshots)
        self._settle(game_id, table.version)
        return table

    async def repair(self, list_games: ListGames, page: int = 500) -> int:
        """One pass of the catch-up worker: every game whose projection lags the store is
        caught up, a poisoned one skipped (:mod:`.poison`). Returns how many were repaired."""
        repaired = 0
        cursor: str | None = None
        while True:
            games = await list_games(cursor, page)
            if not games:
                return repaired
            stored = await self.store.versions([g for g, _ in games])
            for (game_id, version), have in zip(games, stored, strict=True):
                if version > 0 and (have is None or have < version):
                    if self.poisoned.known_at(game_id, version):
                        continue  # retrying cannot help
                    try:
                        await self.catch_up(game_id)
                    except Poison as poison:
                        self.poisoned.note(Poison(game_id, version, poison.__cause__ or poison))
                        continue
                    except Exception:
                        FAILURES.labels(stage="catchup").inc()
                        raise
                    self.poisoned.pop(game_id, None)
                    repaired += 1
            cursor = games[-1][0]

    async def run_worker(self, list_games: ListGames, every: float, stop: asyncio.Event) -> None:
        """Repair projections every ``every`` seconds until ``stop`` is set."""
        while not stop.is_set():
            try:
                self.retry_pending()
                repaired = await self.repair(list_games)
                self.last_pass_error = None
                if repaired:
                    log.info("projections repaired", games=repaired)
            except Exception as error:  # keep the worker alive through an outage
                self.last_pass_error = f"{type(error).__name__}: {error}"
                log.warning("catch-up pass failed", error=self.last_pass_error)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every)
