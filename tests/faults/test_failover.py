"""PostgreSQL failover (issue 30): three PostgreSQL 15 servers under Patroni with etcd
(``tests/support/patroni.py``: synchronous strict mode, pg_rewind), the real server
(``manifest serve``) on the cluster's multi-host ``PG_DSN``, and bots playing 16 games.

The primary's PostgreSQL is killed (SIGKILL); once Patroni has promoted a replica and the old
primary is back as a replica, the new primary's host is frozen (SIGSTOP of Patroni and
PostgreSQL). Each time:

- the service follows the new primary by itself (no restart, no configuration change);
- meanwhile requests are answered 503 ``service.unavailable`` with ``Retry-After``, never a 500,
  never after more than ``MAX_WAIT`` seconds (the checks of ``tests/faults/test_faults.py``);
- the old primary rejoins as a replica of the new timeline (pg_rewind where it had diverged)
  and there is never more than one writable server;
- ``/readyz`` says so, as docs/operations.md's runbook tells an operator: 503 with
  ``postgres: {ok: false, error}`` while no server takes writes, answered within ``MAX_WAIT``,
  never a 500, and 200 again once the new primary accepts commands.

Afterwards every command a client saw acknowledged is in the event log, exactly once, with the
events and hashes it was told (the clients' own log of acknowledgements against the store);
every game's versions are dense, every chain verifies and every audit is clean; and every
server holds the same event log (nothing written on a lost primary survives anywhere).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import pytest

from tests.faults.test_faults import (
    FAULT_SETTINGS,
    MAX_WAIT,
    Ledger,
    new_games,
    players,
    settle_and_verify,
)
from tests.integration.apihelp import auth, tokens_of
from tests.integration.serverproc import ServerProcess
from tests.support.faulty import RedisServer
from tests.support.patroni import Node, PatroniCluster, patroni_available

pytestmark = [pytest.mark.faults, pytest.mark.slow]

GAMES = 16
FAILOVER = 60.0  # generous: Patroni's ttl is 10 s, a kill is seen within one 1 s loop
REJOIN = 120.0


@pytest.fixture(scope="module")
def cluster() -> Iterator[PatroniCluster]:
    missing = patroni_available()
    # scripts/test installs patroni, etcd-server and python3-etcd: missing is a failed set-up,
    # never a skip that would let the failover guarantee go unchecked
    assert missing is None, f"{missing}: run the suite with scripts/test, which installs it"
    server = PatroniCluster()
    try:
        yield server.start()
    finally:
        server.close()


@pytest.fixture(scope="module")
def own_redis() -> Iterator[RedisServer]:
    server = RedisServer()
    try:
        yield server.start()
    finally:
        server.close()


@pytest.fixture
def app(
    cluster: PatroniCluster, own_redis: RedisServer, request: pytest.FixtureRequest
) -> Iterator[ServerProcess]:
    # The synchronous standby, the next primary, first in the list: when it is frozen in its
    # turn, asyncpg's own multi-host connect (one host after the other, in one timeout) would
    # spend every new connection's timeout on it and never reach the primary after it.
    promoted_next = cluster.sync_standby()
    assert promoted_next is not None, cluster.members()
    proc = ServerProcess(cluster.dsn_from(promoted_next), own_redis.url)
    proc.promoted_next = promoted_next  # type: ignore[attr-defined]
    proc.env.update(FAULT_SETTINGS)
    request.node.manifest_server = proc
    proc.start()
    try:
        yield proc
    finally:
        proc.close()


def test_failover_loses_no_acknowledged_command(
    app: ServerProcess, cluster: PatroniCluster, own_redis: RedisServer
) -> None:
    """A killed primary, then a frozen one: Patroni promotes a synchronous standby each time,
    the service follows by itself, and not one acknowledged command is lost."""
    try:
        asyncio.run(_failover(app, cluster, own_redis))
    except BaseException:
        print(cluster.logs())  # shown by pytest on failure
        raise


async def _failover(server: ServerProcess, cluster: PatroniCluster, redis: RedisServer) -> None:
    games = await new_games(server, GAMES)
    ledger = Ledger()
    timelines = [_timeline(cluster)]
    async with players(server, ledger, games, per_game=1, going=40):
        # 1. The primary's PostgreSQL crashes; Patroni (alive on that host) sees it.
        first = _leader(cluster)
        first.kill_postgres()
        await _fails_over(server, cluster, ledger, first)
        await asyncio.to_thread(cluster.wait_healthy, REJOIN)  # `first` is a replica again
        assert _role(first) == "replica"
        timelines.append(_timeline(cluster))
        # 2. The new primary's host freezes: nothing answers, its leader key expires.
        second = _leader(cluster)
        # synchronous mode: only the synchronous standby may be promoted
        expected = server.promoted_next  # type: ignore[attr-defined]
        assert second is expected, (second.name, cluster.members())
        second.pause()
        try:
            await _fails_over(server, cluster, ledger, second)
        finally:
            second.resume()
        await asyncio.to_thread(cluster.wait_healthy, REJOIN)  # demoted, rewound, streaming
        assert _role(second) == "replica"
        timelines.append(_timeline(cluster))
        before = len(ledger.acked)
        await ledger.wait_for(lambda: len(ledger.acked) >= before + 20, 60, "play goes on")
    print(f"acknowledged {len(ledger.acked)}, statuses {dict(ledger.statuses)}")
    assert timelines[0] < timelines[1] < timelines[2], timelines
    assert [n.name for n in cluster.primaries()] == [_leader(cluster).name]
    await settle_and_verify(server, redis, ledger, games)
    await _same_log_everywhere(cluster)
    await _dense_and_audited(server, games)


async def _fails_over(
    server: ServerProcess, cluster: PatroniCluster, ledger: Ledger, old: Node
) -> None:
    """Waits (on conditions, within generous bounds) until another member leads, clients were
    told 503 meanwhile, and commands are acknowledged again; never two writable servers.
    ``/readyz`` is watched all along: it must say the primary is gone, then that it is back."""
    unavailable = ledger.statuses[503]
    readiness = _Readiness()
    watcher = asyncio.create_task(readiness.watch(server))
    try:
        deadline = time.monotonic() + FAILOVER
        while True:
            primaries = await asyncio.to_thread(cluster.primaries)
            assert len(primaries) <= 1, f"split brain: {[n.name for n in primaries]}"
            leader = await asyncio.to_thread(cluster.leader)
            if leader is not None and leader is not old:
                break
            assert time.monotonic() < deadline, f"no new leader; {ledger.statuses}"
            await asyncio.sleep(0.2)
        await ledger.wait_for(lambda: ledger.statuses[503] > unavailable, FAILOVER, "a 503")
        before = len(ledger.acked)
        await ledger.wait_for(lambda: len(ledger.acked) >= before + 10, FAILOVER, "acks again")
        await ledger.wait_for(lambda: readiness.ready_again, FAILOVER, "/readyz 200 again")
    finally:
        watcher.cancel()
    assert not ledger.failures, ledger.failures[:10]
    assert not readiness.wrong, readiness.wrong[:5]
    assert readiness.postgres_down, f"/readyz never said postgres was down: {readiness.seen}"


class _Readiness:
    """``GET /readyz`` every 0.2 s during a failover: what an operator's probe would see."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, Any]] = []
        self.wrong: list[str] = []  # a 500 or an answer later than MAX_WAIT
        self.postgres_down = False
        self.ready_again = False

    async def watch(self, server: ServerProcess) -> None:
        async with server.async_client(timeout=3 * MAX_WAIT) as client:
            while True:
                started = time.monotonic()
                r = await client.get("/readyz")
                took = time.monotonic() - started
                body = r.json()
                self.seen.append((r.status_code, body))
                if took > MAX_WAIT or r.status_code not in (200, 503):
                    self.wrong.append(f"{r.status_code} after {took:.1f} s: {body}")
                elif r.status_code == 503:
                    postgres = body.get("checks", {}).get("postgres", {})
                    if postgres.get("ok") is False and postgres.get("error"):
                        self.postgres_down = True
                elif self.postgres_down:
                    self.ready_again = True
                await asyncio.sleep(0.2)


