"""The answers are msgspec Structs built by the application layer (issue 11), and the bytes on
the wire are what the dicts they replace encoded to: every field, in the order written, ``null``
where it was ``null``, absent where it was absent. The field order of each answer (and of its
parts) is written down here as the dicts wrote it; an answer whose encoding lists other fields,
in another order, or drops a ``null``, fails. The recorded command answer (``commands.response``
in PostgreSQL) is stored as it was and answered again as it was. Also: no handler reads
``app.state`` (the objects come by dependency injection)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import msgspec
import pytest

from ledger.answers import RecordedAnswer
from projections.projector import Projector
from projections.store import MemoryStore
from service.application.bodies import CommandBody, CreateGame, JoinGame, MessageBody
from service.application.history import History
from service.application.queries import QueryBody
from service.bootstrap import compose
from service.eventstore.keys import load_signer, published_keys
from service.eventstore.migrate import migrate
from service.http import schemas
from service.http.routes import system

from .apihelp import GAME, RANDOM_CRATES, pg

pytestmark = pytest.mark.integration
HTTP = Path(__file__).resolve().parents[2] / "service" / "http"

# The fields of each answer, in the order the application's dicts wrote them (docs/api.md).
RECEIPT = ["game", "version", "head", "key_id", "signature"]
EVENT = ["version", "type", "seat", "at", "data", "openings", "hash", "prev_hash", "command"]
SEAT_SLOT = ["seat", "name", "token"]
CREATED = [
    "id", "game", "status", "version", "host_token", "invite_code", "seats", "to_act", "view"
]  # fmt: skip
SUMMARY = ["id", "game", "status", "seats", "players", "options", "version", "created_at"]
JOINED = ["game", "seat", "token", "status"]
STARTED = ["id", "status", "version"]
REMOVED = ["id", "seat", "status", "version"]
RECORDED = ["version", "events", "head", "receipt"]
COMMAND = [*RECORDED, "to_act", "legal"]
MESSAGE = ["version", "head", "receipt"]
PAGE = ["events", "next"]
REPLAY = ["version", "status", "to_act", "view", "result", "folded", "sentence", "seat"]
QUERY = ["version", "answer"]
DISPUTE = [
    "game", "version", "command", "state_before", "checks", "events", "chain", "inclusion",
    "receipt", "rejected_before",
]  # fmt: skip
COMMAND_DOC = [
    "id", "seat", "type", "body", "received_at", "idempotency_key", "outcome", "error_code",
    "error_detail", "first_version", "last_version",
    # issue 25: a refusal's body bounded (docs/receipts-and-audit.md)
    "body_sha256", "body_size", "body_truncated", "body_prefix",
]  # fmt: skip
STATE_BEFORE = ["version", "seat", "as_seat_saw_it", "as_you_see_it", "full"]
CHECK = ["check", "ok", "detail"]
CHAIN = ["construction", "canonical", "prev_hash", "hash", "recomputed", "ok"]
INCLUSION = ["construction", "leaf_index", "tree_size", "leaf_hash", "path", "tree_head"]
TREE_HEAD = ["game", "size", "root", "head", "key_id", "signature"]
KEY = ["id", "alg", "status", "public_key", "pem", "first_used"]


def _wire(answer: Any) -> Any:
    """``answer`` as a client decodes it (JSON objects keep the order of the bytes)."""
    return msgspec.json.decode(msgspec.json.encode(answer))


def _fields(value: dict[str, Any], expected: list[str]) -> None:
    assert list(value) == expected, (list(value), expected)


def _events(events: list[dict[str, Any]]) -> None:
    assert events
    for event in events:  # a read of history tells each event as a sentence; an answer does not
        _fields(event, EVENT + (["sentence"] if "sentence" in event else []))


def _dispute(answer: Any) -> dict[str, Any]:
    d: dict[str, Any] = _wire(answer)
    _fields(d, DISPUTE)
    if d["command"] is not None:
        _fields(d["command"], COMMAND_DOC)
    _fields(d["state_before"], STATE_BEFORE)
    for check in d["checks"]:
        _fields(check, CHECK)
    _events(d["events"])
    _fields(d["chain"], CHAIN)
    _fields(d["inclusion"], INCLUSION)
    _fields(d["inclusion"]["tree_head"], TREE_HEAD)
    _fields(d["receipt"], RECEIPT)
    for command in d["rejected_before"]:
        _fields(command, COMMAND_DOC)
    return d


def test_every_answer_encodes_to_the_fields_the_dicts_wrote(fresh_database: str) -> None:
    asyncio.run(_answers(fresh_database))


async def _answers(dsn: str) -> None:
    await migrate(dsn)
    async with pg(dsn) as store:
        projector = Projector(MemoryStore(), lambda g, after: store.read(g, after=after))
        manifest = compose(store, projector, await load_signer(store))
        history = History.of(manifest)
        open_game = await manifest.lobby.create(
            CreateGame(game=GAME, seats=2, options=RANDOM_CRATES)
        )
        wire = _wire(open_game)
        _fields(wire, CREATED)
        assert wire["to_act"] == [] and wire["view"] is None  # not started: null, not absent
        for slot in wire["seats"]:
            assert slot == {"seat": slot["seat"], "name": None, "token": None}
            _fields(slot, SEAT_SLOT)
        gid = open_game.id
        joined = await manifest.lobby.join(
            gid, JoinGame(name="ann", invite_code=open_game.invite_code)
        )
        _fields(_wire(joined), JOINED)
        removed = await manifest.lobby.remove_seat(gid, open_game.host_token, joined.seat)
        _fields(_wire(removed), REMOVED)
        for name in ("bo", "cy"):
            await manifest.lobby.join(gid, JoinGame(name=name, invite_code=open_game.invite_code))
        created = await manifest.lobby.create(
            CreateGame(game=GAME, seats=2, options=RANDOM_CRATES, players=["a", "b"])
        )
        wire = _wire(created)
        _fields(wire, CREATED)
        assert wire["to_act"] and wire["view"] is not None
        for slot in wire["seats"]:
            _fields(slot, SEAT_SLOT)
        page = _wire(await manifest.lobby.list_games(None, None, 1, None))
        _fields(page, ["games", "next"])
        assert isinstance(page["next"], str)
        last = _wire(await manifest.lobby.list_games(None, None, 10, None))
        assert last["next"] is None  # null, not absent
        for summary in last["games"]:
            _fields(summary, SUMMARY)
        gid = created.id
        seat = created.to_act[0]
        token = created.seats[seat].token
        assert token is not None
        legal = msgspec.json.decode(await manifest.documents.legal_document(gid, token))
        body = CommandBody(command=legal["commands"][0])
        first = await manifest.play.command(gid, token, body, "key-1")
        wire = _wire(first)
        _fields(wire, COMMAND)
        _events(wire["events"])
        _fields(wire["receipt"], RECEIPT)
        assert isinstance(wire["legal"], list)
        # What PostgreSQL holds for it is the recorded part, as it always was (no hints) ...
        recorded = next(c for c in await store.commands(gid) if c.idempotency_key == "key-1")
        assert sorted(recorded.response) == sorted(RECORDED)
        assert recorded.response == {k: wire[k] for k in RECORDED}
        # ... and sent again, the answer is the first answer (the stored JSON, its keys
        # reordered by jsonb, decoded into the Struct: its fields in the first answer's order,
        # as before; inside an event's ``data`` jsonb's order, as before; the hints recomputed).
        again = _wire(await manifest.play.command(gid, token, body, "key-1"))
        assert again == wire
        _fields(again, COMMAND)
        _events(again["events"])
        _fields(again["receipt"], RECEIPT)
        assert msgspec.json.encode(again["legal"]) == msgspec.json.encode(wire["legal"])
        said = await manifest.talk.message(gid, token, MessageBody(to="all", text="hello"))
        wire = _wire(said)
        _fields(wire, MESSAGE)
        _fields(wire["receipt"], RECEIPT)
        spoken = next(c for c in await store.commands(gid) if c.type == "table.message")
        assert spoken.response == wire
        for caller in (None, token):
            page = _wire(await history.events(gid, caller, 0, 2))
            _fields(page, PAGE)
            _events(page["events"])
            assert page["next"] == 2
        assert _wire(await history.events(gid, token, 0, 100))["next"] is None
        replay = _wire(await history.replay(gid, token, 2))
        _fields(replay, REPLAY)
        set_up = _dispute(await history.dispute(gid, 1, None))
        assert set_up["command"] is None and set_up["state_before"]["full"] is None
        disputed = _dispute(await history.dispute(gid, first.version, token))
        assert disputed["command"] is not None
        empire = await manifest.lobby.create(
            CreateGame(game="empire-builder", seats=2, players=["ann", "bob"])
        )
        asker = empire.seats[empire.to_act[0]].token
        plan = QueryBody(query={"type": "plan", "to": "Denver"})
        query = _wire(await manifest.queries.query(empire.id, asker, plan))
        _fields(query, QUERY)
        assert query["version"] == empire.version
        published = await published_keys(manifest.store, manifest.signer)
        keys = _wire(schemas.Keys(keys=published))
        _fields(keys, ["keys"])
        for key in keys["keys"]:
            _fields(key, KEY)
        report = await history.audit(gid)
        rejected = {"cap_per_seat": 1, "unrecorded": {}}  # added by the cache (AuditCache)
        typed = msgspec.convert({**report, "rejected": rejected}, schemas.AuditReport, strict=True)
        assert list(report) == list(schemas.AuditReport.__struct_fields__)[:-1]
        assert msgspec.json.decode(msgspec.json.encode(typed))["adjudication"] == (
            report["adjudication"]  # absent stays absent, null stays null
        )


def test_an_answer_recorded_by_an_older_server_is_sent_again_as_recorded() -> None:
    """A recorded answer without ``key_id`` (receipts before key ids) or an event's
    ``openings`` or ``command`` (issue 35) decodes into the Struct and encodes without them:
    absent stays absent."""
    event = dict.fromkeys(EVENT, "x") | {"version": 1, "seat": None, "data": {}}
    del event["openings"], event["command"]
    receipt = {"game": "g", "version": 1, "head": "h", "signature": "s"}
    old = {"version": 1, "events": [event], "head": "h", "receipt": receipt}
    again = _wire(msgspec.convert(old, RecordedAnswer).answer([0], msgspec.Raw(b"[]")))
    assert again == {**old, "to_act": [0], "legal": []}
    assert list(again["events"][0]) == [f for f in EVENT if f not in ("openings", "command")]
    assert list(again["receipt"]) == [f for f in RECEIPT if f != "key_id"]


def test_the_rules_answer_is_what_the_dicts_were() -> None:
    from domain.registry import all_games

    built = [
        {
            "game": g.id,
            "title": g.title,
            "min_seats": g.min_seats,
            "max_seats": g.max_seats,
            "playable": True,
            "options": g.options_schema(),
            "position": g.position_schema(),
            "commands": g.command_schema(),
            "assets": sorted(g.assets),
        }
        for g in all_games()
    ]
    answered = asyncio.run(system.rules.fn())
    assert msgspec.json.encode(answered) == msgspec.json.encode(built)


def test_no_handler_reads_app_state() -> None:
    """Handlers get the application's objects as parameters (``service.http.services``)."""
    readers = [
        str(p.relative_to(HTTP)) for p in HTTP.rglob("*.py") if ".state." in p.read_text()
    ]
    assert not readers, readers


