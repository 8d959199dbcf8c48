"""The answers are msgspec Structs (issue 11), and the bytes on the wire are what the
application layer's dicts encoded to: every field, in the order written, ``null`` where it was
``null``, absent where it was absent (``service.http.schemas.answer``) — for each answer the
application builds as a dict. A field added to an answer without adding it to its Struct would
be dropped: these comparisons fail first. Also: no handler reads ``app.state`` (the objects come
by dependency injection)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import msgspec
import pytest

from projections.projector import Projector
from projections.store import MemoryStore
from service.application.bodies import CommandBody, CreateGame, JoinGame, MessageBody
from service.application.gameplay import Manifest
from service.application.history import History
from service.audit.receipts import load_signer, published_keys
from service.eventstore.migrate import migrate
from service.http import schemas
from service.http.routes import system

from .apihelp import GAME, RANDOM_CRATES, pg

pytestmark = pytest.mark.integration
HTTP = Path(__file__).resolve().parents[2] / "service" / "http"


def _same(value: Any, shape: type[Any]) -> None:
    converted = schemas.answer(value, shape)
    assert isinstance(converted, shape)
    assert msgspec.json.encode(converted) == msgspec.json.encode(value), shape.__name__


def test_every_answer_struct_encodes_to_the_dict_it_replaces(fresh_database: str) -> None:
    asyncio.run(_answers(fresh_database))


async def _answers(dsn: str) -> None:
    await migrate(dsn)
    async with pg(dsn) as store:
        projector = Projector(MemoryStore(), lambda g, after: store.read(g, after=after))
        manifest = Manifest(store, projector, await load_signer(store._pool))
        history = History.of(manifest)
        open_game = await manifest.create(CreateGame(game=GAME, seats=2, options=RANDOM_CRATES))
        _same(open_game, schemas.CreatedGame)  # not started: to_act [] and view null
        gid = open_game["id"]
        code = open_game["invite_code"]
        joined = await manifest.join(gid, JoinGame(name="ann", invite_code=code))
        _same(joined, schemas.Joined)
        removed = await manifest.remove_seat(gid, open_game["host_token"], joined["seat"])
        _same(removed, schemas.SeatRemoved)
        created = await manifest.create(
            CreateGame(game=GAME, seats=2, options=RANDOM_CRATES, players=["a", "b"])
        )
        _same(created, schemas.CreatedGame)
        _same(await manifest.list_games(None, None, 1, None), schemas.GameList)  # with `next`
        _same(await manifest.list_games(None, None, 10, None), schemas.GameList)  # next: null
        gid = created["id"]
        seat = created["to_act"][0]
        token = created["seats"][seat]["token"]
        legal = msgspec.json.decode(await manifest.legal_document(gid, token))
        _same(legal, schemas.LegalDocument)
        _same(msgspec.json.decode(await manifest.game_document(gid, token)), schemas.GameDocument)
        body = CommandBody(command=legal["commands"][0])
        first = await manifest.command(gid, token, body, "key-1")
        _same(first, schemas.CommandAnswer)
        # Sent again: the recorded answer (read back from jsonb, its keys reordered) is the
        # first answer, its fields now in the first answer's order.
        again = await manifest.command(gid, token, body, "key-1")
        repeated = msgspec.json.decode(
            msgspec.json.encode(schemas.answer(_raw(again), schemas.CommandAnswer))
        )
        assert repeated == msgspec.json.decode(msgspec.json.encode(first))
        assert list(repeated) == list(first)
        assert [list(e) for e in repeated["events"]] == [list(e) for e in first["events"]]
        said = await manifest.message(gid, token, MessageBody(to="all", text="hello"))
        _same(said, schemas.MessageAnswer)
        _same(await history.events(gid, None, 0, 2), schemas.EventsPage)
        _same(await history.events(gid, token, 0, 100), schemas.EventsPage)
        _same(await history.replay(gid, token, 2), schemas.ReplayView)
        _same(await history.dispute(gid, 1, None), schemas.DisputeFile)
        _same(await history.dispute(gid, first["version"], token), schemas.DisputeFile)
        _same(
            {"keys": await published_keys(manifest.store.pool, manifest.signer)}, schemas.Keys
        )
        _same(await history.audit(gid), _AuditOnly)


def _raw(answer: dict[str, Any]) -> dict[str, Any]:
    """A command answer's ``legal`` as the edge sends it (encoded once)."""
    return {**answer, "legal": msgspec.Raw(msgspec.json.encode(answer["legal"]))}


class _AuditOnly(msgspec.Struct):
    """The audit report before the cache adds ``rejected`` (the rest of ``AuditReport``)."""

    ok: bool
    game: str
    version: int
    chain: dict[str, Any]
    adjudication: dict[str, Any]
    seed: dict[str, Any]
    commitments: dict[str, Any]
    problems: list[schemas.Finding]


def test_the_audit_report_struct_is_the_cached_report_and_its_rejected_part() -> None:
    fields = schemas.AuditReport.__struct_fields__
    assert fields == (*_AuditOnly.__struct_fields__, "rejected")


def test_the_rules_answer_is_what_the_dicts_were() -> None:
    from domain.registry import all_games

    built = [
        {
            "game": g.id,
            "title": g.title,
            "min_seats": g.min_seats,
            "max_seats": g.max_seats,
            "playable": g.playable,
            "options": g.options_schema(),
            "position": g.position_schema(),
            "commands": g.command_schema(),
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
