"""Helpers of the history and audit integration tests (issue 4): a server per test module,
games played in-process through the real append path (``service.application.gameplay.Manifest`` on
its own
pool, same PostgreSQL, same Redis prefix as the server), tampering as a superuser, and the
reference views folded from the events read straight from PostgreSQL."""

from __future__ import annotations

import random
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import msgspec

from domain.jolly_cargo import JOLLY_CARGO
from domain.kernel import AUDITOR
from domain.platform.table import Table, fold_stream, game_document
from ledger.chain import ZERO_HASH, canonical, link
from ledger.records import StoredEvent
from service.application.bodies import CommandBody, CreateGame, MessageBody
from service.application.gameplay import Manifest
from service.bootstrap import build_manifest
from service.settings import Settings

from .apihelp import GAME, RANDOM_CRATES, tokens_of
from .serverproc import ServerProcess


@asynccontextmanager
async def in_process(server: ServerProcess) -> AsyncIterator[Manifest]:
    """The application object on the server's database and Redis prefix (another "instance")."""
    settings = Settings(
        pg_dsn=server.pg_dsn,
        redis_url=server.redis_url,
        redis_prefix=server.prefix,
        pg_pool=4,
        log_level="warning",
    )
    manifest, store, projections = await build_manifest(settings)
    try:
        yield manifest
    finally:
        await projections.close()
        await store.close()


# --- playing ---------------------------------------------------------------------------------
def as_json(answer: msgspec.Struct) -> dict[str, Any]:
    """An application answer (a Struct) as a client decodes it from the wire."""
    decoded: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(answer))
    return decoded


async def create(
    manifest: Manifest, options: dict[str, Any] | None = None, seats: int = 2
) -> dict[str, Any]:
    """A started game (bot players), its create answer as a client decodes it."""
    created = await manifest.lobby.create(
        CreateGame(
            game=GAME,
            seats=seats,
            options=RANDOM_CRATES if options is None else options,
            players=[f"bot{i}" for i in range(seats)],
        )
    )
    return as_json(created)


async def spectator_doc(manifest: Manifest, game_id: str) -> dict[str, Any]:
    doc: dict[str, Any] = msgspec.json.decode(
        await manifest.documents.document(game_id, "doc:spectator")
    )
    return doc


Chooser = Callable[[list[dict[str, Any]], random.Random], dict[str, Any]]