def _leader(cluster: PatroniCluster) -> Node:
    leader = cluster.leader()
    assert leader is not None, cluster.members()
    return leader


def _role(node: Node) -> str:
    return str(node.status().get("role"))


def _timeline(cluster: PatroniCluster) -> int:
    return int(next(m["timeline"] for m in cluster.members() if m["role"] == "leader"))


async def _event_log(dsn: str) -> list[tuple[Any, ...]]:
    conn = await asyncpg.connect(dsn, timeout=10)
    try:
        rows = await conn.fetch(
            "SELECT game_id, version, hash FROM events ORDER BY game_id, version"
        )
        return [tuple(r) for r in rows]
    finally:
        await conn.close()


async def _same_log_everywhere(cluster: PatroniCluster) -> None:
    """Every server (the two rejoined ones included) holds the primary's event log exactly:
    nothing a lost primary wrote on its own survived there."""
    leader = _leader(cluster)
    expected = await _event_log(leader.dsn)
    for node in cluster.nodes:
        deadline = time.monotonic() + REJOIN
        while (got := await _event_log(node.dsn)) != expected:
            assert time.monotonic() < deadline, f"{node.name}: {len(got)} vs {len(expected)}"
            await asyncio.sleep(0.2)


async def _dense_and_audited(server: ServerProcess, games: list[dict[str, Any]]) -> None:
    conn = await asyncpg.connect(server.pg_dsn, timeout=10)
    try:
        for g in games:
            versions = [
                r["version"]
                for r in await conn.fetch(
                    "SELECT version FROM events WHERE game_id = $1::uuid ORDER BY version",
                    g["id"],
                )
            ]
            head = await conn.fetchval("SELECT version FROM games WHERE id = $1::uuid", g["id"])
            assert versions == list(range(1, head + 1)), g["id"]
    finally:
        await conn.close()
    async with server.async_client(timeout=3 * MAX_WAIT) as client:
        for g in games:
            report = (await client.get(f"/v1/games/{g['id']}/audit")).json()
            assert report["ok"] is True, report
            assert report["chain"]["ok"] is True and report["adjudication"]["ok"] is True


