"""Plain-SQL migrations, applied in name order, once each, under an advisory lock.

``migrations/NNNN_name.sql`` files (at the repository root) are applied in lexicographic order of
their file names. Each file runs in its own transaction together with the row that records it in
``schema_migrations(name, checksum)``, where ``checksum`` is the SHA-256 (hex) of the file's bytes.

The whole run holds the session-level advisory lock :data:`LOCK_KEY`, so any number of processes
may call :func:`migrate` at once: one applies, the others wait and then find nothing left to do.
A file that was applied and has since changed on disk is never re-applied: :class:`MigrationError`
names it (write a new migration instead).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import asyncpg  # type: ignore[import-untyped]

#: ``pg_advisory_lock`` key held for the whole migration run (b"MANIFEST" as a big-endian int).
LOCK_KEY = 0x4D414E4946455354


def _default_dir() -> Path:
    """``migrations/`` beside ``service/``: the source tree's, or the one a wheel installs
    (``pip install .`` ships it as package data); else ``./migrations``. ``MANIFEST_MIGRATIONS``
    (a setting) is passed as ``directory``."""
    beside = Path(__file__).resolve().parents[2] / "migrations"
    return beside if beside.is_dir() else Path.cwd() / "migrations"


DEFAULT_DIR = _default_dir()

_CREATE_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    name       text PRIMARY KEY,
    checksum   text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)
"""


class MigrationError(RuntimeError):
    """A migration cannot be applied safely (e.g. an applied file changed on disk)."""


class Migration:
    __slots__ = ("checksum", "name", "sql")

    def __init__(self, name: str, sql: str, checksum: str) -> None:
        self.name = name
        self.sql = sql
        self.checksum = checksum

    def __repr__(self) -> str:
        return f"Migration({self.name!r}, checksum={self.checksum[:12]}...)"


def load(directory: str | Path | None = None) -> list[Migration]:
    """The ``*.sql`` files of ``directory`` (default :data:`DEFAULT_DIR`) in name order."""
    root = Path(directory) if directory is not None else DEFAULT_DIR
    if not root.is_dir():
        raise MigrationError(f"migrations directory not found: {root}")
    found: list[Migration] = []
    for path in sorted(root.glob("*.sql"), key=lambda p: p.name):
        raw = path.read_bytes()
        found.append(Migration(path.name, raw.decode("utf-8"), hashlib.sha256(raw).hexdigest()))
    return found


async def migrate(conn_or_dsn: Any, directory: str | Path | None = None) -> list[str]:
    """Apply every migration not yet applied; return the names applied (in order).

    ``conn_or_dsn`` is a PostgreSQL URL, an ``asyncpg.Connection`` or an ``asyncpg.Pool``.
    Raises :class:`MigrationError` if an applied migration's checksum differs from its file.
    """
    migrations = load(directory)
    if isinstance(conn_or_dsn, str):
        conn = await asyncpg.connect(conn_or_dsn)
        try:
            return await _migrate(conn, migrations)
        finally:
            await conn.close()
    if isinstance(conn_or_dsn, asyncpg.Pool):  # the server's pool, with its statement timeout
        async with conn_or_dsn.acquire() as conn:
            await conn.execute("SET statement_timeout = 0")  # migrations may take their time
            done = await _migrate(conn, migrations)
            await conn.execute("RESET statement_timeout")
            return done
    return await _migrate(conn_or_dsn, migrations)


async def applied(conn: Any) -> dict[str, str]:
    """``{name: checksum}`` of the migrations recorded in ``conn``'s database."""
    exists = await conn.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL")
    if not exists:
        return {}
    rows = await conn.fetch("SELECT name, checksum FROM schema_migrations")
    return {str(r["name"]): str(r["checksum"]) for r in rows}


async def _migrate(conn: Any, migrations: list[Migration]) -> list[str]:
    await conn.execute("SELECT pg_advisory_lock($1::bigint)", LOCK_KEY)
    try:
        await conn.execute(_CREATE_TABLE)
        done = await applied(conn)
        for m in migrations:
            if m.name in done and done[m.name] != m.checksum:
                raise MigrationError(
                    f"migration {m.name} was applied with checksum {done[m.name]} but the file "
                    f"now has checksum {m.checksum}; applied migrations must not be edited "
                    "(add a new migration instead)"
                )
        names: list[str] = []
        for m in migrations:
            if m.name in done:
                continue
            try:
                async with conn.transaction():
                    await conn.execute(m.sql)
                    await conn.execute(
                        "INSERT INTO schema_migrations (name, checksum) VALUES ($1, $2)",
                        m.name,
                        m.checksum,
                    )
            except asyncpg.PostgresError as exc:
                raise MigrationError(f"migration {m.name} failed: {exc}") from exc
            names.append(m.name)
        return names
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1::bigint)", LOCK_KEY)
