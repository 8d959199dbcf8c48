"""service/eventstore/batched.py: appends of one loop turn sent as one statement, on a real
PostgreSQL — each still a compare-and-set of its own game, none held up or failed by another's
trouble, nothing lost or doubled when two instances write the same games."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import pytest
from prometheus_client import REGISTRY

from ledger.chain import chain_events, utc_micro, verify_chain
from ledger.records import StoredEvent
from service.eventstore.batched import Appends
from service.eventstore.migrate import migrate
from service.eventstore.optimistic import append_command
from service.eventstore.records import AcceptedCommand, DuplicateCommand
from service.eventstore.store import EventStore, NewEvent

from .test_store import new_game

pytestmark = pytest.mark.integration


class CountingPool:
    """The real pool, counting the statements sent through it."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self.statements: list[str] = []

    async def fetchrow(self, sql: str, *args: Any) -> Any:
        self.statements.append(sql)
        return await self.pool.fetchrow(sql, *args)


async def _at(store: Rig, game_id: str) -> tuple[int, bytes]:
    row = await store.get_game(game_id)
    assert row is not None
    return row.version, row.head


async def _move(
    store: Rig,
    game_id: str,
    at: tuple[int, bytes],
    n: int = 1,
    key: str | None = None,
    **end: Any,
) -> tuple[list[StoredEvent], Any] | None:
    """Append ``n`` events to ``game_id`` at version and head ``at`` (with the others of the
    loop turn when they are gathered); ``end`` may give the seat, status, result, public form,
    time and command id."""
    when = end.get("when") or datetime.now(UTC)
    public = end.get("public")
    command_id = end.get("command_id") or str(uuid.uuid4())
    events = [NewEvent("moved", {"n": i, "to": "c3"}, public) for i in range(n)]
    seat = end.get("seat", 0)
    stored = chain_events(game_id, at[0], at[1], events, seat, command_id, utc_micro(when))
    response = {"version": stored[-1].version, "head": stored[-1].hash.hex()}
    command = AcceptedCommand(
        game_id=game_id,
        version=at[0],
        head=at[1],
        stored=stored,
        seat=seat,
        command_id=command_id,
        status=end.get("status"),
        result=end.get("result"),
        idempotency_key=key,
        command_type="move",
        body={"type": "move", "key": key},
        received_at=when,
        response=response,
    )
    if not await append_command(store.singles, command, store.appends):
        return None
    return stored, response


class Rig(EventStore):
    """An event store whose batch statements (``batches``) and single appends (``singles``)
    are counted."""

    def __init__(self, pool: Any, batch: int) -> None:
        super().__init__(pool, append_batch=batch)
        self.batches = CountingPool(pool)
        self.singles = CountingPool(pool)
        self.appends = Appends(self.batches, batch)


async def _store(dsn: str, batch: int, **pool_args: Any) -> Rig:
    return Rig(await asyncpg.create_pool(dsn, min_size=1, max_size=4, **pool_args), batch)


def _counted(outcome: str) -> float:
    """``manifest_appends_batched_total{outcome}`` so far, in this process."""
    return REGISTRY.get_sample_value("manifest_appends_batched_total", {"outcome": outcome}) or 0


def _batches(store: Rig) -> list[str]:
    return store.batches.statements


def _singles(store: Rig) -> list[str]:
    return store.singles.statements


def _on_store(dsn: str, test: Callable[[Rig], Awaitable[None]], batch: int = 32) -> None:
    """Run ``test`` on a migrated database's store (batches of up to ``batch``)."""

    async def body() -> None:
        await migrate(dsn)
        store = await _store(dsn, batch)
        try:
            await test(store)
        finally:
            await store._pool.close()

    asyncio.run(body())


async def _check(store: EventStore, game_id: str, version: int) -> None:
    row = await store.get_game(game_id)
    assert row is not None and row.version == version
    stored = await store.read(game_id)
    assert [e.version for e in stored] == list(range(1, version + 1))
    assert verify_chain(stored, head=row.head) is None


