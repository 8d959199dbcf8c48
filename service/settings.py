"""Configuration: read once from the environment at start, validated, and passed down.

Nothing else in ``service/``, ``projections/`` or ``infra/`` reads ``os.environ``, and nothing
reads it when imported: :meth:`Settings.from_env` is called by the entry points at start (the
CLI, the app factory when given no settings), and the value is passed down — to spawned
workers too (``service.cli``). A bad value (not a number, out of range, an
unknown word) stops the start with a message naming the variable and what it accepts
(:class:`SettingsError`); defaults are written once, in :data:`SPECS`.

Every variable, its default and what it means: docs/configuration.md, whose table
:mod:`service.settingsdoc` generates from :data:`SPECS` and its own ``MEANINGS``.
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
    # every quota counted per token also has a ceiling per client address (seat tokens are not
    # scarce: a created game hands its creator one per seat); issue 35
    "quota_commands_per_address": ("MANIFEST_QUOTA_COMMANDS_PER_ADDRESS", "4800", _int(0, 10**9)),
    "quota_messages_per_address": ("MANIFEST_QUOTA_MESSAGES_PER_ADDRESS", "120", _int(0, 10**9)),
    "quota_queries_per_address": ("MANIFEST_QUOTA_QUERIES_PER_ADDRESS", "480", _int(0, 10**9)),
    "quota_streams_per_address": ("MANIFEST_QUOTA_STREAMS_PER_ADDRESS", "480", _int(0, 10**9)),
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
    # the most seconds a Fischer bank may hold, and the expiries in a row with no player's move
    # after which a game's clocks stop (docs/api.md, "Clocks"): kept in each new game's terms
    "clock_max_bank": ("MANIFEST_CLOCK_MAX_BANK", "604800", _int(1, 604800)),
    "clock_rest_after": ("MANIFEST_CLOCK_REST_AFTER", "50", _int(1, 10000)),
    # a decision's cost (issue 35): more events than this and the command is refused, unappended
    "max_events_per_command": ("MANIFEST_MAX_EVENTS_PER_COMMAND", "200", _int(1, 100_000)),
    # players (docs/api.md, "Players"): most live (unrevoked) keys one player holds at once
    "player_keys_max": ("MANIFEST_PLAYER_KEYS_MAX", "20", _int(1, 10**4)),
    # ... and how many of a player's games (the most recently changed) "my games" orders
    "my_games_max": ("MANIFEST_MY_GAMES_MAX", "500", _int(1, 10**5)),
}


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
    quota_commands_per_address: int = _default("quota_commands_per_address")
    quota_messages_per_address: int = _default("quota_messages_per_address")
    quota_queries_per_address: int = _default("quota_queries_per_address")
    quota_streams_per_address: int = _default("quota_streams_per_address")
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
    player_keys_max: int = _default("player_keys_max")
    my_games_max: int = _default("my_games_max")
    heavy_per_client: int = _default("heavy_per_client")
    heavy_per_process: int = _default("heavy_per_process")
    clock_tick: float = _default("clock_tick")
    clock_lease: float = _default("clock_lease")
    clock_batch: int = _default("clock_batch")
    clock_max_bank: int = _default("clock_max_bank")
    clock_rest_after: int = _default("clock_rest_after")
    max_events_per_command: int = _default("max_events_per_command")
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

