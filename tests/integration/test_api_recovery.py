"""Recovery against the real server process, PostgreSQL and Redis: a crash loses no
acknowledged command, Redis is rebuilt exactly from PostgreSQL (by the catch-up worker and by
``manifest rebuild``), and projections never go backwards or apply an event twice."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import msgspec
import pytest
from redis.asyncio import Redis

from domain.platform.table import fold_stream
from ledger.chain import verify_chain
from projections.projector import Projector, table_fields
from projections.redis_store import RedisStore
from projections.store import MemoryStore
from service.application.bodies import CommandBody, CreateGame
from service.application.gameplay import Manifest
from service.bootstrap import compose
from service.eventstore.keys import load_signer
from service.eventstore.migrate import migrate

from .apihelp import (
    GAME,
    RANDOM_CRATES,
    Reference,
    auth,
    bot_step,
    create_started,
    game_doc,
    pg,
    tokens_of,
)
from .serverproc import ServerProcess

pytestmark = pytest.mark.integration


async def _eventually(check: Callable[[], Awaitable[bool]], timeout: float, what: str) -> float:
    """Poll ``check`` until it holds; returns the seconds it took."""
    started = time.monotonic()
    while not await check():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"{what}: not within {timeout} s")
        await asyncio.sleep(0.05)
    return time.monotonic() - started


# --- 9. a crash loses no acknowledged command ------------------------------------------------
GAMES_UNDER_LOAD = 4
BOTS_PER_GAME = 2


@pytest.mark.real_process  # a SIGKILL mid-load is the point
def test_sigkill_mid_load_loses_no_acknowledged_command(server: ServerProcess) -> None:
    """Bots play several games; the server is SIGKILLed mid-load and restarted. Every command
    answered 200 before the kill is in PostgreSQL with the versions and hashes it was told,
    every stream is dense with a sound hash chain, and play goes on after the restart."""
    asyncio.run(_sigkill(server))


async def _sigkill(server: ServerProcess) -> None:
    async with server.async_client() as client:
        games = [await create_started(client) for _ in range(GAMES_UNDER_LOAD)]
    acked: list[tuple[str, dict[str, Any]]] = []
    failures: list[BaseException] = []
    stop = asyncio.Event()

    async def bot(game: dict[str, Any], n: int) -> None:
        rng = random.Random(n)
        async with server.async_client(timeout=10.0) as client:
            while not stop.is_set():
                try:
                    r = await bot_step(client, game["id"], tokens_of(game), rng)
                except (httpx.TransportError, AssertionError, ValueError) as error:
                    if stop.is_set() or isinstance(error, httpx.TransportError):
                        return  # the server is gone (or dying): what was acked is recorded
                    failures.append(error)
                    return
                if r is None:
                    return
                if r.status_code == 200:
                    acked.append((game["id"], r.json()))
                else:
                    assert r.status_code in (409, 422), r.text

    bots = [
        asyncio.create_task(bot(g, i * 10 + j))
        for i, g in enumerate(games)
        for j in range(BOTS_PER_GAME)
    ]
    # Kill once the bots are well under way.
    await _eventually(_async(lambda: len(acked) >= 120), 30, "bots got going")
    await asyncio.to_thread(server.kill)
    stop.set()
    await asyncio.gather(*bots)
    assert not failures, failures
    killed_with = len(acked)

    await asyncio.to_thread(server.start)
    async with pg(server.pg_dsn) as store, server.async_client() as client:
        for game in games:
            events = await store.read(game["id"])
            row = await store.get_game(game["id"])
            assert row is not None
            assert [e.version for e in events] == list(range(1, row.version + 1))
            assert verify_chain(events, head=row.head) is None
            by_version = {e.version: e for e in events}
            for gid, body in acked:
                if gid != game["id"]:
                    continue
                for event in body["events"]:
                    stored = by_version.get(event["version"])
                    assert stored is not None, f"acknowledged event {event['version']} lost"
                    assert stored.hash.hex() == event["hash"]
                assert by_version[body["version"]].hash.hex() == body["head"]
        # the projections catch up by themselves, then play goes on
        for game in games:
            ref = Reference(game["id"])
            await ref.refresh(store)

            async def caught_up(gid: str = game["id"], want: int = ref.version) -> bool:
                return (await game_doc(client, gid))["version"] == want

            await _eventually(caught_up, 10, "projection caught up after the crash")
            ref.check_document((await client.get(f"/v1/games/{game['id']}")).content, None)
            rng = random.Random(99)
            for _ in range(10):
                r = await bot_step(client, game["id"], tokens_of(game), rng)
                if r is None:
                    break
                assert r.status_code == 200, r.text
            await ref.refresh(store)
            ref.check_document((await client.get(f"/v1/games/{game['id']}")).content, None)
    assert killed_with >= 120


def _async(predicate: Callable[[], bool]) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        return predicate()

    return check


# --- 10. Redis flushed: the worker and `manifest rebuild` restore every view -----------------
async def _snapshot(
    client: httpx.AsyncClient, games: list[dict[str, Any]]
) -> dict[tuple[str, str], bytes]:
    """Every document a client can read: each game for the spectator and each seat, and each
    seat's legal commands."""
    snap: dict[tuple[str, str], bytes] = {}
    for game in games:
        gid = game["id"]
        r = await client.get(f"/v1/games/{gid}")
        assert r.status_code == 200
        snap[(gid, "spectator")] = r.content
        for seat, token in enumerate(game["tokens"]):
            if token is None:
                continue
            r = await client.get(f"/v1/games/{gid}", headers=auth(token))
            assert r.status_code == 200
            snap[(gid, f"seat:{seat}")] = r.content
            r = await client.get(f"/v1/games/{gid}/legal", headers=auth(token))
            assert r.status_code == 200
            snap[(gid, f"legal:{seat}")] = r.content
    return snap


