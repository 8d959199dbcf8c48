"""Configuration: read once from the environment at start, validated, and passed down.

Nothing else in ``service/``, ``projections/`` or ``infra/`` reads ``os.environ``, and nothing
reads it when imported: :meth:`Settings.from_env` is called by the entry points at start (the
CLI, the app factory when given no settings), and the value is passed down — to spawned
workers too (``service.cli``). A bad value (not a number, out of range, an
unknown word) stops the start with a message naming the variable and what it accepts
(:class:`SettingsError`); defaults are written once, in :data:`SPECS`.

Every variable, its default and what it means: :data:`MEANINGS` below, rendered by
:func:`markdown_table` into docs/configuration.md (``tests/service/test_settings_table.py`` fails
when that page differs; ``.venv/bin/python -m service.settings`` writes it).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec


class SettingsError(ValueError):
    """A setting has a value the service cannot run with; the message says which and why."""


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")
_LEVELS = ("debug", "info", "warning", "error")


def _int(lo: int, hi: int) -> Callable[[str, str], int]:
    def parse(name: str, text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise SettingsError(f"{name} must be a whole number, not {text!r}") from None
        if not lo <= value <= hi:
            raise SettingsError(f"{name} must be between {lo} and {hi}, not {value}")
        return value

    return parse


def _seconds(lo: float, hi: float) -> Callable[[str, str], float]:
    def parse(name: str, text: str) -> float:
        try:
            value = float(text.strip())
        except ValueError:
            raise SettingsError(f"{name} must be a number of seconds, not {text!r}") from None
        if not lo <= value <= hi:  # also refuses nan
            raise SettingsError(f"{name} must be between {lo} and {hi} seconds, not {text!r}")
        return value

    return parse


def _bool(name: str, text: str) -> bool:
    word = text.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise SettingsError(f"{name} must be one of {', '.join(_TRUE + _FALSE)}, not {text!r}")


def _level(name: str, text: str) -> str:
    word = text.strip().lower()
    if word not in _LEVELS:
        raise SettingsError(f"{name} must be one of {', '.join(_LEVELS)}, not {text!r}")
    return word


def _prefix(name: str, text: str) -> str:
    if not text or any(c.isspace() for c in text) or len(text) > 64:
        raise SettingsError(f"{name} must be 1 to 64 characters without spaces, not {text!r}")
    return text


def _text(name: str, text: str) -> str | None:
    return text or None


def _key_source(name: str, text: str) -> str:
    word = text.strip().lower()
    if word not in ("", "config", "database"):
        raise SettingsError(f"{name} must be config or database, not {text!r}")
    return word


def _networks(name: str, text: str) -> tuple[str, ...]:
    """Comma-separated IP addresses and CIDR networks, each written back in its one spelling
    (``10.1.2.3/8`` is ``10.0.0.0/8``); empty: none."""
    found: list[str] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        try:
            if "/" in item:
                found.append(str(ipaddress.ip_network(item, strict=False)))
            else:
                found.append(str(ipaddress.ip_address(item)))
        except ValueError:
            raise SettingsError(
                f"{name} must be comma-separated IP addresses or CIDR networks (0.0.0.0/0,::/0 "
                f"for every address), not {item!r}"
            ) from None
    return tuple(found)


def _path(name: str, text: str) -> Path:
    if not text:
        raise SettingsError(f"{name} must name a directory")
    return Path(text)


#: field -> (variable, default text, parser). The one place defaults are written.
SPECS: dict[str, tuple[str, str, Callable[[str, str], Any]]] = {
    "pg_dsn": ("PG_DSN", "", _text),
    "pg_read_dsn": ("PG_READ_DSN", "", _text),
    "redis_url": ("REDIS_URL", "", _text),
    "redis_prefix": ("MANIFEST_REDIS_PREFIX", "mf", _prefix),
    "redis_cluster": ("REDIS_CLUSTER", "0", _bool),
    "data_dir": ("MANIFEST_DATA_DIR", ".manifest", _path),
    "max_body": ("MANIFEST_MAX_BODY", "65536", _int(1024, 64 * 1024 * 1024)),
    "pg_pool": ("MANIFEST_PG_POOL", "20", _int(2, 1000)),
    "log_level": ("MANIFEST_LOG_LEVEL", "info", _level),
    # prometheus_client's own variable: where several workers keep their metrics
    "metrics_dir": ("PROMETHEUS_MULTIPROC_DIR", "", _text),
    "access_log": ("MANIFEST_ACCESS_LOG", "1", _bool),
    "catchup_seconds": ("MANIFEST_CATCHUP_SECONDS", "5", _seconds(0.1, 3600)),
    "migrations": ("MANIFEST_MIGRATIONS", "", _text),
    "signing_key": ("MANIFEST_SIGNING_KEY", "", _text),
    "signing_key_source": ("MANIFEST_SIGNING_KEY_SOURCE", "", _key_source),
    "pg_connect_timeout": ("MANIFEST_PG_CONNECT_TIMEOUT", "3", _seconds(0.1, 300)),
    "pg_acquire_timeout": ("MANIFEST_PG_ACQUIRE_TIMEOUT", "2", _seconds(0.05, 300)),
    "pg_lock_timeout": ("MANIFEST_PG_LOCK_TIMEOUT", "2", _seconds(0.05, 300)),
    "pg_statement_timeout": ("MANIFEST_PG_STATEMENT_TIMEOUT", "5", _seconds(0.1, 3600)),
    "pg_append_batch": ("MANIFEST_PG_APPEND_BATCH", "32", _int(1, 1000)),
    "game_writers": ("MANIFEST_GAME_WRITERS", "8", _int(1, 1000)),
    "redis_connect_timeout": ("MANIFEST_REDIS_CONNECT_TIMEOUT", "1", _seconds(0.05, 60)),
    "redis_timeout": ("MANIFEST_REDIS_TIMEOUT", "1", _seconds(0.05, 60)),
    "projection_retries": ("MANIFEST_PROJECTION_RETRIES", "3", _int(1, 100)),
    "projection_lag": ("MANIFEST_PROJECTION_LAG", "10", _seconds(0.1, 86400)),
    "retry_after": ("MANIFEST_RETRY_AFTER", "1", _int(1, 3600)),
    "gc_threshold": ("MANIFEST_GC_THRESHOLD", "20000", _int(0, 10**7)),
    # limits against hostile clients (quotas: requests per minute per client; 0 = off)
    "max_header_bytes": ("MANIFEST_MAX_HEADER_BYTES", "16384", _int(1024, 1024 * 1024)),
    "max_json_depth": ("MANIFEST_MAX_JSON_DEPTH", "32", _int(2, 1000)),
    "trusted_proxies": ("MANIFEST_TRUSTED_PROXIES", "", _networks),
    "quota_create": ("MANIFEST_QUOTA_CREATE", "60", _int(0, 10**9)),
    "quota_commands": ("MANIFEST_QUOTA_COMMANDS", "1200", _int(0, 10**9)),
    "quota_messages": ("MANIFEST_QUOTA_MESSAGES", "60", _int(0, 10**9)),
    "quota_queries": ("MANIFEST_QUOTA_QUERIES", "120", _int(0, 10**9)),
    "quota_audit": ("MANIFEST_QUOTA_AUDIT", "60", _int(0, 10**9)),
    "quota_reads": ("MANIFEST_QUOTA_READS", "12000", _int(0, 10**9)),
    "rejected_cap": ("MANIFEST_REJECTED_CAP", "1000", _int(0, 10**9)),
    # refusals' storage (issue 25): past a budget a refusal is answered but only counted
    "refusal_body_prefix": ("MANIFEST_REFUSAL_BODY_PREFIX", "1024", _int(0, 65536)),
    "refusals_per_client": ("MANIFEST_REFUSALS_PER_CLIENT", "60", _int(0, 10**9)),
    "refusal_bytes": ("MANIFEST_REFUSAL_BYTES", "262144", _int(0, 10**12)),
    "audit_cache": ("MANIFEST_AUDIT_CACHE", "256", _int(0, 10**6)),
    # live streams (service/http/streams.py): opens per minute, open at once, the pub/sub ping
    "quota_streams": ("MANIFEST_QUOTA_STREAMS", "120", _int(0, 10**9)),
    "streams_per_client": ("MANIFEST_STREAMS_PER_CLIENT", "16", _int(1, 10**6)),
    "streams_per_process": ("MANIFEST_STREAMS_PER_PROCESS", "1000", _int(1, 10**6)),
    "streams_seat_reserve": ("MANIFEST_STREAMS_SEAT_RESERVE", "200", _int(0, 10**6)),
    "streams_seats_per_address": ("MANIFEST_STREAMS_SEATS_PER_ADDRESS", "64", _int(1, 10**6)),
    "stream_heartbeat": ("MANIFEST_STREAM_HEARTBEAT", "5", _seconds(0.1, 3600)),
    # a quiet stream's keep-alive comment: proxies' idle timeouts, and a vanished client found
    "stream_keepalive": ("MANIFEST_STREAM_KEEPALIVE", "15", _seconds(0.05, 3600)),
    # heavy reads (whole replay, export, audit, dispute files): docs/api.md, "Limits"
    "quota_heavy": ("MANIFEST_QUOTA_HEAVY", "120", _int(0, 10**9)),
    "heavy_per_client": ("MANIFEST_HEAVY_PER_CLIENT", "2", _int(1, 10**6)),
    "heavy_per_process": ("MANIFEST_HEAVY_PER_PROCESS", "4", _int(1, 10**6)),
    # turn clocks (service.application.clocks): how often due deadlines are claimed, how long
    # a claim lasts before another instance may take it, and how many one claim takes
    "clock_tick": ("MANIFEST_CLOCK_TICK", "1", _seconds(0.01, 60)),
    "clock_lease": ("MANIFEST_CLOCK_LEASE", "30", _seconds(0.1, 3600)),
    "clock_batch": ("MANIFEST_CLOCK_BATCH", "32", _int(1, 1000)),
}


#: variable -> what it means, in docs/configuration.md's table (one entry per :data:`SPECS` entry).
MEANINGS: dict[str, str] = {
    "PG_DSN": (
        "PostgreSQL URL; unset = embedded PostgreSQL in `MANIFEST_DATA_DIR`. Several hosts "
        "(`postgresql://u@h1:5432,h2:5432,h3:5432/db?target_session_attrs=read-write`, a Patroni "
        "cluster): each new connection goes to the one that takes writes, and the service follows"
        ' a failover by itself (docs/operations.md, "PostgreSQL failover")'
    ),
    "PG_READ_DSN": (
        "a streaming read replica of `PG_DSN` for history reads (events, replay; audit, dispute "
        "files and exports read the primary in one snapshot); a replica that lags or fails is "
        "bypassed for the primary (docs/scaling.md)"
    ),
    "REDIS_URL": (
        "Redis URL (Redis 7 or later); unset = projections in process (one instance only)"
    ),
    "MANIFEST_REDIS_PREFIX": ("prefix of every Redis key and channel"),
    "REDIS_CLUSTER": (
        "`1`: `REDIS_URL` names one node of a Redis Cluster (keys of one game share the hash tag "
        "`{<game id>}`; see docs/scaling.md)"
    ),
    "MANIFEST_DATA_DIR": ("the embedded PostgreSQL's home"),
    "MANIFEST_MAX_BODY": ("largest accepted request body (bytes)"),
    "MANIFEST_PG_POOL": ("PostgreSQL connections per process (2 to 1000)"),
    "MANIFEST_LOG_LEVEL": ("structlog JSON log level"),
    "PROMETHEUS_MULTIPROC_DIR": (
        "with `--workers N` > 1, where the workers keep their metrics so that `/metrics` sums "
        "them (emptied at start; `prometheus_client`'s own variable, read by it too; "
        "docs/operations.md)"
    ),
    "MANIFEST_ACCESS_LOG": (
        "one JSON line per request (request id, game, seat, command type, latency)"
    ),
    "MANIFEST_CATCHUP_SECONDS": ("period of the projection catch-up worker"),
    "MANIFEST_MIGRATIONS": ("directory of SQL migrations"),
    "MANIFEST_SIGNING_KEY": (
        "Ed25519 private key (PEM text, or the path of a PEM file) signing receipts and tree "
        "heads; required when `PG_DSN` is set"
    ),
    "MANIFEST_SIGNING_KEY_SOURCE": (
        "`config`: the key above, the server refuses to start without it (production); "
        "`database`: a key generated on first start and kept in PostgreSQL (the embedded default;"
        " with `PG_DSN`, development and tests only). Rotation: a new `MANIFEST_SIGNING_KEY` and "
        "a restart; `GET /v1/keys` keeps every earlier public key"
    ),
    "MANIFEST_PG_CONNECT_TIMEOUT": ("seconds to open a PostgreSQL connection"),
    "MANIFEST_PG_ACQUIRE_TIMEOUT": (
        "seconds a request waits for a free pool connection (then 503; checked every 50 ms, so up"
        " to 50 ms more)"
    ),
    "MANIFEST_PG_LOCK_TIMEOUT": ("PostgreSQL `lock_timeout` of the service's connections, seconds"),
    "MANIFEST_PG_STATEMENT_TIMEOUT": (
        "PostgreSQL `statement_timeout` (the client gives up 1 s later), seconds"
    ),
    "MANIFEST_PG_APPEND_BATCH": (
        "most game commands appended by one statement (a loop turn's worth); `1` sends each alone"
        " (`service/eventstore/batched.py`)"
    ),
    "MANIFEST_GAME_WRITERS": (
        "writes (commands, messages) to one game in flight per process; more are 503 at once"
    ),
    "MANIFEST_REDIS_CONNECT_TIMEOUT": ("seconds to open a Redis connection"),
    "MANIFEST_REDIS_TIMEOUT": (
        "seconds one Redis call may take in all, sending and reply (no automatic retry; checked "
        "every 50 ms, so up to 50 ms more)"
    ),
    "MANIFEST_PROJECTION_RETRIES": (
        "attempts of a projection write after a commit before the catch-up worker takes over"
    ),
    "MANIFEST_PROJECTION_LAG": (
        "seconds a projection may lag this process's commits before `/readyz` fails"
    ),
    "MANIFEST_RETRY_AFTER": ("`Retry-After` seconds of a 503 `service.unavailable`"),
    "MANIFEST_GC_THRESHOLD": (
        "allocations between young-generation garbage collections (`0`: CPython's 700; see "
        "`service/collector.py`)"
    ),
    "MANIFEST_MAX_HEADER_BYTES": (
        "request line and headers together (bytes); more: 400, connection closed"
    ),
    "MANIFEST_MAX_JSON_DEPTH": ("deepest nesting of arrays/objects in a body; deeper: 400"),
    "MANIFEST_TRUSTED_PROXIES": (
        "comma-separated IP addresses and CIDR networks of reverse proxies; only a peer named "
        "here has its `X-Forwarded-For` (and `-Proto`) believed as the client's address, which "
        "quotas count by; unset: the connection's peer, whatever headers say"
    ),
    "MANIFEST_QUOTA_CREATE": ("game creations per minute per client address (`0`: no quota)"),
    "MANIFEST_QUOTA_COMMANDS": ("commands per minute per token (else address)"),
    "MANIFEST_QUOTA_MESSAGES": ("table-talk messages per minute per token (else address)"),
    "MANIFEST_QUOTA_QUERIES": (
        "queries (`POST /v1/games/{id}/queries`: survey, plan…) per minute per token (else address)"
    ),
    "MANIFEST_QUOTA_AUDIT": ("audits, dispute files and exports per minute per client address"),
    "MANIFEST_QUOTA_READS": ("every other request per minute per client address"),
    "MANIFEST_REJECTED_CAP": (
        "refused commands recorded per seat per game; past it they are only counted"
    ),
    "MANIFEST_REFUSAL_BODY_PREFIX": (
        "bytes of a refused command's body kept (its canonical JSON; longer: this prefix, with "
        "the SHA-256 and size of the whole)"
    ),
    "MANIFEST_REFUSALS_PER_CLIENT": (
        "refused commands stored per minute per client address, per process (`0`: no budget); "
        "more are answered and counted"
    ),
    "MANIFEST_REFUSAL_BYTES": (
        "bytes of refused commands stored per minute per process (`0`: no budget); more are "
        "answered and counted"
    ),
    "MANIFEST_AUDIT_CACHE": ("audit reports kept per process (one per game)"),
    "MANIFEST_QUOTA_STREAMS": (
        "live streams (`GET .../stream`) opened per minute per seat token, else address (their "
        "own quota, not the reads')"
    ),
    "MANIFEST_STREAMS_PER_CLIENT": (
        "live streams open at once per client: the seat token for a seat's stream of its own "
        "game, else the address; more: 429"
    ),
    "MANIFEST_STREAMS_PER_PROCESS": (
        'live streams open at once per process; more: 503 (docs/api.md, "Limits")'
    ),
    "MANIFEST_STREAMS_SEAT_RESERVE": (
        "of those, the slots only seats' streams of their own game may take (spectators stop at "
        "`PER_PROCESS − RESERVE`; must be below `MANIFEST_STREAMS_PER_PROCESS`)"
    ),
    "MANIFEST_STREAMS_SEATS_PER_ADDRESS": (
        "seats' streams open at once per client address, all seat tokens together (a game's "
        "creator holds every seat's token); more: 429"
    ),
    "MANIFEST_STREAM_HEARTBEAT": (
        "seconds between pings of the process's one change subscription (Redis pub/sub); one not "
        "answered within `MANIFEST_REDIS_TIMEOUT` counts as lost"
    ),
    "MANIFEST_STREAM_KEEPALIVE": (
        "seconds of silence after which an open live stream sends an SSE comment (`: "
        "keep-alive`): proxies' idle timeouts do not cut a quiet game's stream, and a client that"
        " vanished is found by the failed write, which frees its slot"
    ),
    "MANIFEST_QUOTA_HEAVY": (
        "replays (`GET …/replay`, whole or a page) per minute per client address"
    ),
    "MANIFEST_HEAVY_PER_CLIENT": (
        "heavy reads (replay, export, audit, dispute file) one client address may have running at"
        " once in a process; more: 429 `rate.limited` with `Retry-After`"
    ),
    "MANIFEST_HEAVY_PER_PROCESS": (
        "heavy reads running at once in a process; more: 503 `service.unavailable` with "
        "`Retry-After`"
    ),
    "MANIFEST_CLOCK_TICK": (
        "seconds between an instance's claims of due turn-clock deadlines: a deadline fires at "
        'most this late (plus its own append), 0.01 to 60 (docs/api.md, "Clocks")'
    ),
    "MANIFEST_CLOCK_LEASE": (
        "seconds an instance holds a claimed deadline; if it dies holding it, another fires it "
        "this much later at most"
    ),
    "MANIFEST_CLOCK_BATCH": ("most due deadlines one claim takes"),
}

#: A default the table says in words (the text in :data:`SPECS` is empty or not what a
#: reader needs).
DEFAULT_WORDS: dict[str, str] = {
    "PROMETHEUS_MULTIPROC_DIR": "a temporary directory",
    "MANIFEST_MIGRATIONS": "`migrations/`",
    "MANIFEST_SIGNING_KEY_SOURCE": "`config` if `PG_DSN` is set, else `database`",
    "MANIFEST_TRUSTED_PROXIES": "unset (none)",
}


def markdown_table() -> str:
    """docs/configuration.md's table of every setting, from :data:`SPECS` and :data:`MEANINGS`."""
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    for name, default, _ in SPECS.values():
        shown = DEFAULT_WORDS.get(name) or (f"`{default}`" if default else "unset")
        rows.append(f"| `{name}` | {shown} | {MEANINGS[name]} |")
    return "\n".join(rows) + "\n"


