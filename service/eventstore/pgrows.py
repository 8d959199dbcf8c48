"""SQL fragments and row decoding shared by the event store's modules (games, reads, commands,
the locked game, the optimistic append).

JSON columns are sent as text (``$n::text::jsonb``) and read as text (``col::text``) and coded
with msgspec, so these work whatever JSON codecs the pool's connections have.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import asyncpg  # type: ignore[import-untyped]
import msgspec

from ledger.chain import canonical_uuid, utc_micro
from ledger.records import CommandRecord, StoredEvent
from service.eventstore.atomic import atomic
from service.eventstore.records import (
    DuplicateCommand,
    GameNotFound,
    GameRow,
    NewCommand,
    SeatTaken,
)

R = TypeVar("R", GameRow, StoredEvent, CommandRecord)

STATUSES = ("open", "active", "finished")
OUTCOMES = ("accepted", "rejected", "conflict")

GAME_COLS = (
    "id, game, seats, options::text AS options, status, version, head, invite_code, "
    "players::text AS players, result::text AS result, created_at, updated_at"
)
EVENT_COLS = (
    "game_id, version, type, data::text AS data, seat, command_id, recorded_at, prev_hash, hash, "
    "public::text AS public"
)
COMMAND_COLS = (
    "id, game_id, seat, idempotency_key, type, body::text AS body, received_at, outcome, "
    "error_code, error_detail, first_version, last_version, response::text AS response, "
    "encode(body_sha256, 'hex') AS body_sha256, body_size, body IS NULL AS body_truncated, "
    "body_prefix"
)
#: The command a seat sent under an idempotency key: keys are unique per (game, seat), the
#: expression matching the unique index ``commands_idempotency_idx`` (so it serves the lookup).
FIND_COMMAND = (
    f"SELECT {COMMAND_COLS} FROM commands WHERE game_id = $1 "
    "AND coalesce(seat, -1) = coalesce($2::int, -1) AND idempotency_key = $3"
)
NORMALIZE_JSON = (
    "SELECT array(SELECT x::jsonb::text FROM unnest($1::text[]) WITH ORDINALITY AS t(x, i) "
    "ORDER BY i)"
)


#: SHA-256 over the row versions of everything the audit reads of one game (NULL: no such
#: game). PostgreSQL gives every row version its own (xmin, ctid): any INSERT, UPDATE or DELETE
#: of a row — triggers disabled or not — changes the set, without hashing the rows' contents.
FINGERPRINT = """
SELECT sha256(convert_to(concat_ws('|',
    g.xmin::text, g.ctid::text,
    (SELECT s.xmin::text || '@' || s.ctid::text FROM secrets s WHERE s.game_id = g.id),
    (SELECT string_agg(e.version::text || '@' || e.xmin::text || '@' || e.ctid::text, ','
                       ORDER BY e.version, e.ctid)
       FROM events e WHERE e.game_id = g.id),
    (SELECT string_agg(c.xmin::text || '@' || c.ctid::text, ',' ORDER BY c.ctid)
       FROM commands c WHERE c.game_id = g.id),
    (SELECT string_agg(r.seat::text || ':' || r.count::text || ':' || r.over_budget::text, ','
                       ORDER BY r.seat)
       FROM rejections_unrecorded r WHERE r.game_id = g.id)
), 'UTF8'))
  FROM games g WHERE g.id = $1
"""


def utc_now() -> datetime:
    return datetime.now(UTC)


def dumps(value: Any) -> str:
    return msgspec.json.encode(value).decode()


def loads(text: str | None) -> Any:
    return None if text is None else msgspec.json.decode(text)


def public_texts(events: list[Any]) -> list[str | None]:
    """Each event's public form as JSON text (None when it has none)."""
    return [None if e.public is None else dumps(e.public) for e in events]


def opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def game_uuid(game_id: str | uuid.UUID) -> uuid.UUID:
    """``game_id`` as a UUID; a string that is no UUID names no game."""
    if isinstance(game_id, uuid.UUID):
        return game_id
    try:
        return uuid.UUID(str(game_id))
    except ValueError:
        raise GameNotFound(game_id) from None


def _from_row(cls: type[R], r: Any, **read: Callable[[Any], Any]) -> R:
    """A record from a row whose columns are named as its fields (``read``: how to read some:
    JSON text, bytes, UUIDs as strings; the others are taken as they come)."""
    return cls(**{f: read[f](r[f]) if f in read else r[f] for f in cls.__struct_fields__})


def game_row(r: Any) -> GameRow:
    return _from_row(GameRow, r, id=str, options=loads, head=bytes, players=loads, result=loads)


def stored_event(r: Any) -> StoredEvent:
    return _from_row(
        StoredEvent,
        r,
        game_id=str,
        data=loads,
        command_id=opt_str,
        prev_hash=bytes,
        hash=bytes,
        public=loads,
    )


def command_record(r: Any) -> CommandRecord:
    return _from_row(CommandRecord, r, id=str, game_id=str, body=loads, response=loads)