async def _prefix_keys(redis: Redis, prefix: str) -> list[bytes]:
    return [k async for k in redis.scan_iter(match=f"{prefix}:*", count=1000)]


async def _hashes(redis: Redis, prefix: str, ids: list[str]) -> dict[str, dict[bytes, bytes]]:
    return {gid: await redis.hgetall(f"{prefix}:{{{gid}}}:game") for gid in ids}  # type: ignore[misc]


def _same_hashes(got: dict[str, dict[bytes, bytes]], want: dict[str, dict[bytes, bytes]]) -> None:
    """Every game's Redis hash has the same fields with the same bytes."""
    assert got.keys() == want.keys()
    for gid in want:
        assert sorted(got[gid]) == sorted(want[gid]), gid
        for field, value in want[gid].items():
            if got[gid][field] != value:
                a, b = msgspec.json.decode(got[gid][field]), msgspec.json.decode(value)
                raise AssertionError(f"{gid} {field!r} differs:\n{_diff(a, b)}")


def _diff(a: Any, b: Any, path: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            return f"{path}: keys {list(a)} != {list(b)}"
        return next((d for k in a if (d := _diff(a[k], b[k], f"{path}.{k}"))), "")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return next(
            (
                d
                for i, (x, y) in enumerate(zip(a, b, strict=True))
                if (d := _diff(x, y, f"{path}[{i}]"))
            ),
            "",
        )
    return "" if a == b else f"{path}: {a!r} != {b!r}"


def test_flushed_redis_is_restored_exactly(server: ServerProcess) -> None:
    """Games part-way through; Redis loses everything; the restarted server's catch-up worker
    (every 0.5 s) restores every projection by itself — no read needed — and every document
    is byte-for-byte what it was. Then ``manifest rebuild`` recreates every Redis hash field for
    field and draws its progress bar."""
    asyncio.run(_flushed(server))


async def _flushed(server: ServerProcess) -> None:
    redis = Redis.from_url(server.redis_url)
    try:
        async with pg(server.pg_dsn) as store, server.async_client() as client:
            games: list[dict[str, Any]] = []
            rng = random.Random(10)
            for seats, steps in ((2, 40), (3, 25), (4, 10), (2, 0)):
                created = await create_started(client, seats)
                for _ in range(steps):
                    r = await bot_step(client, created["id"], tokens_of(created), rng)
                    assert r is not None and r.status_code == 200, r and r.text
                games.append({"id": created["id"], "tokens": tokens_of(created)})
            # an open game with one seat taken, and a game with table talk
            r = await client.post("/v1/games", json={"game": GAME, "seats": 3})
            lobby = r.json()
            joined = await client.post(
                f"/v1/games/{lobby['id']}/join",
                json={"name": "ada", "invite_code": lobby["invite_code"]},
            )
            games.append({"id": lobby["id"], "tokens": [joined.json()["token"], None, None]})
            talk = await create_started(client, 3)
            await client.post(
                f"/v1/games/{talk['id']}/messages",
                json={"to": [2], "text": "secret"},
                headers=auth(tokens_of(talk)[1]),
            )
            games.append({"id": talk["id"], "tokens": tokens_of(talk)})
            ids = [g["id"] for g in games]
            snapshot = await _snapshot(client, games)
            hashes = await _hashes(redis, server.prefix, ids)
            assert all(hashes[g] for g in ids)

            # Redis loses this server's keys while it is down.
            await asyncio.to_thread(server.stop)
            keys = await _prefix_keys(redis, server.prefix)
            assert keys
            await redis.delete(*keys)
            assert await _prefix_keys(redis, server.prefix) == []
            await asyncio.to_thread(server.start)
            versions = {gid: (await store.get_game(gid)).version for gid in ids}  # type: ignore[union-attr]

            async def restored() -> bool:
                now = await _hashes(redis, server.prefix, ids)
                return all(now[g].get(b"version") == str(versions[g]).encode() for g in ids)

            took = await _eventually(restored, 10, "catch-up worker restored Redis")
            print(f"catch-up worker restored {len(ids)} games in {took:.2f} s")
            _same_hashes(await _hashes(redis, server.prefix, ids), hashes)
            assert await _snapshot(client, games) == snapshot

            # ... and while it runs: the periodic pass (every 0.5 s) repairs it, unasked
            await redis.delete(*await _prefix_keys(redis, server.prefix))
            took = await _eventually(restored, 5, "periodic catch-up restored Redis")
            print(f"periodic catch-up restored {len(ids)} games in {took:.2f} s")
            _same_hashes(await _hashes(redis, server.prefix, ids), hashes)

            # `manifest rebuild`, with the server stopped so that only it writes
            await asyncio.to_thread(server.stop)
            result = await asyncio.to_thread(server.run_cli, "rebuild")
            assert result.returncode == 0, result.stderr
            total = len(ids)
            assert f"rebuilt projections of {total} games in Redis at " in result.stdout
            assert result.stderr == ""  # the bar is drawn on a terminal only (test_cli.py)
            _same_hashes(await _hashes(redis, server.prefix, ids), hashes)
            await asyncio.to_thread(server.start)
            assert await _snapshot(client, games) == snapshot
    finally:
        await redis.aclose()


# --- 11. projections never go backwards, never apply an event twice --------------------------
CATCHERS = 5
COMMANDS = 150


def test_concurrent_catch_up_never_goes_backwards(fresh_database: str, redis_url: str) -> None:
    """Five tasks call ``Projector.catch_up`` on one game, as fast as they can, while commands
    are appended: the Redis projection's version never decreases, and the final projection is
    field for field the fold of all stored events. A stale write is refused."""
    asyncio.run(_catch_up_race(fresh_database, redis_url))


async def _catch_up_race(dsn: str, redis_url: str) -> None:
    await migrate(dsn)
    prefix = f"race{random.getrandbits(40):x}"
    async with pg(dsn, size=12) as store:
        # The appender runs the application core with projections kept in memory, so that Redis
        # is written by the racing catch-up tasks alone.
        memory = MemoryStore()
        app_projector = Projector(memory, lambda g, after: store.read(g, after=after))
        manifest = compose(store, app_projector, await load_signer(store))
        created = await manifest.lobby.create(
            CreateGame(game=GAME, seats=2, options=RANDOM_CRATES, players=["a", "b"])
        )
        gid, tokens = created.id, [str(s.token) for s in created.seats]
        redis_store = RedisStore.from_url(redis_url, prefix)
        projector = Projector(redis_store, lambda g, after: store.read(g, after=after))
        done = asyncio.Event()
        seen: list[int] = []
        backwards: list[tuple[int, int]] = []

        async def appender() -> None:
            rng = random.Random(11)
            try:
                for _ in range(COMMANDS):
                    doc = msgspec.json.decode(await manifest.documents.game_document(gid, None))
                    if doc["status"] != "active":
                        break
                    who = rng.choice(doc["to_act"])
                    legal = msgspec.json.decode(
                        await manifest.documents.legal_document(gid, tokens[who])
                    )
                    await manifest.play.command(
                        gid, tokens[who], CommandBody(command=rng.choice(legal["commands"])), None
                    )
                    await asyncio.sleep(0)
            finally:
                done.set()

        async def catcher() -> None:
            while not done.is_set():
                table = await projector.catch_up(gid)
                assert table is not None
                await asyncio.sleep(0)

        async def watcher() -> None:
            last = 0
            while not done.is_set():
                version = await redis_store.version(gid) or 0
                if version < last:
                    backwards.append((last, version))
                last = version
                seen.append(version)
                await asyncio.sleep(0.002)

        try:
            await asyncio.gather(appender(), watcher(), *(catcher() for _ in range(CATCHERS)))
            await projector.catch_up(gid)
            assert not backwards, backwards
            assert len(set(seen)) > 10, "the catch-up tasks never ran alongside the appends"
            events = await store.read(gid)
            expected = table_fields(fold_stream(None, events, gid))
            raw: dict[bytes, bytes] = await redis_store.redis.hgetall(  # type: ignore[misc]
                f"{prefix}:{{{gid}}}:game"
            )
            assert raw.pop(b"version") == str(len(events)).encode()
            assert {k.decode(): v for k, v in raw.items()} == expected
            # A write of an older table is refused and changes nothing.
            older = fold_stream(None, events[: len(events) - 3], gid)
            assert not await projector.publish_table(older)
            assert await redis_store.version(gid) == len(events)
            assert (await projector.load(gid)).version == len(events)  # type: ignore[union-attr]
        finally:
            await redis_store.redis.delete(f"{prefix}:{{{gid}}}:game")
            await redis_store.close()


# --- a rolled-back append leaves nothing behind in another instance's view -------------------
def test_rolled_back_append_never_poisons_the_table_cache(fresh_database: str) -> None:
    """Two API instances (two ``Manifest``s) on one database. Instance A appends a command's
    events, then its transaction rolls back (a failure after the append); instance B commits a
    different command with as many events at the same version. A's next decision must be made
    on the stored stream, not on the table it had folded for its rolled-back append."""
    asyncio.run(_rolled_back(fresh_database))


class _FailOnce:
    """A play service's event log whose append fails once (the statement sent, its
    transaction rolled back) when ``fail`` is set; everything else is the shared store's."""

    def __init__(self, manifest: Manifest) -> None:
        self.fail = False
        self.store = manifest.play.store
        manifest.play.store = self  # type: ignore[assignment]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    async def append_command(self, command: Any) -> bool:
        if self.fail:
            self.fail = False
            raise RuntimeError("lost after the append, before the commit")
        appended: bool = await self.store.append_command(command)
        return appended


async def _rolled_back(dsn: str) -> None:
    from domain.jolly_cargo import JOLLY_CARGO
    from domain.kernel import Rng
    from projections.projector import encode_table

    await migrate(dsn)
    async with pg(dsn, size=8) as store:
        signer = await load_signer(store)

        def instance() -> Manifest:
            projector = Projector(MemoryStore(), lambda g, a: store.read(g, after=a))
            return compose(store, projector, signer)

        a, b = instance(), instance()
        failing = _FailOnce(a)
        created = await a.lobby.create(
            CreateGame(game=GAME, seats=2, options=RANDOM_CRATES, players=["a", "b"])
        )
        gid, tokens = created.id, [str(s.token) for s in created.seats]
        seed = await store.seed(gid)
        ref = Reference(gid)
        rng = random.Random(12)
        for _ in range(40):  # into the play phase, where commands differ in their events
            await ref.refresh(store)
            who = JOLLY_CARGO.to_act(ref.state)[0]
            choice = rng.choice(JOLLY_CARGO.legal(ref.state, who))
            await a.play.command(
                gid, tokens[who], CommandBody(command=msgspec.to_builtins(choice)), None
            )
        await ref.refresh(store)
        version, who = ref.version, JOLLY_CARGO.to_act(ref.state)[0]
        # two legal commands whose events differ but number the same
        outcomes: dict[int, list[Any]] = {}
        pair = None
        for command in JOLLY_CARGO.legal(ref.state, who):
            events = JOLLY_CARGO.decide(ref.state, who, command, Rng(seed, version + 1))
            same = outcomes.setdefault(len(events), [])
            if same and JOLLY_CARGO.fold(events, ref.state) != JOLLY_CARGO.fold(
                JOLLY_CARGO.decide(ref.state, who, same[0], Rng(seed, version + 1)), ref.state
            ):
                pair = (same[0], command)
                break
            same.append(command)
        assert pair is not None, "no two commands with as many events and different results"
        first, second = (CommandBody(command=msgspec.to_builtins(c)) for c in pair)
        failing.fail = True
        with pytest.raises(RuntimeError, match="lost after the append"):
            await a.play.command(gid, tokens[who], first, None)
        assert (await store.get_game(gid)).version == version  # type: ignore[union-attr]
        await b.play.command(gid, tokens[who], second, None)
        await ref.refresh(store)
        assert ref.table is not None
        async with store.lock(gid) as locked:
            seen_by_a = await a.tables.at_lock(locked)
        assert seen_by_a.version == ref.version
        assert encode_table(seen_by_a) == encode_table(ref.table), "A decides on a phantom"
