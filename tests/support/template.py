"""One migrated template database per migrations set, cloned for each test that wants a
migrated database (``CREATE DATABASE … TEMPLATE``): a clone is a file copy on the server, where
running the nine migrations on an empty database costs every server start a second or more.

The template's name carries a digest of ``migrations/*.sql`` (names and bytes), so a changed or
new migration gets a template of its own, and a template left by an earlier run on the same
server is reused only while it is still right. It is built under another name and renamed when
complete: a run that dies half-way leaves no template that looks finished. Clones are ordinary
databases (``schema_migrations`` lists every file), so ``migrate`` on them finds nothing to do.

The one project import is the migration runner itself (lazily: ``tests/conftest.py`` imports
no application code)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .servers import with_database

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"

#: Templates made by this process, by server (the DSN without its database).
_made: dict[str, str] = {}


def digest(directory: Path = MIGRATIONS) -> str:
    """12 hex digits over the migration files' names and bytes, in the order they apply."""
    h = hashlib.sha256()
    for path in sorted(directory.glob("*.sql"), key=lambda p: p.name):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:12]


async def _admin(dsn: str, *sql: str) -> list[Any]:
    asyncpg: Any = importlib.import_module("asyncpg")
    conn = await asyncpg.connect(with_database(dsn, "postgres"), timeout=10)
    try:
        return [await conn.fetch(statement) for statement in sql]
    finally:
        await conn.close()


async def _build(dsn: str, name: str) -> None:
    exists = await _admin(dsn, f"SELECT 1 FROM pg_database WHERE datname = '{name}'")
    if exists[0]:
        return
    migrate: Any = importlib.import_module("service.eventstore.migrate").migrate
    building = f"{name}_b{uuid.uuid4().hex[:8]}"
    await _admin(dsn, f'CREATE DATABASE "{building}"')
    try:
        await migrate(with_database(dsn, building), MIGRATIONS)
        await _admin(dsn, f'ALTER DATABASE "{building}" RENAME TO "{name}"')
    except Exception:
        await _admin(dsn, f'DROP DATABASE IF EXISTS "{building}" WITH (FORCE)')
        again = await _admin(dsn, f"SELECT 1 FROM pg_database WHERE datname = '{name}'")
        if not again[0]:  # not a rename lost to a concurrent builder: a real failure
            raise


def template(dsn: str) -> str:
    """The name of the migrated template on ``dsn``'s server, built if it is not there."""
    server = with_database(dsn, "")
    if server not in _made:
        name = f"manifest_tpl_{digest()}"
        asyncio.run(_build(dsn, name))
        _made[server] = name
    return _made[server]


@contextlib.contextmanager
def migrated_database(dsn: str) -> Iterator[str]:
    """A uniquely named database cloned from the migrated template; its DSN; dropped after."""
    source = template(dsn)
    name = f"manifest_t_{uuid.uuid4().hex[:16]}"
    for attempt in range(50):  # CREATE … TEMPLATE fails while another session copies it
        try:
            asyncio.run(_admin(dsn, f'CREATE DATABASE "{name}" TEMPLATE "{source}"'))
            break
        except Exception as error:
            if "is being accessed by other users" not in str(error) or attempt == 49:
                raise
            time.sleep(0.02 * (attempt + 1))  # a retry back-off, not a wait for a condition
    try:
        yield with_database(dsn, name)
    finally:
        asyncio.run(_admin(dsn, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
