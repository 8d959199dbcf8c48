"""The parts of the in-memory event log (:class:`service.eventstore.memory.MemoryLog`) beside
its games and streams: a game's state, the row lock's holder (:class:`MemoryLocked`, what
:class:`service.eventstore.locked.Locked` is to PostgreSQL), and the side tables — kept
documents, turn clocks' deadlines (set as the ``events_clock_deadline`` trigger sets them),
signing keys (:class:`MemorySide`)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Unpack

import msgspec

from ledger.chain import canonical_uuid, chain_events, utc_micro
from ledger.records import CommandRecord, NewEvent, StoredEvent
from service.eventstore.deadlines import Claim
from service.eventstore.memoryplayers import MemoryPlayers
from service.eventstore.records import (
    AppendResult,
    GameNotFound,
    GameRow,
    NewCommand,
    SeatTaken,
    VersionConflict,
)
from service.eventstore.rejections import Unrecorded

if TYPE_CHECKING:
    from service.eventstore.memory import MemoryLog

STATUSES = ("open", "active", "finished")


def jsonb_order(value: Any) -> Any:
    """``value`` as ``jsonb`` reads it back: object keys shortest first, then by their bytes."""
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (len(k.encode()), k.encode()))
        return {k: jsonb_order(value[k]) for k in keys}
    if isinstance(value, list):
        return [jsonb_order(v) for v in value]
    return value


class GameState(msgspec.Struct):
    row: GameRow
    seed: bytes
    host_token_hash: bytes
    message_key: bytes | None
    events: list[StoredEvent] = msgspec.field(default_factory=list)
    commands: list[CommandRecord] = msgspec.field(default_factory=list)
    #: seat → (token hash, name)
    tokens: dict[int, tuple[bytes, str | None]] = msgspec.field(default_factory=dict)
    #: seat → (refusals counted unrecorded, of them over a budget)
    unrecorded: dict[int, list[int]] = msgspec.field(default_factory=dict)
    writes: int = 0
    #: seat → the id of the player it is bound to (issue 39)
    bound: dict[int, str] = msgspec.field(default_factory=dict)

    def seat_of_player(self, player_id: str) -> int | None:
        return next((s for s, p in self.bound.items() if p == player_id), None)

    def copy(self) -> GameState:
        """A copy to roll back to (events and commands are immutable: lists copied)."""
        return GameState(
            self.row, self.seed, self.host_token_hash, self.message_key, list(self.events),
            list(self.commands), dict(self.tokens),
            {s: list(n) for s, n in self.unrecorded.items()}, self.writes, dict(self.bound),
        )  # fmt: skip


class _Deadline(msgspec.Struct):
    due_at: datetime
    version: int
    claimed_until: datetime | None = None
    claimed_by: str | None = None


class MemorySide:
    """The games of :class:`MemoryLog` as read without their streams (rows, seats, refusal
    counts), its kept documents, deadlines and signing keys."""

    def __init__(self, clock: Callable[[], datetime]) -> None:
        self._clock = clock
        self._games: dict[str, GameState] = {}
        self._deadlines: dict[str, _Deadline] = {}
        self._server_keys: dict[str, tuple[bytes, bytes]] = {}
        self._keys_used: dict[bytes, tuple[str, datetime]] = {}
        self._kept: dict[tuple[str, str, str], tuple[bytes, bytes]] = {}
        #: players, their keys and the seats bound to them (issue 39)
        self.players = MemoryPlayers(self, clock)

    def _clock_set(self, gid: str, event: StoredEvent) -> None:
        """What the ``events_clock_deadline`` trigger does (``migrations/0009_deadlines.sql``)."""
        dues = [
            datetime.fromisoformat(s["deadline"])
            for s in event.data.get("seats", [])
            if s.get("deadline") is not None
        ]
        if not dues:
            self._deadlines.pop(gid, None)
            return
        held = self._deadlines.get(gid)
        if held is None or held.version < event.version:
            self._deadlines[gid] = _Deadline(min(dues), event.version)

    def _game(self, game_id: str | uuid.UUID) -> GameState:
        try:
            found = self._games.get(canonical_uuid(str(game_id)))
        except ValueError:
            found = None
        if found is None:
            raise GameNotFound(game_id)
        return found

    async def list_games(
        self,
        *,
        status: str | None = None,
        game: str | None = None,
        limit: int = 50,
        before: tuple[datetime, str] | None = None,
    ) -> list[GameRow]:
        if limit < 1:
            raise ValueError("limit must be positive")
        rows = sorted((g.row for g in self._games.values()), key=lambda r: r.cursor, reverse=True)
        return [
            r
            for r in rows
            if (status is None or r.status == status)
            and (game is None or r.game == game)
            and (before is None or r.cursor < before)
        ][:limit]

    async def game_versions(self, after: str | None, limit: int) -> list[tuple[str, int]]:
        ids = sorted(gid for gid in self._games if after is None or gid > after)[:limit]
        return [(gid, self._games[gid].row.version) for gid in ids]

    async def seat_for_token(self, token_hash: bytes) -> tuple[str, int] | None:
        for gid, game in self._games.items():
            for seat, (held, _) in game.tokens.items():
                if held == token_hash:
                    return gid, seat
        return None

    async def seats(self, game_id: str | uuid.UUID) -> list[tuple[int, str | None]]:
        return sorted((s, name) for s, (_, name) in self._game(game_id).tokens.items())

    # ------------------------------------------------------------------ refusals
    async def admit_refusal(self, game_id: str, seat: int, cap: int) -> bool:
        game = self._game(game_id)
        recorded = sum(1 for c in game.commands if c.seat == seat and c.outcome != "accepted")
        if recorded < cap:
            return True
        self._count(game, seat, over_budget=False)
        return False

    def refusal_over_budget(self, game_id: str, seat: int) -> None:
        self._count(self._game(game_id), seat, over_budget=True)

    def _count(self, game: GameState, seat: int, *, over_budget: bool) -> None:
        counts = game.unrecorded.setdefault(seat, [0, 0])
        counts[0] += 1
        counts[1] += int(over_budget)

    async def unrecorded_refusals(self, game_id: str) -> Unrecorded:
        counts = sorted(self._game(game_id).unrecorded.items())
        return Unrecorded(
            {str(s): n for s, (n, _) in counts}, {str(s): b for s, (_, b) in counts if b}
        )

    # ------------------------------------------------------------------ kept documents
    async def kept_document(
        self, game_id: str, kind: str, classes: list[str], stamp: bytes
    ) -> bytes | None:
        found = (self._kept.get((game_id, kind, c)) for c in classes)
        return next((body for kept, body in filter(None, found) if kept == stamp), None)

    async def keep_document(
        self, game_id: str, kind: str, klass: str, stamp: bytes, body: bytes
    ) -> bool:
        self._kept[(game_id, kind, klass)] = (stamp, body)
        return True

    # ------------------------------------------------------------------ deadlines
    async def claim_deadlines(
        self, now: datetime, until: datetime, owner: str, limit: int
    ) -> list[Claim]:
        due = sorted(
            (d.due_at, gid)
            for gid, d in self._deadlines.items()
            if d.due_at <= now and (d.claimed_until is None or d.claimed_until <= now)
        )[:limit]
        claims = []
        for _, gid in due:
            held = self._deadlines[gid]
            held.claimed_until, held.claimed_by = until, owner
            claims.append(Claim(gid, held.due_at, held.version))
        return claims

    async def release_deadline(self, game_id: str, owner: str) -> None:
        held = self._deadlines.get(game_id)
        if held is not None and held.claimed_by == owner:
            held.claimed_until = held.claimed_by = None

    async def correct_deadline(self, game_id: str, version: int, due_at: datetime | None) -> None:
        held = self._deadlines.get(game_id)
        if held is None or held.version > version:
            return
        if due_at is None:
            del self._deadlines[game_id]
        else:
            self._deadlines[game_id] = _Deadline(due_at, version)

    async def pending_deadline(self, game_id: str) -> Claim | None:
        held = self._deadlines.get(game_id)
        return None if held is None else Claim(game_id, held.due_at, held.version)

    # ------------------------------------------------------------------ signing keys
    async def server_key(self, key_id: str, private_pem: bytes, public_raw: bytes) -> bytes:
        return self._server_keys.setdefault(key_id, (private_pem, public_raw))[0]

    async def record_key_used(self, key_id: str, public_raw: bytes) -> None:
        self._keys_used.setdefault(public_raw, (key_id, utc_micro(self._clock())))

    async def keys_used(self) -> list[tuple[bytes, datetime]]:
        used = sorted(self._keys_used.items(), key=lambda kv: (kv[1][1], kv[1][0]), reverse=True)
        return [(raw, at) for raw, (_, at) in used]

    async def ping(self) -> bool:
        return True

    async def close(self) -> None:
        """Nothing to close."""


class MemoryLocked:
    """A game held under its lock (:meth:`MemoryLog.lock`); what
    :class:`service.eventstore.locked.Locked` is to the PostgreSQL store."""

    def __init__(self, log: MemoryLog, game: GameState) -> None:
        self._log = log
        self._game = game
        self._open = True
        self.row: GameRow = game.row

    def _check(self) -> GameState:
        if not self._open:
            raise RuntimeError("Locked used outside its lock() context")
        return self._game

    async def read(self, *, after: int = 0, limit: int | None = None) -> list[StoredEvent]:
        events = self._check().events[after:]
        return events if limit is None else events[:limit]

    async def prior_command(self, seat: int | None, idempotency_key: str) -> CommandRecord | None:
        return await self._log.find_command(self._check().row.id, seat, idempotency_key)

    async def append(
        self,
        *,
        expected_version: int,
        events: list[NewEvent],
        seat: int | None,
        command_id: str | None,
        status: str | None = None,
        result: Any = None,
        players: list[str | None] | None = None,
    ) -> AppendResult:
        game = self._check()
        if expected_version != game.row.version:
            raise VersionConflict(game.row.version, expected_version)
        if not events:
            raise ValueError("append needs at least one event")
        if status is not None and status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, not {status!r}")
        normal = [NewEvent(e.type, jsonb_order(e.data), jsonb_order(e.public)) for e in events]
        at = utc_micro(self._log._clock())
        stored = chain_events(
            game.row.id, expected_version, game.row.head, normal, seat, command_id, at
        )
        self._log._store(game, stored, status=status, result=jsonb_order(result), players=players)
        self.row = game.row
        return AppendResult(stored[0].version, stored[-1].version, stored[-1].hash, stored)

    async def set_seat(
        self,
        seat: int,
        name: str | None,
        token_hash: bytes,
        *,
        replace: bool = False,
        player: str | None = None,
    ) -> GameRow:
        game = self._check()
        if not 0 <= seat < game.row.seats:
            raise ValueError(f"seat {seat} out of range 0..{game.row.seats - 1}")
        if seat in game.tokens and not replace:
            raise SeatTaken(game.row.id, seat)
        if player is not None and game.seat_of_player(player) not in (None, seat):
            raise SeatTaken(game.row.id, seat)  # one seat per player per game, as the index
        game.tokens[seat] = (token_hash, name)
        if player is not None:
            game.bound[seat] = player
        return self._name(seat, name)

    async def seat_of_player(self, player_id: str) -> int | None:
        return self._check().seat_of_player(player_id)

    async def release_seat(self, seat: int) -> GameRow:
        self._check().tokens.pop(seat, None)
        self._game.bound.pop(seat, None)
        return self._name(seat, None)

    def _name(self, seat: int, name: str | None) -> GameRow:
        game = self._game
        players = list(game.row.players or []) + [None] * game.row.seats
        players = players[: game.row.seats]
        players[seat] = name
        game.row = msgspec.structs.replace(game.row, players=players)
        game.writes += 1
        self.row = game.row
        return self.row

    async def record_command(self, **command: Unpack[NewCommand]) -> None:
        self._log._insert_command(self._check(), command)
