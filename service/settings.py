"""Configuration, from the environment only.

| variable | default | meaning |
|---|---|---|
| ``PG_DSN`` | unset | PostgreSQL URL; unset = an embedded PostgreSQL in ``MANIFEST_DATA_DIR`` |
| ``REDIS_URL`` | unset | Redis URL; unset = projections kept in-process |
| ``MANIFEST_REDIS_PREFIX`` | ``mf`` | prefix of every Redis key and channel |
| ``MANIFEST_DATA_DIR`` | ``.manifest`` | embedded PostgreSQL's data and the server key |
| ``MANIFEST_MAX_BODY`` | ``65536`` | largest accepted request body, in bytes |
| ``MANIFEST_PG_POOL`` | ``20`` | PostgreSQL connections per process |
| ``MANIFEST_LOG_LEVEL`` | ``info`` | ``debug``, ``info``, ``warning``, ``error`` |
| ``MANIFEST_ACCESS_LOG`` | ``1`` | one structured log line per request (``0`` to turn off) |
| ``MANIFEST_CATCHUP_SECONDS`` | ``5`` | how often the catch-up worker checks projections |
| ``MANIFEST_MIGRATIONS`` | ``migrations/`` | directory of the SQL migrations |
| ``MANIFEST_SIGNING_KEY`` | unset | Ed25519 key (PEM, or its path); unset = made once, kept in PG |

Limits against hostile clients (issue 10; see ``docs/api.md``, "Limits"). Quotas are requests
per minute per client (the bearer token, else the client address), counted in each process;
``0`` turns a quota off.

| variable | default | meaning |
|---|---|---|
| ``MANIFEST_MAX_HEADER_BYTES`` | ``16384`` | request line and headers together, in bytes |
| ``MANIFEST_MAX_JSON_DEPTH`` | ``32`` | deepest nesting of arrays/objects in a body |
| ``MANIFEST_QUOTA_CREATE`` | ``60`` | game creations per minute per client address |
| ``MANIFEST_QUOTA_COMMANDS`` | ``1200`` | commands per minute per token |
| ``MANIFEST_QUOTA_MESSAGES`` | ``60`` | table-talk messages per minute per token |
| ``MANIFEST_QUOTA_AUDIT`` | ``60`` | audits and dispute files per minute per client address |
| ``MANIFEST_QUOTA_READS`` | ``12000`` | every other request, per minute per client |
| ``MANIFEST_REJECTED_CAP`` | ``1000`` | refusals recorded per seat per game; more are counted |
| ``MANIFEST_AUDIT_CACHE`` | ``256`` | audit reports kept per process (one per game) |
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import msgspec


class Settings(msgspec.Struct, frozen=True):
    pg_dsn: str | None = None
    redis_url: str | None = None
    redis_prefix: str = "mf"
    data_dir: Path = Path(".manifest")
    max_body: int = 65_536
    pg_pool: int = 20
    log_level: str = "info"
    access_log: bool = True
    catchup_seconds: float = 5.0
    # --- limits against hostile clients (issue 10) ---
    max_header_bytes: int = 16_384
    max_json_depth: int = 32
    quota_create: int = 60
    quota_commands: int = 1200
    quota_messages: int = 60
    quota_audit: int = 60
    quota_reads: int = 12_000
    rejected_cap: int = 1000
    audit_cache: int = 256

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        e = os.environ if env is None else env
        return cls(
            pg_dsn=e.get("PG_DSN") or None,
            redis_url=e.get("REDIS_URL") or None,
            redis_prefix=e.get("MANIFEST_REDIS_PREFIX", "mf"),
            data_dir=Path(e.get("MANIFEST_DATA_DIR", ".manifest")),
            max_body=int(e.get("MANIFEST_MAX_BODY", "65536")),
            pg_pool=int(e.get("MANIFEST_PG_POOL", "20")),
            log_level=e.get("MANIFEST_LOG_LEVEL", "info").lower(),
            access_log=e.get("MANIFEST_ACCESS_LOG", "1") not in ("0", "false", "no"),
            catchup_seconds=float(e.get("MANIFEST_CATCHUP_SECONDS", "5")),
            **_limits(e),
        )


_LIMITS = {
    "max_header_bytes": "MANIFEST_MAX_HEADER_BYTES",
    "max_json_depth": "MANIFEST_MAX_JSON_DEPTH",
    "quota_create": "MANIFEST_QUOTA_CREATE",
    "quota_commands": "MANIFEST_QUOTA_COMMANDS",
    "quota_messages": "MANIFEST_QUOTA_MESSAGES",
    "quota_audit": "MANIFEST_QUOTA_AUDIT",
    "quota_reads": "MANIFEST_QUOTA_READS",
    "rejected_cap": "MANIFEST_REJECTED_CAP",
    "audit_cache": "MANIFEST_AUDIT_CACHE",
}


def _limits(e: Mapping[str, str]) -> dict[str, int]:
    """The limits block: each an integer >= 0 (its default when unset)."""
    out: dict[str, int] = {}
    for field, variable in _LIMITS.items():
        raw = e.get(variable)
        if raw is None or raw == "":
            continue
        value = int(raw)
        if value < 0:
            raise ValueError(f"{variable} must be 0 or more, not {raw}")
        out[field] = value
    return out
