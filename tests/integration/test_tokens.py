"""Seat and host tokens: a seat token of an open game is never cached by the process that
issued it (the host may still remove the seat, and the removed token must stop working at once
there too); the host token reads as a spectator wherever a seat token is optional."""

from __future__ import annotations

import asyncio

import pytest

from projections.projector import Projector
from projections.store import MemoryStore
from service.application.bodies import CreateGame, JoinGame
from service.application.errors import ApplicationError
from service.application.history import History
from service.bootstrap import compose
from service.eventstore.keys import load_signer
from service.eventstore.migrate import migrate

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
        manifest = compose(store, projector, await load_signer(store))
        created = await manifest.lobby.create(CreateGame(game=GAME, seats=2, options=RANDOM_CRATES))
        gid = created.id
        joined = await manifest.lobby.join(
            gid, JoinGame(name="bob", invite_code=created.invite_code)
        )
        assert await manifest.seats.seat_for(gid, joined.token) == joined.seat
        await manifest.lobby.remove_seat(gid, created.host_token, joined.seat)
        with pytest.raises(ApplicationError) as caught:
            await manifest.seats.seat_for(gid, joined.token)
        assert caught.value.code == "auth.invalid_token"
        # a token of a game that has started is cached (nothing can take that seat back)
        ann = await manifest.lobby.join(gid, JoinGame(name="ann", invite_code=created.invite_code))
        cy = await manifest.lobby.join(gid, JoinGame(name="cy", invite_code=created.invite_code))
        assert cy.status == "active"
        assert manifest.seats.knows_token(cy.token)
        assert await manifest.seats.seat_for(gid, ann.token) == ann.seat
        assert manifest.seats.knows_token(ann.token)


def test_the_host_token_reads_as_a_spectator_wherever_a_seat_token_is_optional(
    fresh_database: str,
) -> None:
    """The host token reads its game (h11b); the history, dispute files, export and queries
    (other branches) answered it 401 "not a seat token". Now it reads as a spectator there too,
    another game's host token is 403, and it is still no seat (``/legal``: 403
    ``auth.not_seat``, issue 35: a valid token, not a seat of this game)."""
    asyncio.run(_host(fresh_database))


async def _host(dsn: str) -> None:
    await migrate(dsn)
    async with pg(dsn) as store:
        projector = Projector(MemoryStore(), lambda g, after: store.read(g, after=after))
        manifest = compose(store, projector, await load_signer(store))
        history = History.of(manifest)
        created = await manifest.lobby.create(
            CreateGame(game=GAME, seats=2, options=RANDOM_CRATES, players=["a", "b"])
        )
        other = await manifest.lobby.create(CreateGame(game=GAME, seats=2, options=RANDOM_CRATES))
        gid, host = created.id, created.host_token
        assert await manifest.seats.viewer(gid, host) is None
        assert await history.events(gid, host, 0, 100) == await history.events(gid, None, 0, 100)
        assert await history.replay(gid, host, 1) == await history.replay(gid, None, 1)
        hosted = await history.dispute(gid, created.version, host)
        anyone = await history.dispute(gid, created.version, None)
        assert hosted.events == anyone.events
        assert await history.export(gid, host) == await history.export(gid, None)
        with pytest.raises(ApplicationError) as caught:
            await history.events(gid, other.host_token, 0, 100)
        assert caught.value.code == "auth.not_host"
        with pytest.raises(ApplicationError) as caught:
            await manifest.documents.legal_document(gid, host)
        assert caught.value.code == "auth.not_seat"


def test_a_token_removed_on_one_process_stops_working_on_another_that_had_seen_it(
    fresh_database: str,
) -> None:
    """Two processes (two composed applications on one database): process B authenticates a
    seat token of an open game, the host removes that seat through process A, and B refuses
    the token at once — B's ``Seats`` did not keep it (the game was open). The seat's next
    player is known to both."""

    async def run() -> None:
        await migrate(fresh_database)
        async with pg(fresh_database) as store:
            signer = await load_signer(store)
            a, b = (
                compose(
                    store,
                    Projector(MemoryStore(), lambda g, after: store.read(g, after=after)),
                    signer,
                )
                for _ in range(2)
            )
            created = await a.lobby.create(CreateGame(game=GAME, seats=2, options=RANDOM_CRATES))
            gid, code = created.id, created.invite_code
            bob = await a.lobby.join(gid, JoinGame(name="bob", invite_code=code))
            assert await b.seats.seat_for(gid, bob.token) == bob.seat
            assert await b.seats.seat_for(gid, bob.token) == bob.seat  # asked twice: not kept
            assert not b.seats.knows_token(bob.token)
            await a.lobby.remove_seat(gid, created.host_token, bob.seat)
            for process in (a, b):
                with pytest.raises(ApplicationError) as caught:
                    await process.seats.seat_for(gid, bob.token)
                assert caught.value.code == "auth.invalid_token"
            dan = await b.lobby.join(gid, JoinGame(name="dan", invite_code=code, seat=bob.seat))
            for process in (a, b):
                assert await process.seats.seat_for(gid, dan.token) == bob.seat

    asyncio.run(run())
