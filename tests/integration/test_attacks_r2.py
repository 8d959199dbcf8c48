"""Attacks of an independent reviewer (branch r1, second round), each kept as a test."""

from __future__ import annotations

import asyncio

import pytest

from projections.projector import Projector
from projections.store import MemoryStore
from service.application.bodies import CreateGame
from service.application.gameplay import Manifest
from service.audit.receipts import load_signer
from service.eventstore.migrate import migrate
from service.problems import Problem

from .apihelp import GAME, pg

pytestmark = pytest.mark.integration


def test_another_spelling_of_a_game_id_names_no_game(fresh_database: str) -> None:
    """PostgreSQL reads a game id as a UUID (any spelling: upper case, no hyphens, braces,
    ``urn:uuid:``), but Redis keys, the in-process caches and the lazily built views are keyed
    by the string. A read under another spelling was answered (its document's ``id`` that
    spelling) and its "repair" wrote a whole projection record under that key — one per
    spelling, 2^(hex letters) of them for each game: a client could fill Redis with copies of
    any game. Only the canonical spelling names a game; every other one is 404."""

    async def attack() -> None:
        await migrate(fresh_database)
        async with pg(fresh_database) as events:
            store = MemoryStore()
            reader = lambda g, after: events.read(g, after=after)  # noqa: E731
            manifest = Manifest(events, Projector(store, reader), await load_signer(events._pool))
            created = await manifest.create(CreateGame(game=GAME, seats=2, players=["a", "b"]))
            await manifest.projector.drain(timeout=10)
            canonical = created.id
            assert await manifest.game_document(canonical, None)  # the game is readable
            spellings = [
                canonical.upper(),
                canonical.replace("-", ""),
                "{" + canonical + "}",
                "urn:uuid:" + canonical,
            ]
            for spelling in spellings:
                with pytest.raises(Problem) as caught:
                    await manifest.game_document(spelling, None)
                assert (caught.value.status, caught.value.code) == (404, "game.not_found")
            await manifest.projector.drain(timeout=10)
            for spelling in spellings:
                assert await store.version(spelling) is None, spelling  # no copy kept

    asyncio.run(attack())
