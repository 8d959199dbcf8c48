"""The application: lobby and play on the event store, with projections brought up to date
after every append. HTTP-free: ``service.app`` maps requests onto these methods.

A command's life: authenticate the seat token; answer a repeated ``Idempotency-Key`` with the
first answer; take the latest (version, head, table) this process knows (or read it); decode the
command (malformed: 422, recorded); check ``expected_version`` (stale: 409, recorded); run the
game's ``decide`` with ``Rng(seed, version + 1)`` (illegal: 422, recorded — refusals are only
recorded after confirming the state was the stored one); append the events and record the
command with one compare-and-set statement (``service.optimistic``), deciding again on the
fresh state if another writer moved the game first; then answer with the events as the seat may
see them, the new head, a signed receipt, and the hints ``to_act`` and ``legal``, while the
projections are written in the background (:meth:`Projector.schedule`). Lobby actions and table
talk take the game's row lock instead.

The write path needs PostgreSQL only: the state a command is decided on is this process's
cached table (checked against the stored head) or folded from the stored events; a retried
``Idempotency-Key`` is answered from the ``commands`` table. Redis trouble never fails, slows
or changes a command. Dependency failures become 503s (:mod:`service.faults`).

Reads (``GET /v1/games/{id}``, ``/legal``) are never older than an acknowledged version: the
projection's version is compared with ``games.version`` in PostgreSQL, and a projection that is
behind (a write still pending, Redis restored from an older save) or unreadable (Redis down,
stalled) is answered from the table folded from PostgreSQL instead, and repaired.
"""

from __future__ import annotations

import asyncio
import hmac
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Annotated, Any

import msgspec
import structlog

from domain.kernel import CommandError, Rng, RuleError, seed_commitment
from domain.kernel.errors import UnknownGame
from domain.registry import AnyGame, get_game
from projections.platform_events import (
    LobbyCreated,
    LobbyJoined,
    LobbyLeft,
    TableMessage,
)
from projections.projector import Projector
from projections.replay import SNAPSHOT_EVERY, Replayer, fold_collecting
from projections.store import StoreUnavailable
from projections.table import Table, fold_stream, game_document, legal_document
from projections.views import fresh

from . import rejections
from .faults import Admission, Faults
from .hardening import name_key, player_name
from .hiding import CANONICAL, Keys
from .lru import LRU
from .observability import COMMANDS
from .optimistic import append_command
from .problems import Problem
from .receipts import Signer
from .records import CommandRecord, GameRow, NewEvent, StoredEvent
from .ruling import Pending, accepted_answer, fold_new, legal_bytes, lobby_pending, rule
from .store import DuplicateCommand, EventStore, GameNotFound, Locked, SeatTaken
from .tokens import HOST_PREFIX, SEAT_PREFIX, new_invite_code, new_seed, new_token, token_hash

log = structlog.get_logger("manifest")
MAX_MESSAGE = 2000
_CACHE_GAMES = 4096


#: Most names one game may invite (an Empire Builder table is 6; room for substitutes).
MAX_INVITED = 64


# --- request bodies --------------------------------------------------------------------------
class CreateGame(msgspec.Struct, forbid_unknown_fields=True):
    game: str
    seats: Annotated[int, msgspec.Meta(ge=1)]
    options: dict[str, Any] | None = None
    players: list[str] | None = None
    position: dict[str, Any] | None = None
    #: Only these names may join (see ``join``); None: anyone with the invite code.
    invited: Annotated[list[str], msgspec.Meta(max_length=MAX_INVITED)] | None = None


