"""A multi-host ``PG_DSN`` follows the primary: every host is tried at once, the writable one
wins, and a pool whose server is lost or demoted expires all its connections."""

from __future__ import annotations

import asyncio
import socket
from typing import Any
from urllib.parse import urlsplit

import asyncpg  # type: ignore[import-untyped]
import pytest

from infra.pool import BoundedPool, NotSent
from service.eventstore.primary import NoPrimary, PrimaryConnector, split_hosts


def test_split_hosts_keeps_user_database_and_options() -> None:
    dsn = "postgresql://app:pw@h1:5432,h2:5433,[::1]:5434/manifest?target_session_attrs=read-write"
    assert split_hosts(dsn) == [
        "postgresql://app:pw@h1:5432/manifest?target_session_attrs=read-write",
        "postgresql://app:pw@h2:5433/manifest?target_session_attrs=read-write",
        "postgresql://app:pw@[::1]:5434/manifest?target_session_attrs=read-write",
    ]
    assert split_hosts("postgres://h1,h2/db") == ["postgres://h1/db", "postgres://h2/db"]
    one = "postgresql://u@h:5432/db"
    assert split_hosts(one) == [one]
    assert split_hosts("host=h1,h2 dbname=db") == ["host=h1,h2 dbname=db"]


class _FakePool:
    def __init__(self, error: BaseException) -> None:
        self.error = error
        self.expired = 0
        self.released: list[Any] = []

    async def acquire(self) -> Any:
        return self

    async def fetchval(self, *args: Any, **kw: Any) -> Any:
        raise self.error

    def terminate(self) -> None:
        pass

    async def release(self, conn: Any, timeout: float | None = None) -> None:
        self.released.append(timeout)

    async def expire_connections(self) -> None:
        self.expired += 1


@pytest.mark.parametrize(
    ("error", "expires"),
    [
        (asyncpg.exceptions.ReadOnlySQLTransactionError("read-only"), True),
        (asyncpg.exceptions.ConnectionDoesNotExistError("lost"), True),
        (asyncpg.exceptions.AdminShutdownError("terminating"), True),
        (TimeoutError(), True),
        (ConnectionResetError(), True),
        (asyncpg.exceptions.LockNotAvailableError("lock"), False),
        (asyncpg.exceptions.UniqueViolationError("dup"), False),
    ],
)
def test_a_lost_or_demoted_server_expires_every_pooled_connection(
    error: BaseException, expires: bool
) -> None:
    raw = _FakePool(error)
    pool = BoundedPool(raw, acquire_timeout=2)
    with pytest.raises(type(error)):
        asyncio.run(pool.fetchval("SELECT 1"))
    assert raw.expired == (1 if expires else 0)
    assert raw.released == [2]  # bounded: a frozen server does not hold the release


def _silent_server() -> tuple[socket.socket, int]:
    """A listening socket nobody answers on (a frozen host: TCP accepts, nothing replies)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    return sock, sock.getsockname()[1]


def _dsn(*ports: int, attrs: str = "read-write") -> str:
    hosts = ",".join(f"127.0.0.1:{p}" for p in ports)
    return f"postgresql://postgres@{hosts}/db?target_session_attrs={attrs}"


def test_a_frozen_host_first_in_the_list_does_not_stop_the_connect(pg_dsn: str) -> None:
    """asyncpg alone spends its whole timeout on the frozen first host; the connector reaches
    the writable server behind it at once."""
    real = urlsplit(pg_dsn)
    frozen, port = _silent_server()
    try:
        hosts = f"127.0.0.1:{port},{real.hostname}:{real.port}"
        user = f"{real.username}@" if real.username else ""
        multi = f"postgresql://{user}{hosts}{real.path}?target_session_attrs=read-write"

        async def both() -> None:
            with pytest.raises((TimeoutError, asyncio.TimeoutError)):
                await asyncpg.connect(multi, timeout=1)
            conn = await asyncio.wait_for(PrimaryConnector(multi)(multi, timeout=5), 4)
            try:
                assert await conn.fetchval("SELECT NOT pg_is_in_recovery()")
            finally:
                await conn.close()

        asyncio.run(both())
    finally:
        frozen.close()


def test_no_writable_server_is_no_primary_and_not_sent() -> None:
    """Every host refused (the seconds of a failover): NoPrimary, which the bounded pool turns
    into NotSent (503 "nothing was recorded")."""
    ports = []
    for _ in range(2):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        ports.append(s.getsockname()[1])
        s.close()
    connector = PrimaryConnector(_dsn(*ports))

    class _Pool:
        async def acquire(self) -> Any:
            return await connector(None, timeout=2)

    with pytest.raises(NoPrimary, match="no server takes writes"):
        asyncio.run(connector(None, timeout=2))
    with pytest.raises(NotSent, match="NoPrimary"):
        asyncio.run(BoundedPool(_Pool(), 3).fetchval("SELECT 1"))
