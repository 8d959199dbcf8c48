"""One contract for both projection stores: in process (``MemoryStore``) and Redis (``RedisStore``,
on a real server with a key prefix of its own). Whatever a caller may rely on, both must do."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from projections.redis_store import RedisStore
from projections.store import MAILBOX_BOUND, MemoryStore, ProjectionStore

pytestmark = pytest.mark.integration

Contract = Callable[[ProjectionStore], Awaitable[None]]


@pytest.fixture(params=["memory", "redis", "redis-cluster"])
def make_store(request: pytest.FixtureRequest) -> Callable[[], ProjectionStore]:
    if request.param == "memory":
        return MemoryStore
    cluster = request.param == "redis-cluster"
    url: str = request.getfixturevalue("redis_cluster_url" if cluster else "redis_url")
    prefix = f"contract-{uuid.uuid4().hex[:12]}"
    return lambda: RedisStore.from_url(url, prefix, cluster=cluster)


def run(make_store: Callable[[], ProjectionStore], contract: Contract) -> None:
    async def main() -> None:
        store = make_store()
        try:
            await contract(store)
        finally:
            await store.clear()
            await store.close()

    asyncio.run(main())


def test_an_unknown_game_has_no_record(make_store: Callable[[], ProjectionStore]) -> None:
    async def contract(store: ProjectionStore) -> None:
        assert await store.version("g1") is None
        assert await store.fields("g1", ["table", "doc:spectator"]) == [None, None]
        assert await store.versions(["g1", "g2"]) == [None, None]
        assert await store.snapshot("g1", 100) is None
        assert await store.snapshot_versions("g1") == []
        assert await store.ping() is True

    run(make_store, contract)


def test_writes_only_move_forward_and_replace_the_whole_record(
    make_store: Callable[[], ProjectionStore],
) -> None:
    async def contract(store: ProjectionStore) -> None:
        assert await store.write("g1", 3, {"table": b"t3", "legal:0": b"l3"}) is True
        assert await store.version("g1") == 3
        assert await store.fields("g1", ["table", "legal:0", "version"]) == [b"t3", b"l3", b"3"]
        # The same version or an older one changes nothing.
        assert await store.write("g1", 3, {"table": b"other"}) is False
        assert await store.write("g1", 2, {"table": b"older"}) is False
        assert await store.fields("g1", ["table", "legal:0"]) == [b"t3", b"l3"]
        # A newer one replaces every field: what it does not name is gone.
        assert await store.write("g1", 5, {"table": b"t5"}) is True
        assert await store.fields("g1", ["table", "legal:0"]) == [b"t5", None]
        assert await store.write("g2", 1, {"table": b"x"}) is True
        assert await store.versions(["g2", "nope", "g1"]) == [1, None, 5]

    run(make_store, contract)


def test_subscribers_hear_every_accepted_write_and_nothing_else(
    make_store: Callable[[], ProjectionStore],
) -> None:
    async def contract(store: ProjectionStore) -> None:
        changes: AsyncIterator[int | None] = store.subscribe("g1")
        assert await anext(changes) is None  # subscribed
        await store.write("g1", 1, {"table": b"a"})
        await store.write("g1", 1, {"table": b"b"})  # refused: not announced
        await store.write("other", 7, {"table": b"c"})  # another game
        await store.write("g1", 4, {"table": b"d"})
        heard = [await asyncio.wait_for(anext(changes), 10) for _ in range(2)]
        assert heard == [1, 4]
        await changes.aclose()  # type: ignore[attr-defined]

    run(make_store, contract)


def test_a_subscriber_that_does_not_read_holds_a_bounded_backlog_newest_last(
    make_store: Callable[[], ProjectionStore],
) -> None:
    """A stream whose client reads slowly never grows memory with the game: its mailbox keeps
    at most ``MAILBOX_BOUND`` versions, cut down to the newest when full (a stream re-reads
    the document, so only the newest matters). An eager subscriber on the same game shows
    when every version has been dispatched; the slow one then holds a short, increasing
    backlog that ends with the newest version."""

    async def contract(store: ProjectionStore) -> None:
        slow: AsyncIterator[int | None] = store.subscribe("g1")
        eager: AsyncIterator[int | None] = store.subscribe("g1")
        assert await anext(slow) is None and await anext(eager) is None
        last = 40 * MAILBOX_BOUND
        for version in range(1, last + 1):
            assert await store.write("g1", version, {"table": b"t"})
        while await asyncio.wait_for(anext(eager), 10) != last:
            pass
        backlog: list[int | None] = []
        while not backlog or backlog[-1] != last:
            backlog.append(await asyncio.wait_for(anext(slow), 10))
        assert len(backlog) <= MAILBOX_BOUND, backlog
        assert backlog == sorted(backlog) and len(set(backlog)) == len(backlog), backlog
        for stream in (slow, eager):
            await stream.aclose()  # type: ignore[attr-defined]

    run(make_store, contract)


def test_a_game_left_and_followed_again_at_once_is_still_heard(
    make_store: Callable[[], ProjectionStore],
) -> None:
    """The last subscriber of a game leaves and a new one comes at once (a reconnecting
    client): its subscription is not undone by the leaving one's, and it hears the next
    write."""

    async def contract(store: ProjectionStore) -> None:
        for _ in range(3):
            changes: AsyncIterator[int | None] = store.subscribe("g1")
            assert await anext(changes) is None
            await changes.aclose()  # type: ignore[attr-defined]
        again: AsyncIterator[int | None] = store.subscribe("g1")
        assert await anext(again) is None
        assert await store.write("g1", 7, {"table": b"t"})
        assert await asyncio.wait_for(anext(again), 10) == 7
        await again.aclose()  # type: ignore[attr-defined]

    run(make_store, contract)


def test_snapshots_are_kept_by_version(make_store: Callable[[], ProjectionStore]) -> None:
    async def contract(store: ProjectionStore) -> None:
        await store.put_snapshots("g1", {})
        assert await store.snapshot_versions("g1") == []
        await store.put_snapshots("g1", {200: b"s200", 100: b"s100"})
        await store.put_snapshots("g1", {300: b"s300"})
        assert await store.snapshot_versions("g1") == [100, 200, 300]
        assert await store.snapshot("g1", 200) == b"s200"
        assert await store.snapshot("g1", 150) is None
        assert await store.snapshot_versions("g2") == []

    run(make_store, contract)


def test_clear_forgets_every_projection_and_snapshot(
    make_store: Callable[[], ProjectionStore],
) -> None:
    async def contract(store: ProjectionStore) -> None:
        await store.write("g1", 9, {"table": b"t"})
        await store.put_snapshots("g1", {100: b"s"})
        await store.clear()
        assert await store.version("g1") is None
        assert await store.snapshot_versions("g1") == []
        # and a game starts over from any version afterwards
        assert await store.write("g1", 1, {"table": b"again"}) is True

    run(make_store, contract)
