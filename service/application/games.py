"""The games this process serves, as every application service needs them: their tables (cached
against the stored head, or folded from the stored events — never from Redis: the write path
needs PostgreSQL only), their keys, who a token is, and the append every write goes through,
after which the projection is brought up to date in the background."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import msgspec
import structlog

from domain.platform.events import (
    LobbyJoined,
)
from domain.platform.table import Table, fold_stream
from infra.lru import LRU
from projections.projector import Projector
from projections.replay import SNAPSHOT_EVERY, Replayer, fold_collecting
from service.application.faults import Admission, Faults
from service.application.freshness import Stored, table_answers
from service.application.ruling import (
    Pending,
    fold_new,
    lobby_pending,
)
from service.application.tokens import (
    HOST_PREFIX,
    token_hash,
)
from service.audit.commitments import CANONICAL, Keys
from service.audit.receipts import Signer
from service.eventstore import rejections
from service.eventstore.chain import CANONICAL_UUID
from service.eventstore.records import GameRow, NewEvent, StoredEvent
from service.eventstore.store import EventStore, GameNotFound, Locked
from service.observability import COMMANDS
from service.problems import Problem

log = structlog.get_logger("manifest")
_CACHE_GAMES = 4096

_RETRIES = 8

T = TypeVar("T")


class Games:
    """The shared part of :class:`service.application.gameplay.Manifest` (see there)."""

    #: Refused commands recorded per seat per game (``MANIFEST_REJECTED_CAP``); more: counted.
    rejected_cap = 1000
    #: Bytes of a refused body kept whole or as a prefix (``MANIFEST_REFUSAL_BODY_PREFIX``).
    refusal_body_prefix = 1024

    def __init__(
        self,
        store: EventStore,
        projector: Projector,
        signer: Signer,
        faults: Faults | None = None,
        admission: Admission | None = None,
    ) -> None:
        self.store = store
        self.projector = projector
        self.signer = signer
        self.faults = faults or Faults()
        self.admission = admission or Admission(8)
        #: Refusals stored per minute per client address and bytes per minute in all
        #: (``MANIFEST_REFUSALS_PER_CLIENT``, ``MANIFEST_REFUSAL_BYTES``; set by the app).
        self.refusal_budget = rejections.Budget(60, 262144)
        #: Refusals over a budget, counted (written once a second at most).
        self.refusal_tally = rejections.Tally()
        self.replayer = Replayer(projector.store, self._read_range, SNAPSHOT_EVERY)
        #: game id -> (head hash, table at that head)
        self._tables: LRU[str, tuple[bytes, Table]] = LRU(_CACHE_GAMES)
        self._seat_tokens: LRU[bytes, tuple[str, int]] = LRU(8 * _CACHE_GAMES)
        self._keys: LRU[str, Keys] = LRU(_CACHE_GAMES)
        #: The canonical form new games are created in (``service.eventstore.chain``; 1 only to test
        #: that games created before commitments still verify).
        self.canonical = CANONICAL

    async def _read_range(self, game_id: str, after: int, limit: int | None) -> list[StoredEvent]:
        return await self.store.read(game_id, after=after, limit=limit)

    # --- caches (validated against the locked row's head before any use in a decision) -----
    def _remember(self, table: Table, head: bytes) -> None:
        """Cache ``table`` as the game at ``head``. Keyed by the head hash, not the version
        alone: a table remembered inside a transaction that then rolled back must never pass
        for the different events another instance committed at the same version."""
        self._tables.put(table.game_id, (head, table))

    async def _table_at(self, locked: Locked) -> Table:
        """The table at the locked version: from this process's cache, or folded from the
        stored events (never from Redis: the write path needs PostgreSQL only)."""
        version = locked.row.version
        cached = self._tables.get(locked.row.id)
        if cached is not None and cached[0] == locked.row.head and cached[1].version == version:
            return cached[1]
        table = fold_stream(None, await locked.read(after=0), locked.row.id)
        self._remember(table, locked.row.head)
        return table

    def _cached(self, game_id: str, head: bytes, version: int) -> Table | None:
        """This process's table of the game, if it may answer for the state at (``version``,
        ``head``) (:func:`service.application.freshness.table_answers`)."""
        return table_answers(self._tables.get(game_id), Stored(version, head))

    async def _stored_table(
        self, game_id: str, head: bytes, version: int, latest: bool = True
    ) -> Table:
        """The table at (``version``, ``head``), a stored state: cached, or folded from the
        stored events (and cached, when it is the ``latest``)."""
        table = self._cached(game_id, head, version)
        if table is not None:
            return table
        events = await self.store.read(game_id, after=0, limit=version)
        table = fold_stream(None, events, game_id)
        if table.version != version:
            raise LookupError(f"game {game_id} has no event {version}")
        cached = self._tables.get(game_id)
        if latest and (cached is None or cached[1].version <= version):  # never cache older
            self._remember(table, head)
        return table

    async def keys(self, game_id: str) -> Keys:
        """The game's secret keys (seed and message key), cached."""
        keys = self._keys.get(game_id)
        if keys is None:
            keys = Keys(await self.store.seed(game_id), await self.store.message_key(game_id))
            self._keys.put(game_id, keys)
        return keys

    async def _seed(self, game_id: str) -> bytes:
        return (await self.keys(game_id)).seed

    # --- authentication ----------------------------------------------------------------------
    async def seat_for(self, game_id: str, token: str | None) -> int | None:
        """The seat a token acts for in this game; None without a token."""
        if token is None:
            return None
        digest = token_hash(token)
        found = self._seat_tokens.get(digest)
        if found is None:
            found = await self.store.seat_for_token(digest)
            if found is None:
                raise Problem(401, "auth.invalid_token", "the token is not a seat token")
            if await self._started(found[0]):  # before the start the host may remove a seat
                self._seat_tokens.put(digest, found)
        if found[0] != game_id:
            raise Problem(403, "auth.wrong_game", "the token is for a seat of another game")
        structlog.contextvars.bind_contextvars(seat=found[1])  # for the request's log line
        return found[1]

    async def viewer(self, game_id: str, token: str | None) -> int | None:
        """Who reads where a seat token is optional (events, replay, dispute files, export, the
        stream, queries): the token's seat, or None — a spectator — without a token or with
        this game's host token (the host is no seat; another game's host token: 403)."""
        if token is not None and token.startswith(HOST_PREFIX):
            await self._require_host(game_id, token)
            return None
        return await self.seat_for(game_id, token)

    def knows_token(self, token: str) -> bool:
        """Is this a seat token this process has seen valid (issued or looked up) for a game
        that has started (only those are cached: see ``seat_for``)? For the quotas, which count
        a token as a client only then (``service.http.limits``)."""
        return self._seat_tokens.get(token_hash(token)) is not None

    async def _started(self, game_id: str) -> bool:
        row = await self.store.get_game(game_id)
        return row is not None and row.status != "open"

    async def require_seat(self, game_id: str, token: str | None) -> int:
        if token is None:
            raise Problem(401, "auth.missing_token", "send the seat token: Authorization: Bearer")
        seat = await self.seat_for(game_id, token)
        if seat is None:  # seat_for answers None only without a token
            raise Problem(401, "auth.missing_token", "send the seat token: Authorization: Bearer")
        return seat

    async def _require_host(self, game_id: str, token: str | None) -> None:
        if token is None:
            raise Problem(401, "auth.missing_token", "send the host token: Authorization: Bearer")
        try:
            expected = await self.store.host_token_hash(game_id)
        except GameNotFound:
            raise Problem(404, "game.not_found", f"no game {game_id}") from None
        if token_hash(token) != expected:
            raise Problem(403, "auth.not_host", "only the host token of this game may do this")

    async def _row(self, game_id: str) -> GameRow:
        row = await self.store.get_game(game_id)
        if row is None:
            raise Problem(404, "game.not_found", f"no game {game_id}")
        return row


    async def current(self, game_id: str) -> tuple[bytes, Table]:
        """The latest table this process knows (or reads from PostgreSQL), with its head."""
        return await self._current(game_id)

    async def _current(self, game_id: str) -> tuple[bytes, Table]:
        """The latest table this process knows, with its head hash; read if unknown (from
        PostgreSQL: the stored events)."""
        cached = self._tables.get(game_id)
        if cached is not None:
            return cached
        row = await self._row(game_id)
        return row.head, await self._stored_table(game_id, row.head, row.version)


    async def _write(self, game_id: str, run: Callable[[], Awaitable[T]], kind: str) -> T:
        """Run a write to one game under its admission limit; a dependency failure is a 503
        that says whether the write may have been recorded."""
        try:
            with self.admission.enter(game_id):
                return await run()
        except Problem:
            raise
        except Exception as error:
            problem = self.faults.problem(error, kind)
            if problem is None:
                raise
            log.warning("write not answered", game=game_id, error=repr(error))
            COMMANDS.labels(game="?", outcome=problem.code).inc()
            raise problem from error


    async def _append(
        self,
        locked: Locked,
        events: list[Any],
        snapshots: dict[int, bytes],
        *,
        seat: int | None,
        command_id: str | None,
    ) -> Table:
        """Append ``events`` (Structs) under the lock; returns the table after them and adds
        the replay snapshots passed to ``snapshots`` (to write only once committed)."""
        if locked.row.version == 0:
            keys = await self.keys(locked.row.id)
            pending = [lobby_pending(1 + i, e, keys) for i, e in enumerate(events)]
            table, folded = fold_collecting(None, pending, locked.row.id)
        else:
            base = await self._table_at(locked)
            keys = await self.keys(locked.row.id)
            table, pending, folded = fold_new(base, events, keys.seed, keys.messages)
        snapshots.update(folded)
        status = table.status if table.status != locked.row.status else None
        result = None
        if table.status == "finished" and table.state is not None:
            outcome = table.rules.outcome(table.state)
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
        self._remember(table, appended.head)
        return table

    async def _project(
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


def check_game_id(game_id: str) -> None:
    """404 for anything that is not a game id: a UUID in the one spelling the server issues
    (lower case, hyphenated). PostgreSQL would read any spelling as the same UUID, but Redis
    keys and this process's caches are keyed by the string: another spelling would be
    another projection record of the same game (decision, docs/api.md)."""
    if not CANONICAL_UUID.fullmatch(game_id):
        raise Problem(404, "game.not_found", f"no game {game_id}")