def test_appends_of_one_loop_turn_go_as_one_statement(fresh_database: str) -> None:
    async def body() -> None:
        await migrate(fresh_database)
        for batch, statements in ((32, 1), (1, 0)):
            store = await _store(fresh_database, batch)
            try:
                games = [(await new_game(store)).id for _ in range(6)]
                ats = [await _at(store, g) for g in games]
                appended = _counted("appended")
                done = await asyncio.gather(
                    *(
                        _move(store, g, at, n=i + 1)
                        for i, (g, at) in enumerate(zip(games, ats, strict=True))
                    )
                )
                assert len(_batches(store)) == statements
                assert len(_singles(store)) == 6 * (1 - statements)  # none resent alone
                assert _counted("appended") - appended == 6 * statements
                for i, (game_id, result) in enumerate(zip(games, done, strict=True)):
                    assert result is not None
                    stored, response = result
                    assert response == {"version": i + 1, "head": stored[-1].hash.hex()}
                    await _check(store, game_id, i + 1)
                    assert [e.data for e in await store.read(game_id)] == [
                        {"n": n, "to": "c3"} for n in range(i + 1)
                    ]
                    [command] = await store._pool.fetch(
                        "SELECT id::text, outcome, first_version, last_version, "
                        "response::text FROM commands WHERE game_id = $1",
                        uuid.UUID(game_id),
                    )
                    assert command["id"] == stored[0].command_id
                    assert (command["outcome"], command["first_version"]) == ("accepted", 1)
                    assert command["last_version"] == i + 1
                    assert command["response"].replace(" ", "") == (
                        f'{{"head":"{stored[-1].hash.hex()}","version":{i + 1}}}'
                    )
            finally:
                await store._pool.close()

    asyncio.run(body())


def test_the_same_game_twice_in_one_batch_moves_once(fresh_database: str) -> None:
    async def play(store: Rig) -> None:
        a, b = [(await new_game(store)).id for _ in range(2)]
        at_a, at_b = await _at(store, a), await _at(store, b)
        first, second, other = await asyncio.gather(
            _move(store, a, at_a), _move(store, a, at_a, n=2), _move(store, b, at_b)
        )
        assert len(_batches(store)) == 1
        assert len(_singles(store)) == 1  # the one it did not make, sent alone: too late
        assert (first is None) != (second is None)  # one moved; the other was too late
        assert other is not None
        await _check(store, a, 1 if second is None else 2)
        await _check(store, b, 1)
        accepted = await store._pool.fetchval(
            "SELECT count(*) FROM commands WHERE game_id = $1", uuid.UUID(a)
        )
        assert accepted == 1

    _on_store(fresh_database, play)


def test_a_repeated_idempotency_key_fails_only_its_own_append(fresh_database: str) -> None:
    async def play(store: Rig) -> None:
        a, b, c = [(await new_game(store)).id for _ in range(3)]
        assert await _move(store, a, await _at(store, a), key="k-1") is not None
        ats = [await _at(store, g) for g in (a, b, c)]
        results = await asyncio.gather(
            _move(store, a, ats[0], key="k-1"),
            _move(store, b, ats[1], key="k-1"),
            _move(store, c, ats[2]),
            return_exceptions=True,
        )
        assert len(_batches(store)) == 1
        assert len(_singles(store)) == 2  # the first append (alone), the repeat (alone)
        assert isinstance(results[0], DuplicateCommand)
        assert all(isinstance(r, tuple) for r in results[1:]), results
        await _check(store, a, 1)
        await _check(store, b, 1)
        await _check(store, c, 1)

    _on_store(fresh_database, play)


def test_a_member_breaking_a_constraint_undoes_the_batch_and_the_others_go_alone(
    fresh_database: str,
) -> None:
    async def play(store: Rig) -> None:
        a, b, c = [(await new_game(store)).id for _ in range(3)]
        first = await _move(store, a, await _at(store, a))
        assert first is not None
        taken = first[0][0].command_id  # a command id already recorded: commands_pkey
        ats = [await _at(store, g) for g in (a, b, c)]
        alone = _counted("sent_alone")
        results = await asyncio.gather(
            _move(store, a, ats[0], command_id=taken),
            _move(store, b, ats[1]),
            _move(store, c, ats[2]),
            return_exceptions=True,
        )
        assert len(_batches(store)) == 1 and _counted("sent_alone") - alone == 3
        assert results[0] is None  # alone, the single statement's answer: not appended
        assert all(isinstance(r, tuple) for r in results[1:]), results
        await _check(store, a, 1)
        await _check(store, b, 1)
        await _check(store, c, 1)

    _on_store(fresh_database, play)


_GAME = "SELECT status, result::text, version FROM games WHERE id = $1"
_EVENTS = (
    "SELECT version, type, data::text, seat, public::text, recorded_at, length(hash), "
    "command_id IS NOT NULL FROM events WHERE game_id = $1 ORDER BY version"
)
_COMMANDS = (
    "SELECT seat, idempotency_key, type, body::text, received_at, outcome, error_code, "
    "first_version, last_version, response IS NOT NULL FROM commands WHERE game_id = $1"
)


