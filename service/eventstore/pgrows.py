"""SQL fragments and row decoding shared by the event store (service.eventstore.store,
service.eventstore.locked).

JSON columns are sent as text (``$n::text::jsonb``) and read as text (``col::text``) and coded
with msgspec, so these work whatever JSON codecs the pool's connections have.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import msgspec

from service.eventstore.chain import canonical_uuid, utc_micro
from service.eventstore.records import (
    CommandRecord,
    DuplicateCommand,
    GameNotFound,
    GameRow,
    SeatTaken,
    StoredEvent,
)

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
    "error_code, error_detail, first_version, last_version, response::text AS response"
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
INSERT_EVENTS = """
INSERT INTO events (game_id, version, type, data, seat, command_id, recorded_at, prev_hash, hash,
                    public)
SELECT $1::uuid, u.v, u.t, u.d::jsonb, $2::int, $3::uuid, $4::timestamptz, u.p, u.h, u.c::jsonb
FROM unnest($5::int[], $6::text[], $7::text[], $8::bytea[], $9::bytea[], $10::text[])
     AS u(v, t, d, p, h, c)
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


def game_row(r: Any) -> GameRow:
    return GameRow(
        id=str(r["id"]),
        game=r["game"],
        seats=r["seats"],
        options=loads(r["options"]),
        status=r["status"],
        version=r["version"],
        head=bytes(r["head"]),
        invite_code=r["invite_code"],
        players=loads(r["players"]),
        result=loads(r["result"]),
        created_at=r["created_at"],
        updated_at=r["updated_at"],
    )


def stored_event(r: Any) -> StoredEvent:
    return StoredEvent(
        game_id=str(r["game_id"]),
        version=r["version"],
        type=r["type"],
        data=loads(r["data"]),
        seat=r["seat"],
        command_id=opt_str(r["command_id"]),
        recorded_at=r["recorded_at"],
        prev_hash=bytes(r["prev_hash"]),
        hash=bytes(r["hash"]),
        public=loads(r["public"]),
    )


def command_record(r: Any) -> CommandRecord:
    return CommandRecord(
        id=str(r["id"]),
        game_id=str(r["game_id"]),
        seat=r["seat"],
        idempotency_key=r["idempotency_key"],
        type=r["type"],
        body=loads(r["body"]),
        received_at=r["received_at"],
        outcome=r["outcome"],
        error_code=r["error_code"],
        error_detail=r["error_detail"],
        first_version=r["first_version"],
        last_version=r["last_version"],
        response=loads(r["response"]),
    )


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
    conn: Any,
    gid: uuid.UUID,
    *,
    command_id: str,
    seat: int | None,
    idempotency_key: str | None,
    type: str,
    body: Any,
    outcome: str,
    error_code: str | None,
    error_detail: str | None,
    first_version: int | None,
    last_version: int | None,
    response: Any,
    received_at: datetime,
) -> None:
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {OUTCOMES}, not {outcome!r}")
    cid = canonical_uuid(command_id)
    try:
        async with conn.transaction():  # a savepoint when already inside a transaction
            await conn.execute(
                "INSERT INTO commands (id, game_id, seat, idempotency_key, type, body, "
                "received_at, outcome, error_code, error_detail, first_version, last_version, "
                "response) VALUES ($1, $2, $3, $4, $5, $6::text::jsonb, $7, $8, $9, $10, $11, "
                "$12, $13::text::jsonb)",
                uuid.UUID(cid),
                gid,
                seat,
                idempotency_key,
                type,
                dumps(body),
                utc_micro(received_at),
                outcome,
                error_code,
                error_detail,
                first_version,
                last_version,
                None if response is None else dumps(response),
            )
    except asyncpg.UniqueViolationError:
        raise DuplicateCommand(str(gid), idempotency_key, cid) from None
    except asyncpg.ForeignKeyViolationError:
        raise GameNotFound(gid) from None


async def release_seat(conn: Any, row: GameRow, seat: int) -> GameRow:
    """Take ``seat`` of the (locked) game ``row`` back: its token stops working and its name is
    cleared; the updated row."""
    gid = uuid.UUID(row.id)
    players: list[str | None] = list(row.players or [])
    players += [None] * (row.seats - len(players))
    players[seat] = None
    await conn.execute("DELETE FROM seat_tokens WHERE game_id = $1 AND seat = $2", gid, seat)
    r = await conn.fetchrow(
        "UPDATE games SET players = $2::text::jsonb, updated_at = now() WHERE id = $1 "
        f"RETURNING {GAME_COLS}",
        gid,
        dumps(players),
    )
    return game_row(r)


async def assign_seat(
    conn: Any, row: GameRow, seat: int, name: str | None, token_hash: bytes, replace: bool
) -> GameRow:
    """Give ``seat`` of the (locked) game ``row`` a token and a name; the updated row.

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
    players: list[str | None] = list(row.players or [])
    players += [None] * (row.seats - len(players))
    players[seat] = name
    try:
        async with conn.transaction():
            await conn.execute(
                "INSERT INTO seat_tokens (game_id, seat, token_hash, name) "
                f"VALUES ($1, $2, $3, $4){upsert}",
                gid,
                seat,
                token_hash,
                name,
            )
            r = await conn.fetchrow(
                "UPDATE games SET players = $2::text::jsonb, updated_at = now() WHERE id = $1 "
                f"RETURNING {GAME_COLS}",
                gid,
                dumps(players),
            )
    except asyncpg.UniqueViolationError as exc:
        if exc.constraint_name == "seat_tokens_pkey":
            raise SeatTaken(row.id, seat) from None
        raise
    return game_row(r)
