"""Seat tokens of an open game are never cached by the process that issued them: the host may
still remove the seat, and the removed token must stop working at once — on the very process
that handed it out, too (not only on another worker)."""

from __future__ import annotations

import asyncio

import pytest

from projections.projector import Projector
from projections.store import MemoryStore
from service.gameplay import CreateGame, JoinGame, Manifest
from service.migrate import migrate
from service.problems import Problem
from service.receipts import load_signer

from .apihelp import GAME, RANDOM_CRATES, pg

pytestmark = pytest.mark.integration


def test_a_removed_token_stops_working_on_the_process_that_issued_it(
    fresh_database: str,
) -> None:
    asyncio.run(_removed(fresh_database))


async def _removed(dsn: str) -> None:
    await migrate(dsn)
    async with pg(dsn) as store:
        projector = Projector(MemoryStore(), lambda g, after: store.read(g, after=after))
        manifest = Manifest(store, projector, await load_signer(store._pool))
        created = await manifest.create(CreateGame(game=GAME, seats=2, options=RANDOM_CRATES))
        gid = created["id"]
        joined = await manifest.join(gid, JoinGame(name="bob", invite_code=created["invite_code"]))
        assert await manifest.seat_for(gid, joined["token"]) == joined["seat"]
        await manifest.remove_seat(gid, created["host_token"], joined["seat"])
        with pytest.raises(Problem) as caught:
            await manifest.seat_for(gid, joined["token"])
        assert caught.value.code == "auth.invalid_token"
        # a token of a game that has started is cached (nothing can take that seat back)
        ann = await manifest.join(gid, JoinGame(name="ann", invite_code=created["invite_code"]))
        cy = await manifest.join(gid, JoinGame(name="cy", invite_code=created["invite_code"]))
        assert cy["status"] == "active"
        assert manifest.knows_token(cy["token"])
        assert await manifest.seat_for(gid, ann["token"]) == ann["seat"]
        assert manifest.knows_token(ann["token"])
