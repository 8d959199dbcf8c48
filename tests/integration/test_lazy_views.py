"""Lazy views (issue 16, :mod:`projections.views`): a move writes the table and the mover's legal
commands only; every other view is built when first read at a version, once per (game, view,
version) in a process, kept in the projection store, and never served once older than the
stored version — also when a move lands between a view's build and its store, and when Redis
fails half-way through a build. Both stores (in process, Redis) keep the same contract.

Two ``Manifest`` objects on one database and one projection store stand for two processes
(each has its own table cache and its own views)."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import msgspec
import pytest

from domain.platform.table import fold_stream, viewer_keys
from projections.projector import Projector, table_fields
from projections.redis_store import RedisStore
from projections.store import MemoryStore, ProjectionStore, StoreUnavailable, split_view, tag_view
from projections.views import table_field
from service.application.answers import CreatedGame
from service.application.bodies import CommandBody, CreateGame
from service.application.gameplay import Manifest
from service.bootstrap import compose
from service.eventstore.keys import load_signer
from service.eventstore.migrate import migrate
from service.eventstore.store import EventStore

from .apihelp import GAME, RANDOM_CRATES, pg

pytestmark = pytest.mark.integration


@pytest.fixture(params=["memory", "redis", "redis-cluster"])
def make_store(request: pytest.FixtureRequest) -> Callable[[], ProjectionStore]:
    """Lazy views on each store: in process, one Redis, and a three-primary Redis Cluster
    (their scripts must run inside one slot: the game's hash tag)."""
    if request.param == "memory":
        return MemoryStore
    cluster = request.param == "redis-cluster"
    url: str = request.getfixturevalue("redis_cluster_url" if cluster else "redis_url")
    prefix = f"lazy-{uuid.uuid4().hex[:12]}"
    return lambda: RedisStore.from_url(url, prefix, cluster=cluster)


class Game:
    """A started game and the processes (``Manifest``s) that serve it."""

    def __init__(self, events: EventStore, processes: list[Manifest], created: CreatedGame):
        self.events = events
        self.processes = processes
        self.id: str = created.id
        self.tokens: list[str] = [str(s.token) for s in created.seats]
        self.last_mover: int | None = None

    async def move(self, rng: random.Random) -> bool:
        """One random legal command (chosen without reading any view). False: game over."""
        a = self.processes[0]
        _, table = await a.tables.current(self.id)
        if table.status != "active":
            return False
        seat = rng.choice(table.rules.to_act(table.state))
        command = msgspec.to_builtins(rng.choice(table.rules.legal(table.state, seat)))
        await a.play.command(self.id, self.tokens[seat], CommandBody(command=command), None)
        self.last_mover = seat
        await self.settle()
        return True

    async def settle(self) -> None:
        for process in self.processes:
            await process.projector.drain(timeout=10)

    async def expected(self, field: str) -> bytes:
        """The view as folded from every stored event, independently of any cache."""
        table = fold_stream(None, await self.events.read(self.id), self.id)
        body = table_field(table, field)
        assert body is not None
        return body

    async def fields(self) -> list[str]:
        _, table = await self.processes[0].tables.current(self.id)
        return [f"doc:{k}" for k in viewer_keys(table)] + [f"legal:{s}" for s in range(table.seats)]


@asynccontextmanager
async def game(
    dsn: str, store: ProjectionStore, processes: int = 2, seats: int = 2
) -> AsyncIterator[Game]:
    await migrate(dsn)
    async with pg(dsn) as events:
        signer = await load_signer(events)
        manifests = [
            compose(events, Projector(store, lambda g, after: events.read(g, after=after)), signer)
            for _ in range(processes)
        ]
        players = [f"p{i}" for i in range(seats)]
        created = await manifests[0].lobby.create(
            CreateGame(game=GAME, seats=seats, options=RANDOM_CRATES, players=players)
        )
        g = Game(events, manifests, created)
        await g.settle()
        try:
            yield g
        finally:
            await g.settle()
            await store.clear()
            await store.close()


def run(make_store: Callable[[], ProjectionStore], test: Callable[[ProjectionStore], Any]) -> None:
    asyncio.run(test(make_store()))


async def _stored(store: ProjectionStore, game_id: str, field: str) -> tuple[int | None, bytes]:
    (raw,) = await store.fields(game_id, [field])
    assert raw is not None, field
    return split_view(raw)


# --- the store contract ----------------------------------------------------------------------
def test_advance_keeps_the_other_fields_and_views_only_move_forward(
    make_store: Callable[[], ProjectionStore],
) -> None:
    async def contract(store: ProjectionStore) -> None:
        try:
            assert not await store.put_view("g", "doc:spectator", 1, b"{}")  # creates no record
            assert await store.fields("g", ["doc:spectator"]) == [None]
            assert await store.write("g", 3, {"table": b"t3", "doc:spectator": tag_view(3, b"a")})
            assert await store.advance("g", 4, {"table": b"t4", "legal:0": tag_view(4, b"l")})
            assert not await store.advance("g", 4, {"table": b"again"})  # not newer
            assert await store.fields("g", ["version", "table", "doc:spectator", "legal:0"]) == [
                b"4",
                b"t4",
                b"3 a",
                b"4 l",
            ]
            assert await store.put_view("g", "doc:spectator", 5, b"b5")
            assert not await store.put_view("g", "doc:spectator", 4, b"b4")  # older: refused
            assert not await store.put_view("g", "doc:spectator", 5, b"x")  # same: refused
            assert await store.fields("g", ["doc:spectator"]) == [b"5 b5"]
            # a view stored before views carried versions is replaced by any versioned one
            await store.write("g", 6, {"table": b"t6", "doc:seat:0": b'{"old":1}'})
            assert split_view(b'{"old":1}') == (None, b'{"old":1}')
            assert await store.put_view("g", "doc:seat:0", 1, b"new")
            # and a whole write still replaces the whole record
            assert await store.fields("g", ["doc:spectator", "doc:seat:0"]) == [None, b"1 new"]
        finally:
            await store.clear()
            await store.close()

    run(make_store, contract)


# --- never built until read; built once per (game, view, version) ----------------------------
def test_a_view_is_built_only_when_read_and_once_per_version(
    fresh_database: str, make_store: Callable[[], ProjectionStore]
) -> None:
    async def test(store: ProjectionStore) -> None:
        async with game(fresh_database, store) as g:
            a, b = g.processes
            rng = random.Random(3)
            for _ in range(4):
                assert await g.move(rng)
            table = (await a.tables.current(g.id))[1]
            version = table.version
            # nobody read anything: no view was built on a read, and the only views stored at
            # this version are the legal commands of the mover (its answer computed them) and
            # of the seats to act now (whoever acts next reads them first)
            assert a.projector.views.builds == b.projector.views.builds == 0
            written = {f"legal:{s}" for s in {g.last_mover, *table.rules.to_act(table.state)}}
            for field in await g.fields():
                have, body = await _stored(store, g.id, field)
                assert have is not None
                if field in written:
                    assert (have, body) == (version, await g.expected(field))
                else:
                    assert have < version, field
            assert await store.version(g.id) == version
            next_up = f"legal:{table.rules.to_act(table.state)[0]}"
            assert await b.documents.document(g.id, next_up) == await g.expected(next_up)
            assert a.projector.views.builds == b.projector.views.builds == 0

            # read many times, one after another and at once, in both processes: one build
            field = "doc:seat:1"
            first = await a.documents.document(g.id, field)
            again = [await a.documents.document(g.id, field) for _ in range(5)]
            at_once = await asyncio.gather(*(p.documents.document(g.id, field) for p in (a, b) * 5))
            assert {first, *again, *at_once} == {await g.expected(field)}
            assert (a.projector.views.builds, b.projector.views.builds) == (1, 0)
            assert await _stored(store, g.id, field) == (version, first)

            # another view, then the next version: one build each
            await b.documents.document(g.id, "doc:spectator")
            assert b.projector.views.builds == 1
            assert await g.move(rng)
            after = await a.documents.document(g.id, field)
            assert msgspec.json.decode(after)["version"] > version
            assert after == await g.expected(field)
            assert a.projector.views.builds == 2

    run(make_store, test)


# --- the mover's process answers the next actor without Redis, and never from a stale table ---
def test_the_movers_process_serves_the_next_legal_list_without_redis_only_while_it_is_latest(
    fresh_database: str, make_store: Callable[[], ProjectionStore]
) -> None:
    async def test(store: ProjectionStore) -> None:
        asked: list[str] = []
        fields = store.fields

        async def counted(game_id: str, names: list[str]) -> list[bytes | None]:
            asked.extend(names)
            return await fields(game_id, names)

        store.fields = counted  # type: ignore[method-assign]
        async with game(fresh_database, store) as g:
            a, b = g.processes
            rng = random.Random(5)
            for _ in range(6):
                assert await g.move(rng)  # every move through process a
            table = (await a.tables.current(g.id))[1]
            field = f"legal:{table.rules.to_act(table.state)[0]}"
            expected = await g.expected(field)

            asked.clear()
            assert await a.documents.document(g.id, field) == expected
            assert asked == []  # built by a's write path, checked against PostgreSQL only
            assert await b.documents.document(g.id, field) == expected
            assert field in asked  # b holds no table: the projection answers

            # the game moves on in process b: a's table and its views are not the latest now
            seat = table.rules.to_act(table.state)[0]
            command = msgspec.to_builtins(rng.choice(table.rules.legal(table.state, seat)))
            await b.play.command(g.id, g.tokens[seat], CommandBody(command=command), None)
            await g.settle()
            for name in (field, f"legal:{1 - seat}"):
                got = await a.documents.document(g.id, name)
                assert got == await g.expected(name)
                assert msgspec.json.decode(got)["version"] > table.version

    run(make_store, test)


# --- right after many moves ------------------------------------------------------------------
def test_views_read_between_many_moves_are_exactly_the_folded_ones(
    fresh_database: str, make_store: Callable[[], ProjectionStore]
) -> None:
    async def test(store: ProjectionStore) -> None:
        async with game(fresh_database, store, seats=3) as g:
            rng = random.Random(7)
            fields = await g.fields()
            moves = 0
            while moves < 60 and await g.move(rng):
                moves += 1
                for field in rng.sample(fields, rng.randrange(4)):  # some moves: nothing read
                    process = rng.choice(g.processes)
                    assert await process.documents.document(g.id, field) == await g.expected(
                        field
                    ), field
            for field in fields:
                for process in g.processes:
                    assert await process.documents.document(g.id, field) == await g.expected(field)
            # what is stored is what a whole record (catch-up, rebuild) holds
            table = fold_stream(None, await g.events.read(g.id), g.id)
            whole = table_fields(table)
            assert await store.fields(g.id, list(whole)) == list(whole.values())

    run(make_store, test)


# --- a move landing between a view's build and its store -------------------------------------
def test_a_view_stored_after_a_move_is_never_served_as_current(
    fresh_database: str, make_store: Callable[[], ProjectionStore]
) -> None:
    """Reader R builds the spectator's view at version N and is held just before storing it;
    a move makes the game N+1 and its projection is written; then R stores its view of N. R is
    answered the view of N (current when it asked); every later reader, in either process, the
    view of N+1 — never the stored view of N."""

    async def test(store: ProjectionStore) -> None:
        async with game(fresh_database, store) as g:
            a, b = g.processes
            rng = random.Random(5)
            assert await g.move(rng)
            n = (await a.tables.current(g.id))[1].version
            field = "doc:spectator"
            entered, release = asyncio.Event(), asyncio.Event()
            put_view = store.put_view

            async def held(game_id: str, name: str, version: int, body: bytes) -> bool:
                entered.set()
                await release.wait()
                return await put_view(game_id, name, version, body)

            store.put_view = held  # type: ignore[method-assign]
            reader = asyncio.create_task(a.documents.document(g.id, field))
            await asyncio.wait_for(entered.wait(), 10)  # built at N, not stored yet
            store.put_view = put_view  # type: ignore[method-assign]
            assert await g.move(rng)  # N+1 committed and projected
            assert await store.version(g.id) == n + 1
            release.set()
            seen = msgspec.json.decode(await reader)
            assert seen["version"] == n
            assert (await _stored(store, g.id, field))[0] == n  # the late store kept its N
            for process in (a, b, a):
                doc = await process.documents.document(g.id, field)
                assert msgspec.json.decode(doc)["version"] == n + 1
                assert doc == await g.expected(field)
            assert (await _stored(store, g.id, field))[0] == n + 1

    run(make_store, test)


def test_two_processes_building_one_view_at_once_answer_the_same_bytes(
    fresh_database: str, make_store: Callable[[], ProjectionStore]
) -> None:
    """Both miss in the store, both build (each process once), both store: same bytes."""

    async def test(store: ProjectionStore) -> None:
        async with game(fresh_database, store) as g:
            a, b = g.processes
            assert await g.move(random.Random(9))
            both_built = asyncio.Event()
            put_view = store.put_view
            calls = 0

            async def meet(game_id: str, name: str, version: int, body: bytes) -> bool:
                nonlocal calls
                calls += 1
                if calls == 2:
                    both_built.set()
                await both_built.wait()
                return await put_view(game_id, name, version, body)

            store.put_view = meet  # type: ignore[method-assign]
            reads = (p.documents.document(g.id, "doc:seat:0") for p in (a, b))
            docs = await asyncio.wait_for(asyncio.gather(*reads), 10)
            assert docs[0] == docs[1] == await g.expected("doc:seat:0")
            assert a.projector.views.builds == b.projector.views.builds == 1
            assert (await _stored(store, g.id, "doc:seat:0"))[1] == docs[0]

    run(make_store, test)


# --- Redis failing during a lazy build -------------------------------------------------------
class Failing(MemoryStore):
    """A projection store that fails on demand: reading the table, keeping a view, or all."""

    def __init__(self) -> None:
        super().__init__()
        self.fail_table = self.fail_put = self.fail_all = False
        self.puts = 0

    async def fields(self, game_id: str, names: list[str]) -> list[bytes | None]:
        if self.fail_all or (self.fail_table and names == ["table"]):
            raise StoreUnavailable("redis: TimeoutError: stalled")
        return await super().fields(game_id, names)

    async def put_view(self, game_id: str, name: str, version: int, body: bytes) -> bool:
        self.puts += 1
        if self.fail_all or self.fail_put:
            raise StoreUnavailable("redis: OutOfMemoryError: full")
        return await super().put_view(game_id, name, version, body)

    async def advance(self, game_id: str, version: int, fields: Mapping[str, bytes]) -> bool:
        if self.fail_all:
            raise StoreUnavailable("redis: TimeoutError: stalled")
        return await super().advance(game_id, version, fields)


def test_redis_failing_during_a_lazy_build_answers_from_postgresql(fresh_database: str) -> None:
    async def test(store: ProjectionStore) -> None:
        assert isinstance(store, Failing)
        async with game(fresh_database, store) as g:
            a, b = g.processes
            rng = random.Random(11)
            assert await g.move(rng)
            # b has no table cached: its build needs the projection's table, which fails
            store.fail_table = True
            assert await b.documents.document(g.id, "doc:seat:1") == await g.expected("doc:seat:1")
            store.fail_table = False
            # the view cannot be kept: answered all the same, and stored later by another
            store.fail_put = True
            assert await b.documents.document(g.id, "legal:1") == await g.expected("legal:1")
            store.fail_put = False
            # Redis down altogether: views from PostgreSQL, no attempt to keep them
            store.fail_all = True
            puts = store.puts
            assert await g.move(rng)  # the answer never waits for the projection
            for field in ("doc:spectator", "doc:seat:0", "legal:0"):
                assert await b.documents.document(g.id, field) == await g.expected(field)
            assert store.puts == puts
            # back: the catch-up pass repairs the record; views are current again
            store.fail_all = False
            await b.projector.catch_up(g.id)
            for field in await g.fields():
                assert await a.documents.document(g.id, field) == await g.expected(field)

    asyncio.run(test(Failing()))