def test_a_batched_append_writes_what_the_single_statement_writes(fresh_database: str) -> None:
    """A game-ending command of seat 1 with public forms and a key, appended once in a batch
    and once alone: the same games, events and commands rows, column by column."""

    async def body() -> None:
        await migrate(fresh_database)
        batched, alone = await _store(fresh_database, 32), await _store(fresh_database, 1)
        try:
            x, filler = [(await new_game(batched)).id for _ in range(2)]
            z = (await new_game(alone)).id
            when = datetime(2026, 11, 26, 21, 0, 0, 123456, tzinfo=UTC)
            end = {
                "seat": 1,
                "status": "finished",
                "result": {"winner": 1, "points": [3, 7]},
                "public": {"n": "hidden", "to": "c3"},
                "when": when,
            }
            at_x, at_f, at_z = (
                await _at(batched, x),
                await _at(batched, filler),
                await _at(alone, z),
            )
            done = await asyncio.gather(
                _move(batched, x, at_x, n=3, key="end-1", **end), _move(batched, filler, at_f)
            )
            assert all(r is not None for r in done)
            assert await _move(alone, z, at_z, n=3, key="end-1", **end) is not None
            assert len(_batches(batched)) == 1 and not _singles(batched)
            assert len(_singles(alone)) == 1 and not _batches(alone)
            rows = []
            for game_id in (x, z):
                gid = uuid.UUID(game_id)
                rows.append(
                    [
                        [tuple(r) for r in await batched._pool.fetch(sql, gid)]
                        for sql in (_GAME, _EVENTS, _COMMANDS)
                    ]
                )
            assert rows[0] == rows[1]
            game, events, commands = rows[0]
            assert game == [("finished", '{"points": [3, 7], "winner": 1}', 3)]
            assert [e[3] for e in events] == [1, 1, 1] and events[0][5] == when
            assert commands[0][:3] == (1, "end-1", "move") and commands[0][5:9] == (
                "accepted",
                None,
                1,
                3,
            )
            await _check(batched, x, 3)
        finally:
            await batched._pool.close()
            await alone._pool.close()

    asyncio.run(body())


def test_a_locked_game_does_not_hold_up_its_batch(fresh_database: str) -> None:
    async def play(store: Rig) -> None:
        a, b, c = [(await new_game(store)).id for _ in range(3)]
        holder = await asyncpg.connect(fresh_database)
        try:
            tx = holder.transaction()
            await tx.start()
            await holder.execute("SELECT 1 FROM games WHERE id = $1 FOR UPDATE", uuid.UUID(a))
            ats = [await _at(store, g) for g in (a, b, c)]
            alone = _counted("sent_alone")
            locked = asyncio.ensure_future(_move(store, a, ats[0]))
            others = asyncio.gather(_move(store, b, ats[1]), _move(store, c, ats[2]))
            started = time.monotonic()
            done = await asyncio.wait_for(others, 10)
            assert time.monotonic() - started < 2
            assert all(r is not None for r in done)
            await asyncio.sleep(0.2)
            assert not locked.done()  # sent alone, it waits for the row as a single append does
            await tx.commit()
        finally:
            await holder.close()
        assert await asyncio.wait_for(locked, 10) is not None
        assert len(_batches(store)) == 1
        assert len(_singles(store)) == 1
        assert _counted("sent_alone") - alone == 1
        for game_id in (a, b, c):
            await _check(store, game_id, 1)

    _on_store(fresh_database, play)


def test_a_batch_that_fails_fails_each_member(fresh_database: str) -> None:
    """A failure that is not one member's data (here the commands table locked past the
    session's lock_timeout) is every member's answer, exactly as each alone would get it."""

    async def body() -> None:
        await migrate(fresh_database)
        store = await _store(fresh_database, 32, server_settings={"lock_timeout": "300ms"})
        holder = await asyncpg.connect(fresh_database)
        try:
            games = [(await new_game(store)).id for _ in range(3)]
            ats = [await _at(store, g) for g in games]
            failed = _counted("failed")
            async with holder.transaction():
                await holder.execute("LOCK TABLE commands IN ACCESS EXCLUSIVE MODE")
                results = await asyncio.gather(
                    *(_move(store, g, at) for g, at in zip(games, ats, strict=True)),
                    return_exceptions=True,
                )
            assert len(_batches(store)) == 1
            assert not _singles(store)  # not resent: it failed for all
            assert all(isinstance(r, asyncpg.LockNotAvailableError) for r in results), results
            assert _counted("failed") - failed == 3
            for game_id in games:
                await _check(store, game_id, 0)  # nothing written
                assert await _move(store, game_id, await _at(store, game_id)) is not None
        finally:
            await holder.close()
            await store._pool.close()

    asyncio.run(body())