def uniform(commands: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    return rng.choice(commands)


def mostly_end_turn(commands: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    """``end_turn`` whenever it is legal (3 events a command, and the game never ends)."""
    for command in commands:
        if command["type"] == "end_turn":
            return command
    return rng.choice(commands)


async def bot_command(
    manifest: Manifest,
    game_id: str,
    tokens: list[str],
    rng: random.Random,
    choose: Chooser = uniform,
) -> dict[str, Any] | None:
    """One legal command by a seat to act, through ``manifest.play.command`` (None: game over)."""
    doc = await spectator_doc(manifest, game_id)
    if doc["status"] != "active":
        return None
    who = rng.choice(doc["to_act"])
    legal = msgspec.json.decode(await manifest.documents.legal_document(game_id, tokens[who]))
    body = CommandBody(command=choose(legal["commands"], rng), expected_version=legal["version"])
    return as_json(await manifest.play.command(game_id, tokens[who], body, None))


async def play_to_end(
    manifest: Manifest, created: dict[str, Any], rng: random.Random, talk_at: int = 40
) -> dict[str, Any]:
    """Play a created game to its end in-process; one table message on the way. Returns the
    last accepted command's answer (with its receipt)."""
    game_id, tokens = created["id"], tokens_of(created)
    last: dict[str, Any] | None = None
    commands = 0
    while True:
        response = await bot_command(manifest, game_id, tokens, rng)
        if response is None:
            break
        last = response
        commands += 1
        if commands == talk_at:
            await manifest.talk.message(game_id, tokens[1], MessageBody(to=[0], text="gg?"))
    assert last is not None
    return last


# --- PostgreSQL as an attacker with superuser access ------------------------------------------
async def tamper(dsn: str, *statements: tuple[str, tuple[Any, ...]]) -> None:
    """Run statements with the events' immutability triggers off (in one transaction)."""
    conn = await asyncpg.connect(dsn)
    try:
        async with conn.transaction():
            await conn.execute("ALTER TABLE events DISABLE TRIGGER USER")
            for sql, args in statements:
                await conn.execute(sql, *args)
            await conn.execute("ALTER TABLE events ENABLE TRIGGER USER")
    finally:
        await conn.close()


def set_data(game_id: str, version: int, data: Any) -> tuple[str, tuple[Any, ...]]:
    return (
        "UPDATE events SET data = $3::jsonb WHERE game_id = $1::uuid AND version = $2",
        (game_id, version, msgspec.json.encode(data).decode()),
    )


def delete_event(game_id: str, version: int) -> tuple[str, tuple[Any, ...]]:
    return ("DELETE FROM events WHERE game_id = $1::uuid AND version = $2", (game_id, version))


def swap_versions(game_id: str, a: int, b: int) -> list[tuple[str, tuple[Any, ...]]]:
    """Events ``a`` and ``b`` trade places (each keeps its own data, link and hash)."""
    move = "UPDATE events SET version = $3 WHERE game_id = $1::uuid AND version = $2"
    parking = 1_000_000
    return [(move, (game_id, a, parking)), (move, (game_id, b, a)), (move, (game_id, parking, b))]


def rechained(events: list[StoredEvent], changed: dict[int, Any]) -> list[StoredEvent]:
    """The stream with some events' data replaced and every link recomputed from the first
    changed one: what an attacker who understands the chain would write."""
    out: list[StoredEvent] = []
    prev = ZERO_HASH
    for event in events:
        data = changed.get(event.version, event.data)
        public = event.public if event.version not in changed else None
        body = canonical(
            event.game_id,
            event.version,
            event.type,
            event.seat,
            event.command_id,
            event.recorded_at,
            data if public is None else public,
        )
        new = msgspec.structs.replace(
            event, data=data, public=public, prev_hash=prev, hash=link(prev, body)
        )
        out.append(new)
        prev = new.hash
    return out


def rewrite(game_id: str, events: list[StoredEvent]) -> list[tuple[str, tuple[Any, ...]]]:
    """Statements that replace the game's whole stream with ``events`` and set its head."""
    statements: list[tuple[str, tuple[Any, ...]]] = [
        ("DELETE FROM events WHERE game_id = $1::uuid", (game_id,))
    ]
    for e in events:
        statements.append(
            (
                "INSERT INTO events (game_id, version, type, data, seat, command_id, "
                "recorded_at, prev_hash, hash, public) "
                "VALUES ($1::uuid, $2, $3, $4::jsonb, $5, $6::uuid, $7, $8, $9, $10::jsonb)",
                (
                    game_id,
                    e.version,
                    e.type,
                    msgspec.json.encode(e.data).decode(),
                    e.seat,
                    e.command_id,
                    e.recorded_at,
                    e.prev_hash,
                    e.hash,
                    None if e.public is None else msgspec.json.encode(e.public).decode(),
                ),
            )
        )
    head = events[-1].hash if events else ZERO_HASH
    statements.append(("UPDATE games SET head = $2 WHERE id = $1::uuid", (game_id, head)))
    return statements


# --- reference views -------------------------------------------------------------------------
class Folding:
    """Events read from PostgreSQL folded one at a time, with both reference views."""

    def __init__(self, game_id: str) -> None:
        self.game_id = game_id
        self.table: Table | None = None
        self.game_events: list[Any] = []
        self.state: Any = None

    def push(self, event: StoredEvent) -> None:
        self.table = fold_stream(self.table, [event], self.game_id)
        if "." not in event.type:
            decoded = JOLLY_CARGO.decode_event(event.data)
            self.state = JOLLY_CARGO.fold([decoded], self.state)

    def document(self, everything: bool) -> dict[str, Any]:
        assert self.table is not None
        doc = game_document(self.table, "spectator", everything=everything)
        decoded: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(doc))
        return decoded

    def own_view(self, viewer: Any = AUDITOR) -> Any:
        """``JOLLY_CARGO.view`` of the game's own fold (None before the game starts)."""
        if self.state is None:
            return None
        return msgspec.json.decode(msgspec.json.encode(JOLLY_CARGO.view(self.state, viewer)))


def new_key() -> str:
    return f"k-{uuid.uuid4().hex}"


# --- Server-Sent Events ------------------------------------------------------------------------
async def sse_messages(lines: AsyncIterator[str]) -> AsyncIterator[dict[str, str]]:
    """Parse an SSE stream into messages ({"event", "data", "id"})."""
    message: dict[str, str] = {}
    async for line in lines:
        if line == "":
            if "data" in message:
                yield message
            message = {}
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data" and "data" in message:
            message["data"] += "\n" + value
        else:
            message[name] = value