class JoinGame(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    invite_code: str
    seat: Annotated[int, msgspec.Meta(ge=0)] | None = None


class CommandBody(msgspec.Struct, forbid_unknown_fields=True):
    command: dict[str, Any]
    #: A strict non-negative integer ("28", 28.0, true: 400; see service.hardening).
    expected_version: Annotated[int, msgspec.Meta(ge=0)] | None = None


class MessageBody(msgspec.Struct, forbid_unknown_fields=True):
    to: list[int] | str
    text: str


class _Attempt(msgspec.Struct):
    """A command being decided: what was sent, by whom, under which key."""

    game_id: str
    seat: int
    body: CommandBody
    key: str | None
    command_id: str
    received_at: datetime


class _Stale(Exception):
    """The state a decision was based on is not the stored one any more."""


_RETRIES = 8


def _names(values: list[str]) -> list[str]:
    """Players named at creation: each a valid name, no two alike (:func:`name_key`)."""
    names = [player_name(v) for v in values]
    if len({name_key(n) for n in names}) != len(names):
        raise Problem(400, "lobby.name_taken", "two players may not have the same name")
    return names


def _hints(table: Table, seat: int, legal: msgspec.Raw | None = None) -> dict[str, Any]:
    """What the answer adds so a client need not ask: who is to act now, and the seat's own
    legal commands (empty unless it is still to act; ``legal``: already encoded)."""
    state = table.state
    return {
        "to_act": table.rules.to_act(state) if state is not None else [],
        "legal": legal_document(table, seat)["commands"] if legal is None else legal,
    }


class Manifest:
    #: Refused commands recorded per seat per game (``MANIFEST_REJECTED_CAP``); more: counted.
    rejected_cap = 1000

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
        self.replayer = Replayer(projector.store, self._read_range, SNAPSHOT_EVERY)
        #: game id -> (head hash, table at that head)
        self._tables: LRU[str, tuple[bytes, Table]] = LRU(_CACHE_GAMES)
        self._seat_tokens: LRU[bytes, tuple[str, int]] = LRU(8 * _CACHE_GAMES)
        self._keys: LRU[str, Keys] = LRU(_CACHE_GAMES)
        #: The canonical form new games are created in (``service.chain``; 1 only to test
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
        cached = self._tables.get(game_id)
        if cached is not None and cached[0] == head and cached[1].version == version:
            return cached[1]
        return None

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
        a token as a client only then (``service.limits``)."""
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

    # --- lobby -------------------------------------------------------------------------------
    async def create(self, req: CreateGame) -> dict[str, Any]:
        try:
            rules = get_game(req.game)
        except UnknownGame:
            raise Problem(
                422, "lobby.unknown_game", f"no game {req.game!r}; see /v1/rules"
            ) from None
        if not rules.min_seats <= req.seats <= rules.max_seats:
            raise Problem(
                422,
                "lobby.bad_seats",
                f"{rules.title} is for {rules.min_seats} to {rules.max_seats} players",
            )
        options = _problem_from(lambda: rules.decode_options(req.options))
        position = None
        if req.position is not None:
            position = _problem_from(lambda: rules.decode_position(req.position or {}))
        players = None if req.players is None else _names(req.players)
        if players is not None and len(players) != req.seats:
            raise Problem(422, "lobby.bad_players", f"name {req.seats} players, one per seat")
        invited = _invited(req.invited, players)
        seed = new_seed()
        message_key = new_seed() if self.canonical >= CANONICAL else None
        # Dry run of the set-up, so bad options or positions never leave a game behind.
        _problem_from(lambda: self._opening(rules, options, position, req.seats, seed, 1))
        if position is not None and rules.position_seats(position) != req.seats:
            raise Problem(
                422,
                "position.invalid",
                f"the position has {rules.position_seats(position)} players, not {req.seats}",
            )
        host_token = new_token(HOST_PREFIX)
        seats: list[dict[str, Any]] = [
            {"seat": i, "name": None, "token": None} for i in range(req.seats)
        ]
        snapshots: dict[int, bytes] = {}
        # One transaction: the game row, its seats, its events and its start — a failure
        # anywhere leaves nothing behind (no orphan game in the list).
        async with self.store.creating(
            game=rules.id,
            seats=req.seats,
            options=msgspec.to_builtins(options),
            invite_code=new_invite_code(),
            seed=seed,
            host_token_hash=token_hash(host_token),
            message_key=message_key,
        ) as locked:
            row = locked.row
            self._keys.put(row.id, Keys(seed, message_key))
            created = LobbyCreated(
                rules.id,
                req.seats,
                msgspec.to_builtins(options),
                seed_commitment(seed),
                None if position is None else msgspec.to_builtins(position),
                canonical=self.canonical,
                invited=invited,
            )
            pending: list[msgspec.Struct] = [created]
            for i, name in enumerate(players or []):
                token = new_token(SEAT_PREFIX)
                await locked.set_seat(i, name, token_hash(token))
                seats[i] = {"seat": i, "name": name, "token": token}
                pending.append(LobbyJoined(i, name))
            table = await self._append(locked, pending, snapshots, seat=None, command_id=None)
            if players is not None:
                table = await self._start(locked, table, snapshots)
            locked_row = locked.row
        for slot in seats:  # committed: the tokens are valid now (cached once started only:
            if slot["token"] is not None and table.status != "open":  # a seat may be removed)
                self._seat_tokens.put(token_hash(slot["token"]), (row.id, slot["seat"]))
        await self._project(table, snapshots)
        started = table.state is not None
        return {
            "id": row.id,
            "game": rules.id,
            "status": table.status,
            "version": locked_row.version,
            "host_token": host_token,
            "invite_code": row.invite_code,
            "seats": seats,
            # started at once: who acts, and the game as the host (no seat) sees it
            "to_act": rules.to_act(table.state) if started else [],
            "view": game_document(table, "spectator")["view"] if started else None,
        }

    async def _open_table(self, locked: Locked) -> Table:
        """The locked game's table, which must still be open (a lobby action): else 409."""
        table = await self._table_at(locked)
        if table.status != "open":
            raise Problem(409, "lobby.started", "the game has already started")
        return table

    @staticmethod
    def _opening(
        rules: AnyGame, options: Any, position: Any, seats: int, seed: bytes, version: int
    ) -> list[Any]:
        rng = Rng(seed, version)
        if position is not None:
            return rules.start_from_position(position, rng)
        return rules.start(options, seats, rng)

    async def join(self, game_id: str, req: JoinGame) -> dict[str, Any]:
        row = await self._row(game_id)
        if not hmac.compare_digest(req.invite_code.encode(), row.invite_code.encode()):
            raise Problem(403, "lobby.bad_invite", "the invite code does not match this game")
        name = player_name(req.name)
        token = new_token(SEAT_PREFIX)
        snapshots: dict[int, bytes] = {}
        async with self.store.lock(game_id) as locked:
            table = await self._open_table(locked)
            _check_invited(table, name)
            free = [i for i, n in enumerate(table.names) if n is None]
            if any(n is not None and name_key(n) == name_key(name) for n in table.names):
                raise Problem(409, "lobby.name_taken", f"a player called {name!r} has joined")
            if req.seat is not None:
                if not 0 <= req.seat < table.seats:
                    raise Problem(422, "lobby.no_such_seat", f"seats are 0 to {table.seats - 1}")
                if req.seat not in free:
                    raise Problem(409, "lobby.seat_taken", f"seat {req.seat} is taken")
                chosen = req.seat
            elif not free:
                raise Problem(409, "lobby.full", "every seat is taken")
            else:
                chosen = free[0]
            try:
                await locked.set_seat(chosen, name, token_hash(token))
            except SeatTaken:
                raise Problem(409, "lobby.seat_taken", f"seat {chosen} is taken") from None
            table = await self._append(
                locked, [LobbyJoined(chosen, name)], snapshots, seat=chosen, command_id=None
            )
            if all(n is not None for n in table.names):
                table = await self._start(locked, table, snapshots)
        if table.status != "open":  # committed, and no host can take the seat back any more
            self._seat_tokens.put(token_hash(token), (game_id, chosen))
        await self._project(table, snapshots)
        return {"game": game_id, "seat": chosen, "token": token, "status": table.status}

    async def remove_seat(self, game_id: str, token: str | None, seat: int) -> dict[str, Any]:
        """The host takes a joined player's seat back before the start (``lobby.left``): the
        seat reopens and the player's token stops working."""
        check_game_id(game_id)
        await self._require_host(game_id, token)
        snapshots: dict[int, bytes] = {}
        async with self.store.lock(game_id) as locked:
            table = await self._open_table(locked)
            if not 0 <= seat < table.seats:
                raise Problem(422, "lobby.no_such_seat", f"seats are 0 to {table.seats - 1}")
            name = table.names[seat]
            if name is None:
                raise Problem(409, "lobby.seat_empty", f"nobody has joined seat {seat}")
            await locked.release_seat(seat)
            table = await self._append(
                locked, [LobbyLeft(seat, name)], snapshots, seat=None, command_id=None
            )
        await self._project(table, snapshots)
        return {"id": game_id, "seat": seat, "status": table.status, "version": table.version}

    async def start(self, game_id: str, token: str | None) -> dict[str, Any]:
        await self._require_host(game_id, token)
        snapshots: dict[int, bytes] = {}
        async with self.store.lock(game_id) as locked:
            table = await self._open_table(locked)
            if any(n is None for n in table.names):
                raise Problem(409, "lobby.not_full", "the game starts once every seat is taken")
            table = await self._start(locked, table, snapshots)
        await self._project(table, snapshots)
        return {"id": game_id, "status": table.status, "version": table.version}

    async def _start(self, locked: Locked, table: Table, snapshots: dict[int, bytes]) -> Table:
        rules = table.rules
        seed = await self._seed(table.game_id)
        created = await locked.read(after=0, limit=1)
        position_raw = created[0].data.get("position")
        position = None if position_raw is None else rules.decode_position(position_raw)
        options = rules.decode_options(table.options)
        events = self._opening(rules, options, position, table.seats, seed, table.version + 1)
        return await self._append(locked, events, snapshots, seat=None, command_id=None)

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
        table, _ = await self._append_stored(
            locked, events, snapshots, seat=seat, command_id=command_id
        )
        return table

    async def _append_stored(
        self,
        locked: Locked,
        events: list[Any],
        snapshots: dict[int, bytes],
        *,
        seat: int | None,
        command_id: str | None,
    ) -> tuple[Table, list[StoredEvent]]:
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
        stored: list[StoredEvent] = []
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
            stored.extend(appended.events)
        self._remember(table, appended.head)
        return table, stored

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

    async def list_games(
        self, status: str | None, game: str | None, limit: int, cursor: str | None
    ) -> dict[str, Any]:
        before = None
        if cursor is not None:
            try:
                at_text, _, gid = cursor.partition("~")
                before = (datetime.fromisoformat(at_text), str(uuid.UUID(gid)))
            except ValueError:
                raise Problem(
                    400, "request.bad_cursor", "the cursor is not one we gave out"
                ) from None
        rows = await self.store.list_games(status=status, game=game, limit=limit, before=before)
        nxt = None
        if len(rows) == limit:
            at, gid = rows[-1].cursor
            # URL-safe as it is ("Z", not "+00:00": a "+" pasted into a query string is a space)
            nxt = f"{at.astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%S.%fZ')}~{gid}"
        return {
            "games": [
                {
                    "id": r.id,
                    "game": r.game,
                    "status": r.status,
                    "seats": r.seats,
                    "players": r.players,
                    "options": r.options,  # the terms (Empire Builder's money to win, ...)
                    "version": r.version,
                    "created_at": r.created_at.isoformat(),
                }
                for r in rows
            ],
            "next": nxt,
        }

    # --- reads (from projections) ------------------------------------------------------------
    async def document(self, game_id: str, field: str) -> bytes:
        """A projection field, never older than the stored version (``games.version``): a
        projection behind it, missing, or unreadable is answered from PostgreSQL instead."""
        # Both at once: whichever answers first, the projection is served only if it is at
        # least at the version PostgreSQL had when asked, which is at least every version
        # acknowledged before this request.
        stored, (have, raw) = await asyncio.gather(
            self.store.version_head(game_id), self._projected(game_id, field)
        )
        if stored is None or stored[0] == 0:
            raise Problem(404, "game.not_found", f"no game {game_id}")
        version, head = stored
        body = fresh(raw, version)
        if body is not None:
            return body
        # Not built at this version yet (lazy views), or the projection is behind or failing.
        current = have is not None and int(have) >= version
        table = await self._view_table(game_id, head, version, current)
        if not current:  # repair: a record that lags moves on (lazily), a missing one is whole
            self.projector.schedule(table, lazy=have is not None)
        body = await self.projector.views.view(table, field, keep=have is not None)
        if body is None:
            raise Problem(404, "game.not_found", f"no game {game_id}")
        return body

    async def _view_table(self, game_id: str, head: bytes, version: int, current: bool) -> Table:
        """The table to build a view from, at ``version`` or newer: this process's (at the
        stored head), the projection's (``current``: at least at ``version``), else folded
        from PostgreSQL."""
        if current and self._cached(game_id, head, version) is None:
            try:
                table = await self.projector.load(game_id)
            except StoreUnavailable as error:
                log.warning("view built from PostgreSQL", game=game_id, reason=str(error))
                table = None
            if table is not None and table.version >= version:
                return table
        return await self._stored_table(game_id, head, version)

    async def _projected(self, game_id: str, field: str) -> tuple[bytes | None, bytes | None]:
        """(version, field) of the projection; (None, None) when Redis fails."""
        try:
            have, raw = await self.projector.store.fields(game_id, ["version", field])
        except StoreUnavailable as error:
            log.warning("view served from PostgreSQL", game=game_id, reason=str(error))
            return None, None
        return have, raw

    async def game_document(self, game_id: str, token: str | None) -> bytes:
        check_game_id(game_id)
        if token is not None and token.startswith(HOST_PREFIX):
            return await self._host_document(game_id, token)
        seat = await self.seat_for(game_id, token)
        return await self.document(game_id, "doc:spectator" if seat is None else f"doc:seat:{seat}")

    async def _host_document(self, game_id: str, token: str) -> bytes:
        """What the host token reads: the game as a spectator sees it, with the invite code
        to hand out (the host is no seat: it sees no hidden thing)."""
        await self._require_host(game_id, token)
        row = await self._row(game_id)
        doc = msgspec.json.decode(await self.document(game_id, "doc:spectator"))
        doc["invite_code"] = row.invite_code
        return msgspec.json.encode(doc)

    async def legal_document(self, game_id: str, token: str | None) -> bytes:
        check_game_id(game_id)
        seat = await self.require_seat(game_id, token)
        return await self.document(game_id, f"legal:{seat}")

    # --- play --------------------------------------------------------------------------------
    async def command(
        self, game_id: str, token: str | None, body: CommandBody, key: str | None
    ) -> dict[str, Any]:
        """Decide on the latest known state and append with one compare-and-set statement
        (:mod:`service.optimistic`); if the game moved meanwhile, re-read and decide again."""
        check_game_id(game_id)
        kind = "command" if key is not None else "write"  # without a key: nothing to resend with
        return await self._write(game_id, lambda: self._command(game_id, token, body, key), kind)

    async def _write(
        self, game_id: str, run: Callable[[], Awaitable[dict[str, Any]]], kind: str
    ) -> dict[str, Any]:
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

    async def _command(
        self, game_id: str, token: str | None, body: CommandBody, key: str | None
    ) -> dict[str, Any]:
        seat = await self.require_seat(game_id, token)
        if key is not None:
            prior = await self.store.find_command(game_id, seat, key)
            if prior is not None:
                return await self._answer_again(prior, seat, body)
        attempt = _Attempt(
            game_id=game_id,
            seat=seat,
            body=body,
            key=key,
            command_id=str(uuid.uuid4()),
            received_at=datetime.now(UTC),
        )
        game = "?"
        try:
            for _ in range(_RETRIES):
                head, table = await self._current(game_id)
                game = table.game
                try:
                    answer = await self._decide_and_append(attempt, head, table)
                except _Stale:
                    self._tables.pop(game_id)
                    continue
                COMMANDS.labels(game=game, outcome="accepted").inc()
                return answer
            raise Problem(
                503, "version.contention", "the game kept changing while this command was decided"
            )
        except Problem as problem:
            COMMANDS.labels(game=game, outcome=problem.code).inc()
            raise

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

    async def _still(self, game_id: str, head: bytes) -> None:
        """Before refusing a command on a cached state, make sure the state is the stored one."""
        row = await self._row(game_id)
        if row.head != head:
            raise _Stale

    async def _decide_and_append(self, a: _Attempt, head: bytes, table: Table) -> dict[str, Any]:
        rules = table.rules
        try:
            command = rules.decode_command(a.body.command)
        except CommandError as error:
            return await self._refuse(a, Problem(422, error.code, error.message), "rejected")
        version = table.version
        if a.body.expected_version is not None and a.body.expected_version != version:
            await self._still(a.game_id, head)
            conflict = Problem(
                409,
                "version.conflict",
                f"the game is at version {version}, not {a.body.expected_version}",
                version=version,
            )
            return await self._refuse(a, conflict, "conflict")
        problem = self._not_playing(table)
        if problem is None:
            try:
                ruling = rule(table, a.seat, command, await self._seed(a.game_id))
            except RuleError as error:
                problem = Problem(422, error.code, error.message, **_details(error))
        if problem is not None:
            await self._still(a.game_id, head)
            return await self._refuse(a, problem, "rejected")
        new = ruling.table
        try:
            appended = await append_command(
                self.store.pool,
                game_id=a.game_id,
                version=version,
                head=head,
                events=[NewEvent(p.type, p.data, p.public) for p in ruling.pending],
                seat=a.seat,
                command_id=a.command_id,
                at=datetime.now(UTC),
                status=new.status if new.status != table.status else None,
                result=ruling.result,
                idempotency_key=a.key,
                command_type=str(a.body.command.get("type", ""))[:64],
                body=msgspec.to_builtins(a.body),
                received_at=a.received_at,
                respond=lambda stored: self._accepted(new, a.seat, stored),
            )
        except DuplicateCommand:
            return await self._replay_key(a)
        if appended is None:
            raise _Stale
        stored, response = appended
        self._remember(new, stored[-1].hash)
        known = {f"legal:{a.seat}": legal_bytes(ruling)}
        await self._project(new, ruling.snapshots, known, lazy=True)
        return {**response, **_hints(new, a.seat, ruling.legal)}

    async def _refuse(self, a: _Attempt, problem: Problem, outcome: str) -> dict[str, Any]:
        """Record a refused command and raise its problem (or, if its Idempotency-Key was
        taken meanwhile, answer as that command was answered). Past the seat's cap of recorded
        refusals it is only counted (:mod:`service.rejections`)."""
        if not await rejections.admit(self.store.pool, a.game_id, a.seat, self.rejected_cap):
            raise problem
        try:
            await self.store.record_rejection(
                game_id=a.game_id,
                command_id=a.command_id,
                seat=a.seat,
                idempotency_key=a.key,
                type=str(a.body.command.get("type", ""))[:64],
                body=msgspec.to_builtins(a.body),
                error_code=problem.code,
                error_detail=problem.detail,
                outcome=outcome,
                response=problem.document(),
                received_at=a.received_at,
            )
        except DuplicateCommand:
            return await self._replay_key(a)
        raise problem

    async def _answer_again(
        self, prior: CommandRecord, seat: int, body: CommandBody
    ) -> dict[str, Any]:
        """The first answer, whole: the recorded part, plus the hints (``to_act`` and the
        seat's ``legal``) recomputed at the answer's version — a pure function of the stream,
        so they are not stored with every command."""
        answer = _replay(prior, seat, body)
        head = bytes.fromhex(str(answer["head"]))
        table = await self._stored_table(prior.game_id, head, int(answer["version"]), False)
        return {**answer, **_hints(table, seat)}

    async def _replay_key(self, a: _Attempt) -> dict[str, Any]:
        if a.key is None:
            raise RuntimeError("only a command with an idempotency key is replayed")
        prior = await self.store.find_command(a.game_id, a.seat, a.key)
        if prior is None:  # the other insert rolled back: nothing to repeat
            raise _Stale
        return await self._answer_again(prior, a.seat, a.body)

    def _not_playing(self, table: Table) -> Problem | None:
        if table.status == "open":
            return Problem(
                409, "game.not_started", "the game has not started: seats are still open"
            )
        if table.status == "finished":
            return Problem(409, "game.finished", "the game is over")
        return None

    def _accepted(self, table: Table, seat: int, stored: list[StoredEvent]) -> dict[str, Any]:
        """The recorded answer (built inside the append, before the commit; a test makes it
        fail there to prove a rolled-back append leaves no trace)."""
        return accepted_answer(self.signer, table, seat, stored, self._keys.get(table.game_id))

    async def message(self, game_id: str, token: str | None, body: MessageBody) -> dict[str, Any]:
        check_game_id(game_id)
        return await self._write(game_id, lambda: self._message(game_id, token, body), "write")

    async def _message(self, game_id: str, token: str | None, body: MessageBody) -> dict[str, Any]:
        seat = await self.require_seat(game_id, token)
        text = body.text.strip()
        if not text or len(text) > MAX_MESSAGE:
            raise Problem(422, "message.bad_text", f"a message is 1 to {MAX_MESSAGE} characters")
        snapshots: dict[int, bytes] = {}
        async with self.store.lock(game_id) as locked:
            seats = (await self._table_at(locked)).seats
            if isinstance(body.to, str):
                if body.to != "all":
                    raise Problem(422, "message.bad_recipients", 'send to a list of seats or "all"')
                to: list[int] | str = "all"
            else:
                if not body.to or any(not 0 <= s < seats for s in body.to):
                    raise Problem(422, "message.bad_recipients", f"seats are 0 to {seats - 1}")
                to = sorted(set(body.to))
            command_id = str(uuid.uuid4())
            table = await self._append(
                locked, [TableMessage(seat, to, text)], snapshots, seat=seat, command_id=command_id
            )
            head = locked.row.head.hex()
            response = {
                "version": table.version,
                "head": head,
                "receipt": self.signer.receipt(game_id, table.version, head),
            }
            # Recorded like a command, so an audit can tie the event to what the seat sent.
            await locked.record_command(
                command_id=command_id,
                seat=seat,
                idempotency_key=None,
                type="table.message",
                body=msgspec.to_builtins(body),
                outcome="accepted",
                first_version=table.version,
                last_version=table.version,
                response=response,
            )
        await self._project(table, snapshots)
        return response


def _invited(invited: list[str] | None, players: list[str] | None) -> list[str] | None:
    if invited is None:
        return None
    names = [player_name(n) for n in invited]
    keys = {name_key(n) for n in names}
    if not names or len(keys) != len(names):
        raise Problem(422, "lobby.bad_invited", "invite one or more names, each once")
    if players is not None and any(name_key(p) not in keys for p in players):
        raise Problem(422, "lobby.bad_players", "every player named must be invited")
    return names


def _check_invited(table: Table, name: str) -> None:
    if table.invited is None:
        return
    if name_key(name) not in {name_key(n) for n in table.invited}:
        raise Problem(403, "lobby.not_invited", f"{name!r} is not invited to this game")
    if name_key(name) in {name_key(n) for n in table.names if n is not None}:
        raise Problem(409, "lobby.already_seated", f"{name!r} has a seat already")


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
    """404 for anything that is not a game id (a UUID)."""
    try:
        uuid.UUID(game_id)
    except ValueError:
        raise Problem(404, "game.not_found", f"no game {game_id}") from None


def _details(error: RuleError) -> dict[str, Any]:
    return {"rule": error.details} if error.details else {}


def _problem_from(thunk: Any) -> Any:
    try:
        return thunk()
    except RuleError as error:
        raise Problem(422, error.code, error.message) from None


def _replay(prior: CommandRecord, seat: int, body: CommandBody) -> dict[str, Any]:
    """The recorded first answer to a command sent again with the same Idempotency-Key (for an
    accepted command, without the ``to_act``/``legal`` hints: see ``Manifest._answer_again``)."""
    if prior.seat != seat or prior.body != msgspec.to_builtins(body):
        raise Problem(
            422,
            "idempotency.key_reused",
            "this Idempotency-Key was used for a different command; use a new key",
        )
    response = prior.response or {}
    if prior.outcome != "accepted":
        raise Problem(
            int(response.get("status", 422)),
            str(prior.error_code),
            str(prior.error_detail),
            **{
                k: v
                for k, v in response.items()
                if k not in ("type", "title", "status", "detail", "code")
            },
        )
    return dict(response)


__all__ = ["CommandBody", "CreateGame", "JoinGame", "Manifest", "MessageBody"]