def test_two_instances_writing_the_same_games_lose_and_double_nothing(
    fresh_database: str,
) -> None:
    """Two stores (two instances), four writers each, all on the same eight games: every
    acknowledged append is in the log exactly once, versions dense, chains whole."""

    async def body() -> None:
        await migrate(fresh_database)
        stores = [await _store(fresh_database, 8) for _ in range(2)]
        try:
            games = [(await new_game(stores[0])).id for _ in range(8)]
            acked: dict[str, list[str]] = {g: [] for g in games}
            rng = random.Random(7)

            async def writer(store: Rig) -> None:
                for _ in range(40):
                    game_id = rng.choice(games)
                    at = await _at(store, game_id)
                    await asyncio.sleep(0)  # the writers' appends meet in one loop turn
                    result = await _move(store, game_id, at, n=rng.randint(1, 3))
                    if result is not None:
                        acked[game_id].append(result[0][0].command_id or "")

            await asyncio.gather(*(writer(s) for s in stores for _ in range(4)))
            assert sum(len(_batches(s)) for s in stores) < 320  # some batched
            for game_id in games:
                stored = await stores[1].read(game_id)
                row = await stores[1].get_game(game_id)
                assert row is not None
                await _check(stores[1], game_id, row.version)
                commands = [e.command_id for e in stored]
                assert sorted(set(commands)) == sorted(acked[game_id])
                recorded = await stores[1]._pool.fetchval(
                    "SELECT count(*) FROM commands WHERE game_id = $1", uuid.UUID(game_id)
                )
                assert recorded == len(acked[game_id])
        finally:
            for store in stores:
                await store._pool.close()

    asyncio.run(body())


class WatchedPool:
    """The real pool, whose connections note each statement and transaction they are asked for."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self.calls: list[str] = []

    @contextlib.asynccontextmanager
    async def acquire(self) -> AsyncIterator[Any]:
        async with self.pool.acquire() as conn:
            yield _Watched(conn, self.calls)


class _Watched:
    def __init__(self, conn: Any, calls: list[str]) -> None:
        self._conn, self._calls = conn, calls

    def transaction(self) -> Any:
        self._calls.append("transaction")
        return self._conn.transaction()

    def is_in_transaction(self) -> bool:
        return bool(self._conn.is_in_transaction())

    async def execute(self, sql: str, *args: Any) -> Any:
        self._calls.append(sql.split()[0])
        return await self._conn.execute(sql, *args)


def test_a_refusal_is_recorded_by_one_statement_that_commits_itself(
    fresh_database: str,
) -> None:
    """No BEGIN ... COMMIT around a refusal's row: its key is never held uncommitted while the
    refusing process gets round to the COMMIT, holding up a batch inserting the same key."""

    async def body() -> None:
        await migrate(fresh_database)
        pool = await asyncpg.create_pool(fresh_database, min_size=1, max_size=2)
        try:
            game_id = (await new_game(EventStore(pool))).id
            watched = WatchedPool(pool)
            store = EventStore(watched)
            for attempt in range(2):  # the second, with the same key, is still refused
                refusal = store.record_rejection(
                    game_id=game_id,
                    command_id=str(uuid.uuid4()),
                    seat=0,
                    idempotency_key="k-1",
                    type="move",
                    body={"type": "move"},
                    error_code="rule.illegal",
                    error_detail="no",
                    received_at=datetime.now(UTC),
                )
                if attempt == 0:
                    await refusal
                    assert watched.calls == ["INSERT"]
                else:
                    with pytest.raises(DuplicateCommand):
                        await refusal
        finally:
            await pool.close()

    asyncio.run(body())


@pytest.mark.parametrize("batched", [False, True], ids=["alone", "batched"])
def test_a_stale_version_or_a_foreign_head_appends_and_records_nothing(
    fresh_database: str, batched: bool
) -> None:
    """The compare-and-set compares the version *and* the head, by name: an append decided on
    version N-1, or on a version N whose head is not the stored one (another instance's
    rolled-back or diverged N), matches no row — no event, no command record, no move — on
    the single statement and in a batch alike."""

    async def play(store: Rig) -> None:
        if not batched:
            store.appends = None  # type: ignore[assignment]
        game_id = (await new_game(store)).id
        old = await _at(store, game_id)
        assert await _move(store, game_id, old, key="first") is not None
        now = await _at(store, game_id)
        assert now[0] == old[0] + 1
        foreign = (now[0], bytes(32) if now[1] != bytes(32) else b"\x01" * 32)
        for stale in (old, foreign, (now[0] + 1, now[1])):
            assert await _move(store, game_id, stale, key=f"stale-{stale[0]}") is None, stale
            assert await _at(store, game_id) == now
        await _check(store, game_id, now[0])
        recorded = await store._pool.fetchval(
            "SELECT count(*) FROM commands WHERE game_id = $1", uuid.UUID(game_id)
        )
        assert recorded == 1
        assert await _move(store, game_id, now, key="second") is not None  # the stored state
        await _check(store, game_id, now[0] + 1)

    _on_store(fresh_database, play)