def test_the_answer_schemas_name_every_field_answered(fresh_database: str) -> None:
    """Fields added to an answer by one branch (the lobby listing's ``options``, an event's
    ``openings``) are in the OpenAPI answer schemas (``service.http.schemas``), not only sent."""
    asyncio.run(_schema_fields(fresh_database))


async def _schema_fields(dsn: str) -> None:
    await migrate(dsn)
    async with pg(dsn) as store:
        projector = Projector(MemoryStore(), lambda g, after: store.read(g, after=after))
        manifest = compose(store, projector, await load_signer(store))
        created = await manifest.lobby.create(
            CreateGame(game=GAME, seats=2, options=RANDOM_CRATES, players=["a", "b"])
        )
        listed = _json((await manifest.lobby.list_games(None, None, 10, None)).games[0])
        assert set(listed) == set(schemas.GameSummary.__struct_fields__)
        seat = created.to_act[0]
        token = created.seats[seat].token
        assert token is not None
        doc = msgspec.json.decode(await manifest.documents.legal_document(created.id, token))
        answer = _json(
            await manifest.play.command(
                created.id, token, CommandBody(command=doc["commands"][0]), None
            )
        )
        assert set(answer) == set(schemas.CommandAnswer.__struct_fields__)
        for event in answer["events"]:  # the sentence is told by history reads only
            assert set(event) == set(schemas.EventDocument.__struct_fields__) - {"sentence"}


def _json(answer: msgspec.Struct) -> dict[str, Any]:
    """An answer as the wire carries it: the fields a client finds."""
    decoded: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(answer))
    return decoded
