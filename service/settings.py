"""Configuration, from the environment only.

| variable | default | meaning |
|---|---|---|
| ``PG_DSN`` | unset | PostgreSQL URL; unset = an embedded PostgreSQL in ``MANIFEST_DATA_DIR`` |
| ``PG_READ_DSN`` | unset | a streaming read replica for history reads (events, replay, audit) |
| ``REDIS_URL`` | unset | Redis URL; unset = projections kept in-process |
| ``MANIFEST_REDIS_PREFIX`` | ``mf`` | prefix of every Redis key and channel |
| ``MANIFEST_DATA_DIR`` | ``.manifest`` | embedded PostgreSQL's data and the server key |
| ``MANIFEST_MAX_BODY`` | ``65536`` | largest accepted request body, in bytes |
| ``MANIFEST_PG_POOL`` | ``20`` | PostgreSQL connections per process |
| ``MANIFEST_LOG_LEVEL`` | ``info`` | ``debug``, ``info``, ``warning``, ``error`` |
| ``MANIFEST_ACCESS_LOG`` | ``1`` | one structured log line per request (``0`` to turn off) |
| ``MANIFEST_CATCHUP_SECONDS`` | ``5`` | how often the catch-up worker checks projections |
| ``MANIFEST_MIGRATIONS`` | ``migrations/`` | directory of the SQL migrations |
| ``MANIFEST_SIGNING_KEY`` | unset | Ed25519 private key (PEM, or its path) signing receipts |
| ``MANIFEST_SIGNING_KEY_SOURCE`` | see below | ``config`` (the key above, required), ``database`` |

``MANIFEST_SIGNING_KEY_SOURCE`` defaults to ``config`` when ``PG_DSN`` is set (production: the
server refuses to start without ``MANIFEST_SIGNING_KEY``) and to ``database`` for the embedded
default (a key generated on first start and kept in PostgreSQL). ``database`` with ``PG_DSN``
set is an explicit opt-in for development and tests. A configured key always wins.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import msgspec


class Settings(msgspec.Struct, frozen=True):
    pg_dsn: str | None = None
    pg_read_dsn: str | None = None
    redis_url: str | None = None
    redis_prefix: str = "mf"
    data_dir: Path = Path(".manifest")
    max_body: int = 65_536
    pg_pool: int = 20
    log_level: str = "info"
    access_log: bool = True
    catchup_seconds: float = 5.0
    # --- signing keys (service.receipts) ---
    signing_key: str | None = None
    signing_key_source: str = "database"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        e = os.environ if env is None else env
        return cls(
            pg_dsn=e.get("PG_DSN") or None,
            pg_read_dsn=e.get("PG_READ_DSN") or None,
            redis_url=e.get("REDIS_URL") or None,
            redis_prefix=e.get("MANIFEST_REDIS_PREFIX", "mf"),
            data_dir=Path(e.get("MANIFEST_DATA_DIR", ".manifest")),
            max_body=int(e.get("MANIFEST_MAX_BODY", "65536")),
            pg_pool=int(e.get("MANIFEST_PG_POOL", "20")),
            log_level=e.get("MANIFEST_LOG_LEVEL", "info").lower(),
            access_log=e.get("MANIFEST_ACCESS_LOG", "1") not in ("0", "false", "no"),
            catchup_seconds=float(e.get("MANIFEST_CATCHUP_SECONDS", "5")),
            signing_key=e.get("MANIFEST_SIGNING_KEY") or None,
            signing_key_source=_signing_key_source(e),
        )


def _signing_key_source(e: Mapping[str, str]) -> str:
    """``config`` or ``database``: explicit, else ``config`` whenever PG_DSN is set."""
    source = e.get("MANIFEST_SIGNING_KEY_SOURCE", "").strip().lower()
    if not source:
        return "config" if e.get("PG_DSN") else "database"
    if source not in ("config", "database"):
        raise ValueError(f"MANIFEST_SIGNING_KEY_SOURCE is config or database, not {source!r}")
    return source
