"""What each setting means, and docs/configuration.md's table built from it and from
:data:`service.settings.SPECS` (variables and defaults): the one place either is written.
``tests/service/test_settings_table.py`` fails when the page differs, and when a setting has no
meaning here; ``.venv/bin/python -m service.settingsdoc`` rewrites the page's table."""

from __future__ import annotations

from pathlib import Path

from service.settings import SPECS

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
    "MANIFEST_MAX_EVENTS_PER_COMMAND": (
        "game events one command may cause; past it the command is refused, 422"
        " `command.too_many_events`, nothing appended"
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
    "MANIFEST_QUOTA_COMMANDS_PER_ADDRESS": (
        "commands per minute from one client address, all its seat tokens together: the ceiling"
        " over `MANIFEST_QUOTA_COMMANDS` (a created game hands its creator every seat's token;"
        " `0`: none)"
    ),
    "MANIFEST_QUOTA_MESSAGES_PER_ADDRESS": (
        "table-talk messages and presence per minute from one client address, all its tokens"
        " together (the ceiling over `MANIFEST_QUOTA_MESSAGES`; `0`: none)"
    ),
    "MANIFEST_QUOTA_QUERIES_PER_ADDRESS": (
        "queries per minute from one client address, all its tokens together (the ceiling over"
        " `MANIFEST_QUOTA_QUERIES`; `0`: none)"
    ),
    "MANIFEST_QUOTA_STREAMS_PER_ADDRESS": (
        "live streams opened per minute from one client address, all its tokens together (the"
        " ceiling over `MANIFEST_QUOTA_STREAMS`; `0`: none)"
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
    "MANIFEST_PLAYER_KEYS_MAX": ("live (unrevoked) keys one player holds at once"),
    "MANIFEST_MY_GAMES_MAX": (
        "of a player's games, the most recently changed that `GET /v1/me/games` orders"
    ),
    "MANIFEST_CLOCK_MAX_BANK": (
        "the most seconds a Fischer bank may hold; kept in each new game's terms"
    ),
    "MANIFEST_CLOCK_REST_AFTER": (
        "expiries in a row with no player's move after which a game's clocks stop until a"
        " player moves or comes back"
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


DOC = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"
BEGIN, END = "<!-- settings table: generated by python -m service.settingsdoc -->", "<!-- end -->"


def documented(text: str) -> str:
    """``text`` (docs/configuration.md) with the table between its marks as generated now."""
    head, rest = text.split(BEGIN, 1)
    return head + BEGIN + "\n" + markdown_table() + END + rest.split(END, 1)[1]


if __name__ == "__main__":
    DOC.write_text(documented(DOC.read_text()))
    print(f"wrote the settings table in {DOC}")