def test_a_retry_is_not_acknowledged_before_its_command_is_on_a_standby(
    app: ServerProcess, cluster: PatroniCluster
) -> None:
    """Both standbys frozen: a command's commit waits for one, its request gives up (503 "may
    have been recorded"), and a cancel of the waiting backend (an operator's
    ``pg_cancel_backend``) makes the commit visible on the primary alone. Resent with its key
    while the standbys are still frozen, it is 503 again — a 200 then would acknowledge a move
    that the next failover loses; once a standby has it, the same retry is 200."""
    asyncio.run(_retry_waits_for_a_standby(app, cluster))


async def _retry_waits_for_a_standby(server: ServerProcess, cluster: PatroniCluster) -> None:
    (game,) = await new_games(server, 1)
    gid, tokens = game["id"], tokens_of(game)
    leader = _leader(cluster)
    standbys = [n for n in cluster.nodes if n is not leader]
    async with server.async_client(timeout=3 * MAX_WAIT) as client:
        doc = (await client.get(f"/v1/games/{gid}")).json()
        seat = doc["to_act"][0]
        legal = (await client.get(f"/v1/games/{gid}/legal", headers=auth(tokens[seat]))).json()
        body = {"command": legal["commands"][0], "expected_version": legal["version"]}
        headers = {**auth(tokens[seat]), "Idempotency-Key": "on-the-primary-only"}
        url = f"/v1/games/{gid}/commands"
        for node in standbys:
            node.pause()
        try:
            first = await client.post(url, json=body, headers=headers)
            assert first.status_code == 503, first.text
            assert "may have been recorded" in first.json()["detail"]
            # The commit still waits for a standby (invisible meanwhile). An operator cancelling
            # "stuck" statements (or a client's cancel) ends the wait: the commit becomes
            # visible on the primary alone.
            conn = await asyncpg.connect(leader.dsn, timeout=10)
            try:
                deadline = time.monotonic() + FAILOVER
                while not await conn.fetchval(
                    "SELECT count(*) FROM commands WHERE idempotency_key = $1",
                    "on-the-primary-only",
                ):
                    await conn.execute(
                        "SELECT pg_cancel_backend(pid) FROM pg_stat_activity "
                        "WHERE wait_event = 'SyncRep'"
                    )
                    assert time.monotonic() < deadline, "the commit never became visible"
                    await asyncio.sleep(0.2)
            finally:
                await conn.close()
            again = await client.post(url, json=body, headers=headers)
            assert again.status_code == 503, again.text  # not 200: on one server only
            assert again.json()["code"] == "service.unavailable" and again.headers["retry-after"]
        finally:
            for node in standbys:
                node.resume()
        deadline = time.monotonic() + FAILOVER
        while (last := await client.post(url, json=body, headers=headers)).status_code != 200:
            assert last.status_code == 503, last.text
            assert time.monotonic() < deadline, last.text
            await asyncio.sleep(float(last.headers.get("retry-after", 1)))
    await asyncio.to_thread(cluster.wait_healthy, REJOIN)
    await _same_log_everywhere(cluster)