async def read_events(
    conn: Any, gid: uuid.UUID, after: int, limit: int | None
) -> list[StoredEvent]:
    rows = await conn.fetch(
        f"SELECT {EVENT_COLS} FROM events WHERE game_id = $1 AND version > $2 "
        "ORDER BY version LIMIT $3",
        gid,
        after,
        limit,
    )
    return [stored_event(r) for r in rows]


async def insert_command(
    conn: Any, gid: uuid.UUID, command: NewCommand, now: Callable[[], datetime]
) -> None:
    """Insert a command's row (``received_at``: ``now()`` unless given): in a savepoint inside
    a transaction, else as one statement that commits itself — no BEGIN and COMMIT around it,
    so its idempotency key is never held uncommitted while this process's loop gets round to
    the COMMIT (a batch of appends inserting the same key would wait that long:
    :mod:`service.eventstore.batched`).

    Raises :class:`DuplicateCommand` if the id, or the seat's idempotency key for this game, is
    already recorded; :class:`GameNotFound` if the game is not."""
    outcome = command.get("outcome")
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {OUTCOMES}, not {outcome!r}")
    cid = canonical_uuid(command["command_id"])
    received_at = command.get("received_at")
    response = command.get("response")
    try:
        async with atomic(conn) if conn.is_in_transaction() else contextlib.nullcontext():
            await conn.execute(
                "INSERT INTO commands (id, game_id, seat, idempotency_key, type, body, "
                "received_at, outcome, error_code, error_detail, first_version, last_version, "
                "response, body_sha256, body_size, body_prefix) VALUES ($1, $2, $3, $4, $5, "
                "$6::text::jsonb, $7, $8, $9, $10, $11, $12, $13::text::jsonb, $14, $15, $16)",
                uuid.UUID(cid),
                gid,
                command["seat"],
                command["idempotency_key"],
                command["type"],
                None if command["body"] is None else dumps(command["body"]),
                utc_micro(received_at if received_at is not None else now()),
                outcome,
                command.get("error_code"),
                command.get("error_detail"),
                command.get("first_version"),
                command.get("last_version"),
                None if response is None else dumps(response),
                command.get("body_sha256"),
                command.get("body_size"),
                command.get("body_prefix"),
            )
    except asyncpg.UniqueViolationError:
        raise DuplicateCommand(str(gid), command["idempotency_key"], cid) from None
    except asyncpg.ForeignKeyViolationError:
        raise GameNotFound(gid) from None


async def _set_players(conn: Any, row: GameRow, seat: int, name: str | None) -> Any:
    """``games.players`` of the (locked) game ``row`` with ``seat``'s name set; the new row."""
    players: list[str | None] = list(row.players or [])
    players += [None] * (row.seats - len(players))
    players[seat] = name
    return await conn.fetchrow(
        "UPDATE games SET players = $2::text::jsonb, updated_at = now() WHERE id = $1 "
        f"RETURNING {GAME_COLS}",
        uuid.UUID(row.id),
        dumps(players),
    )


async def release_seat(conn: Any, row: GameRow, seat: int) -> GameRow:
    """Take ``seat`` of the (locked) game ``row`` back: its token stops working and its name is
    cleared; the updated row."""
    gid = uuid.UUID(row.id)
    await conn.execute("DELETE FROM seat_tokens WHERE game_id = $1 AND seat = $2", gid, seat)
    return game_row(await _set_players(conn, row, seat, None))


async def assign_seat(
    conn: Any,
    row: GameRow,
    seat: int,
    name: str | None,
    token_hash: bytes,
    replace: bool,
    player: str | None = None,
) -> GameRow:
    """Give ``seat`` of the (locked) game ``row`` a token and a name (and bind it to
    ``player``, a player id, when given); the updated row.

    Runs in a savepoint, so :class:`SeatTaken` / ``ValueError`` leave the caller's transaction
    usable.
    """
    if not 0 <= seat < row.seats:
        raise ValueError(f"seat {seat} out of range 0..{row.seats - 1}")
    upsert = (
        " ON CONFLICT (game_id, seat) DO UPDATE SET token_hash = EXCLUDED.token_hash, "
        "name = EXCLUDED.name"
        if replace
        else ""
    )
    gid = uuid.UUID(row.id)
    try:
        async with atomic(conn):
            await conn.execute(
                "INSERT INTO seat_tokens (game_id, seat, token_hash, name, player_id) "
                f"VALUES ($1, $2, $3, $4, $5){upsert}",
                gid,
                seat,
                token_hash,
                name,
                None if player is None else uuid.UUID(player),
            )
            r = await _set_players(conn, row, seat, name)
    except asyncpg.UniqueViolationError as exc:
        if exc.constraint_name == "seat_tokens_pkey":
            raise SeatTaken(row.id, seat) from None
        raise
    return game_row(r)


async def locked_row(conn: Any, game_id: str | uuid.UUID) -> GameRow:
    """The game's row, taking its row lock (``FOR UPDATE``) in ``conn``'s transaction; raises
    :class:`GameNotFound`."""
    r = await conn.fetchrow(
        f"SELECT {GAME_COLS} FROM games WHERE id = $1 FOR UPDATE", game_uuid(game_id)
    )
    if r is None:
        raise GameNotFound(game_id)
    return game_row(r)
