"""A statement that gets no answer (PostgreSQL frozen, as a hung host or a partition looks from
the client) fails after one bound, inside a transaction and a savepoint too — no ROLLBACK
waits for the silent server as long again — and the pool goes on with a new connection.

The silence is a relay between the pool and PostgreSQL that stops passing bytes and leaves
new connections (asyncpg's cancel request among them) unanswered: it needs no signal to a
server process, so it runs against any PostgreSQL the suite is given."""

from __future__ import annotations

import asyncio
import contextlib
import time
from urllib.parse import urlsplit

import asyncpg  # type: ignore[import-untyped]
import pytest

from infra.pool import BoundedPool
from service.eventstore.atomic import atomic

BOUND = 1.0  # the pool's command_timeout here


class Partition:
    """A TCP relay to ``host:port`` that :meth:`freeze` turns silent both ways."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.frozen = False
        self.listen_port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> Partition:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.listen_port = self._server.sockets[0].getsockname()[1]
        return self

    def freeze(self) -> None:
        self.frozen = True

    def thaw(self) -> None:
        self.frozen = False

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.frozen:  # accepted, never answered
            while await reader.read(65536):
                pass
            writer.close()
            return
        up_reader, up_writer = await asyncio.open_connection(self.host, self.port)
        for source, sink in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.create_task(self._pipe(source, sink))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pipe(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await source.read(65536):
                if not self.frozen:  # frozen: the bytes go nowhere
                    sink.write(data)
                    await sink.drain()
        sink.close()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


@pytest.mark.parametrize("savepoint", [False, True], ids=["transaction", "savepoint"])
def test_a_frozen_server_fails_a_transaction_after_one_bound(
    fresh_database: str, savepoint: bool
) -> None:
    async def run() -> float:
        target = urlsplit(fresh_database)
        partition = await Partition(target.hostname or "127.0.0.1", target.port or 5432).start()
        raw = await asyncpg.create_pool(
            fresh_database,
            host="127.0.0.1",
            port=partition.listen_port,
            min_size=1,
            max_size=2,
            command_timeout=BOUND,
        )
        pool = BoundedPool(raw, acquire_timeout=2)
        try:
            started = time.monotonic()
            with pytest.raises(TimeoutError):
                async with pool.acquire() as conn, atomic(conn):
                    assert await conn.fetchval("SELECT 1") == 1
                    if savepoint:
                        async with atomic(conn):
                            partition.freeze()
                            await conn.execute("SELECT 2")
                    else:
                        partition.freeze()
                        await conn.execute("SELECT 2")
            took = time.monotonic() - started
            partition.thaw()
            assert await pool.fetchval("SELECT 3") == 3  # a new connection serves the next use
            return took
        finally:
            partition.thaw()
            raw.terminate()
            await partition.close()

    took = asyncio.run(run())
    assert took < BOUND + 0.7, f"{took:.2f} s: the ROLLBACK waited for the silent server"