def _default(field: str) -> Any:
    name, text, parse = SPECS[field]
    return parse(name, text)


class Settings(msgspec.Struct, frozen=True):
    pg_dsn: str | None = _default("pg_dsn")
    pg_read_dsn: str | None = _default("pg_read_dsn")
    redis_url: str | None = _default("redis_url")
    redis_prefix: str = _default("redis_prefix")
    redis_cluster: bool = _default("redis_cluster")
    data_dir: Path = _default("data_dir")
    max_body: int = _default("max_body")
    pg_pool: int = _default("pg_pool")
    log_level: str = _default("log_level")
    metrics_dir: str | None = _default("metrics_dir")
    access_log: bool = _default("access_log")
    catchup_seconds: float = _default("catchup_seconds")
    migrations: str | None = _default("migrations")
    signing_key: str | None = _default("signing_key")
    pg_connect_timeout: float = _default("pg_connect_timeout")
    pg_acquire_timeout: float = _default("pg_acquire_timeout")
    pg_lock_timeout: float = _default("pg_lock_timeout")
    pg_statement_timeout: float = _default("pg_statement_timeout")
    pg_append_batch: int = _default("pg_append_batch")
    game_writers: int = _default("game_writers")
    redis_connect_timeout: float = _default("redis_connect_timeout")
    redis_timeout: float = _default("redis_timeout")
    projection_retries: int = _default("projection_retries")
    projection_lag: float = _default("projection_lag")
    retry_after: int = _default("retry_after")
    gc_threshold: int = _default("gc_threshold")
    max_header_bytes: int = _default("max_header_bytes")
    max_json_depth: int = _default("max_json_depth")
    trusted_proxies: tuple[str, ...] = _default("trusted_proxies")
    quota_create: int = _default("quota_create")
    quota_commands: int = _default("quota_commands")
    quota_messages: int = _default("quota_messages")
    quota_queries: int = _default("quota_queries")
    quota_audit: int = _default("quota_audit")
    quota_reads: int = _default("quota_reads")
    rejected_cap: int = _default("rejected_cap")
    refusal_body_prefix: int = _default("refusal_body_prefix")
    refusals_per_client: int = _default("refusals_per_client")
    refusal_bytes: int = _default("refusal_bytes")
    audit_cache: int = _default("audit_cache")
    quota_streams: int = _default("quota_streams")
    streams_per_client: int = _default("streams_per_client")
    streams_per_process: int = _default("streams_per_process")
    streams_seat_reserve: int = _default("streams_seat_reserve")
    streams_seats_per_address: int = _default("streams_seats_per_address")
    stream_heartbeat: float = _default("stream_heartbeat")
    stream_keepalive: float = _default("stream_keepalive")
    quota_heavy: int = _default("quota_heavy")
    heavy_per_client: int = _default("heavy_per_client")
    heavy_per_process: int = _default("heavy_per_process")
    clock_tick: float = _default("clock_tick")
    clock_lease: float = _default("clock_lease")
    clock_batch: int = _default("clock_batch")
    signing_key_source: str = "database"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Every setting from ``env`` (default: the process environment; an empty variable
        counts as unset); raises :class:`SettingsError` on the first bad value."""
        e = os.environ if env is None else env
        values = {
            field: parse(name, e.get(name) or default)
            for field, (name, default, parse) in SPECS.items()
        }
        if values["streams_seat_reserve"] >= values["streams_per_process"]:
            raise SettingsError(
                "MANIFEST_STREAMS_SEAT_RESERVE must be below MANIFEST_STREAMS_PER_PROCESS "
                f"({values['streams_per_process']}), not {values['streams_seat_reserve']}: "
                "spectators would get no stream at all"
            )
        if not values["signing_key_source"]:  # production (PG_DSN set) needs a configured key
            values["signing_key_source"] = "config" if values["pg_dsn"] else "database"
        return cls(**values)


DOC = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"
BEGIN, END = "<!-- settings table: generated by python -m service.settings -->", "<!-- end -->"


def documented(text: str) -> str:
    """``text`` (docs/configuration.md) with the table between its marks as generated now."""
    head, rest = text.split(BEGIN, 1)
    return head + BEGIN + "\n" + markdown_table() + END + rest.split(END, 1)[1]


if __name__ == "__main__":
    DOC.write_text(documented(DOC.read_text()))
    print(f"wrote the settings table in {DOC}")
