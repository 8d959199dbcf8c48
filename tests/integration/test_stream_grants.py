"""A long-lived read re-checks who may read (issue 35): a live stream opened with a seat token
is keyed by the token's grant (its hash bound to one seat of one game), not by a seat number,
and is closed the moment that grant is gone — the seat removed by the host, or taken by
someone else — so it never delivers the seat's next player's private view."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import httpx
import pytest

from projections.projector import Projector
from projections.store import MemoryStore
from service.application.bodies import CreateGame, JoinGame
from service.application.errors import Unauthorized
from service.application.history import History
from service.application.tokens import SEAT_PREFIX, new_token, token_hash
from service.bootstrap import compose
from service.eventstore.keys import load_signer
from service.eventstore.migrate import migrate

from .apihelp import assert_problem, auth, pg
from .serverproc import ServerProcess
from .test_streams import WAIT, Stream, open_stream

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]


async def _join(client: httpx.AsyncClient, gid: str, code: str, name: str, seat: int) -> Any:
    r = await client.post(
        f"/v1/games/{gid}/join", json={"name": name, "invite_code": code, "seat": seat}
    )
    assert r.status_code == 200, r.text
    return r.json()


def _no_hand(doc: dict[str, Any]) -> None:
    for player in [] if doc["view"] is None else doc["view"]["players"]:
        assert player["hand"] is None and player["private"] is None, ("a hand leaked", doc)


async def _rest_of(stream: Stream, check: Any = None) -> list[dict[str, Any]]:
    """Every document the stream still sends until it ends (each checked as it comes), which
    it must within ``WAIT``."""
    docs: list[dict[str, Any]] = []

    async def drain() -> None:
        with contextlib.suppress(StopAsyncIteration, httpx.HTTPError):
            while True:
                docs.append(await stream.next())
                if check is not None:
                    check(docs[-1])

    try:
        await asyncio.wait_for(drain(), WAIT)
    except TimeoutError:
        raise AssertionError(f"the stream did not end; it sent {len(docs)} documents") from None
    return docs


def test_a_removed_players_open_stream_never_shows_the_next_players_hand(
    server: ServerProcess,
) -> None:
    """The issue's attack, exactly: a (hostile) host joins seat 0 of its own Cargo Empire game,
    opens the stream with that seat's token, removes the seat, and waits; a victim takes seat
    0, another player seat 1, and the game starts. The old stream ends — it never sends the
    victim's hand or private city cards (a spectator's ``null``) — and reconnecting with the
    removed token is 401. Before, the stream had resolved "seat 0" once at opening and read
    ``doc:seat:0`` for the rest of the game."""
    asyncio.run(_attack(server))


async def _attack(server: ServerProcess) -> None:
    async with server.async_client() as client, contextlib.AsyncExitStack() as keep:
        r = await client.post("/v1/games", json={"game": "cargo-empire", "seats": 2})
        assert r.status_code == 201, r.text
        created = r.json()
        gid, host, code = created["id"], created["host_token"], created["invite_code"]
        mine = await _join(client, gid, code, "mallory", 0)
        stream = await open_stream(keep, client, gid, mine["token"])
        assert isinstance(stream, Stream), stream.text  # type: ignore[union-attr]
        r = await client.delete(f"/v1/games/{gid}/seats/0", headers=auth(host))
        assert r.status_code == 200, r.text
        victim = await _join(client, gid, code, "victim", 0)
        await _join(client, gid, code, "other", 1)  # the last seat: the game starts
        victims = await client.get(f"/v1/games/{gid}", headers=auth(victim["token"]))
        assert victims.json()["status"] == "active"
        hand = victims.json()["view"]["players"][0]["hand"]
        assert hand is not None  # what the victim sees, and the stream must not
        await _rest_of(stream, _no_hand)
        again = await open_stream(keep, client, gid, mine["token"])
        assert isinstance(again, httpx.Response)
        assert_problem(again, 401, "auth.invalid_token")
        # the victim's own stream shows its hand, and stays open
        own = await open_stream(keep, client, gid, victim["token"])
        assert isinstance(own, Stream), own.text  # type: ignore[union-attr]


def test_a_stream_ends_when_its_seat_is_removed_even_before_anyone_takes_it(
    server: ServerProcess,
) -> None:
    """The removal alone ends the stream (its grant is gone), whatever comes after; a stream
    of a seat still held (the other seat's) goes on and hears the next change."""
    asyncio.run(_removed_alone(server))


async def _removed_alone(server: ServerProcess) -> None:
    async with server.async_client() as client, contextlib.AsyncExitStack() as keep:
        r = await client.post("/v1/games", json={"game": "cargo-empire", "seats": 3})
        assert r.status_code == 201, r.text
        created = r.json()
        gid, host, code = created["id"], created["host_token"], created["invite_code"]
        ann = await _join(client, gid, code, "ann", 0)
        bob = await _join(client, gid, code, "bob", 1)
        removed = await open_stream(keep, client, gid, ann["token"])
        kept = await open_stream(keep, client, gid, bob["token"])
        assert isinstance(removed, Stream) and isinstance(kept, Stream)
        r = await client.delete(f"/v1/games/{gid}/seats/0", headers=auth(host))
        assert r.status_code == 200, r.text
        assert await _rest_of(removed) == []
        assert (await kept.next())["version"] == r.json()["version"]


def test_a_quiet_stream_ends_when_its_token_is_rotated_with_no_change_heard(
    fresh_database: str, redis_url: str
) -> None:
    """The grant is re-checked at every keep-alive too: a seat's token replaced in the store
    (a rotation, which appends no event, so no change is heard) ends the old token's stream
    within a keep-alive or two, while the spectator's stream of the same game stays open."""
    server = ServerProcess(fresh_database, redis_url, MANIFEST_STREAM_KEEPALIVE="0.2")
    server.start()
    try:
        asyncio.run(_rotated(server, fresh_database))
    finally:
        server.close()


async def _rotated(server: ServerProcess, dsn: str) -> None:
    async with server.async_client() as client, contextlib.AsyncExitStack() as keep:
        r = await client.post("/v1/games", json={"game": "cargo-empire", "seats": 2})
        assert r.status_code == 201, r.text
        gid, code = r.json()["id"], r.json()["invite_code"]
        ann = await _join(client, gid, code, "ann", 0)
        stream = await open_stream(keep, client, gid, ann["token"])
        anyone = await open_stream(keep, client, gid, None)
        assert isinstance(stream, Stream) and isinstance(anyone, Stream)
        async with pg(dsn) as store:
            await store.set_seat(gid, 0, "ann", token_hash(new_token(SEAT_PREFIX)), replace=True)
        assert await _rest_of(stream) == []
        with pytest.raises(TimeoutError):  # only keep-alives: still open
            await anyone.next(timeout=1.0)


def test_a_grant_gone_before_the_first_read_sends_nothing(fresh_database: str) -> None:
    """The mechanism itself, in process: a grant taken while the token held seat 0, the seat
    then removed and given to someone else before the stream's first read — the stream's
    changes end at once with nothing sent (the route answers that 401, not a 200), while a
    grant of the new holder reads its seat."""

    async def run() -> None:
        await migrate(fresh_database)
        async with pg(fresh_database) as store:
            projector = Projector(MemoryStore(), lambda g, after: store.read(g, after=after))
            manifest = compose(store, projector, await load_signer(store))
            history = History.of(manifest)
            created = await manifest.lobby.create(CreateGame(game="cargo-empire", seats=2))
            gid, code = created.id, created.invite_code
            ann = await manifest.lobby.join(gid, JoinGame(name="ann", invite_code=code, seat=0))
            grant = await manifest.seats.grant(gid, ann.token)
            assert grant.seat == 0 and await manifest.seats.holds(grant)
            await manifest.lobby.remove_seat(gid, created.host_token, 0)
            eve = await manifest.lobby.join(gid, JoinGame(name="eve", invite_code=code, seat=0))
            assert not await manifest.seats.holds(grant)
            docs = history.changes(grant)
            assert await anext(docs, None) is None
            theirs = history.changes(await manifest.seats.grant(gid, eve.token))
            assert (await anext(theirs))[:1] == b"{"
            await theirs.aclose()

    asyncio.run(run())


def test_a_binding_read_before_the_start_is_not_cached_after_it(fresh_database: str) -> None:
    """A token is looked up (bound to seat 0 of a game still open), and before the lookup
    asks whether the game has started the host removes the seat, a victim takes it and the
    game starts. The stale binding must not be cached as final (a started game's bindings are
    cached for good): else the removed token would act for — and stream — the victim's seat
    for the rest of the game on that process, though the store says it is bound to nothing."""

    async def run() -> None:
        await migrate(fresh_database)
        async with pg(fresh_database) as store:
            projector = Projector(MemoryStore(), lambda g, after: store.read(g, after=after))
            manifest = compose(store, projector, await load_signer(store))
            seats = manifest.seats
            created = await manifest.lobby.create(CreateGame(game="cargo-empire", seats=2))
            gid, code = created.id, created.invite_code
            ann = await manifest.lobby.join(gid, JoinGame(name="ann", invite_code=code, seat=0))
            grant = await seats.grant(gid, ann.token)
            started = seats._started
            raced = False

            async def between(game_id: str) -> bool:
                nonlocal raced
                if not raced:  # between the binding's read and the start's check
                    raced = True
                    await manifest.lobby.remove_seat(gid, created.host_token, 0)
                    await manifest.lobby.join(gid, JoinGame(name="vic", invite_code=code, seat=0))
                    await manifest.lobby.join(gid, JoinGame(name="bo", invite_code=code, seat=1))
                return await started(game_id)

            seats._started = between  # type: ignore[method-assign]
            assert not await seats.holds(grant)  # looked up across the race
            assert raced
            assert not await seats.holds(grant)  # and again, from the cache if it were there
            with pytest.raises(Unauthorized):
                await seats.seat_for(gid, ann.token)
            assert not seats.knows_token(ann.token)

    asyncio.run(run())
