"""The HTTP API (``shared/API.md``): litestar handlers mapping requests onto
:class:`service.gameplay.Manifest`, problem JSON for every error, OpenAPI at ``/schema``."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import msgspec
import structlog
from litestar import Litestar, Request, Response, get, post, route
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.params import Parameter
from litestar.response import ServerSentEvent, ServerSentEventMessage, Stream

from domain.registry import all_games
from projections.projector import Projector
from projections.redis_store import RedisStore
from projections.store import MemoryStore, ProjectionStore

from . import openapi, pictures
from .assets import get_asset
from .auditcache import AuditCache
from .exportfile import encode_export
from .faults import Admission, BoundedPool, Faults, pg_session_settings
from .gameplay import CommandBody, CreateGame, JoinGame, Manifest, MessageBody, check_game_id
from .hardening import HardeningMiddleware
from .history import History
from .limits import QuotaMiddleware, Quotas
from .migrate import migrate
from .observability import RequestLogMiddleware, configure_logging, metrics_body
from .problems import PROBLEM_JSON, Problem
from .queries import post_query
from .readiness import readiness
from .receipts import load_signer, published_keys
from .seats import delete_seat
from .settings import Settings
from .store import EventStore, GameNotFound
from .tokens import bearer

log = structlog.get_logger("manifest")
JSON = "application/json"


def _manifest(request: Request[Any, Any, Any]) -> Manifest:
    manifest: Manifest = request.app.state.manifest
    return manifest


def _token(request: Request[Any, Any, Any]) -> str | None:
    return bearer(request.headers.get("authorization"))


def _raw(body: bytes, status: int = 200) -> Response[bytes]:
    return Response(content=body, status_code=status, media_type=JSON)


# --- catalogue -------------------------------------------------------------------------------
@get("/v1/rules", summary="Every game this server hosts, with its options and position schemas")
async def rules() -> list[dict[str, Any]]:
    return [
        {
            "game": g.id,
            "title": g.title,
            "min_seats": g.min_seats,
            "max_seats": g.max_seats,
            "playable": g.playable,
            "options": g.options_schema(),
            "position": g.position_schema(),
            "commands": g.command_schema(),
        }
        for g in all_games()
    ]


# --- lobby -----------------------------------------------------------------------------------
@post("/v1/games", status_code=201, summary="Create a game (with players: started at once)")
async def create_game(request: Request[Any, Any, Any], data: CreateGame) -> Response[bytes]:
    structlog.contextvars.bind_contextvars(game_type=data.game)
    created = await _manifest(request).create(data)
    return Response(
        content=msgspec.json.encode(created),
        status_code=201,
        media_type="application/json",
        headers={"location": f"/v1/games/{created['id']}"},
    )


@get("/v1/games", summary="List games, newest first (keyset pages: pass back `next`)")
async def list_games(
    request: Request[Any, Any, Any],
    status: str | None = None,
    game: str | None = None,
    limit: int = Parameter(default=50, ge=1, le=200),
    cursor: str | None = None,
) -> dict[str, Any]:
    if status is not None and status not in ("open", "active", "finished"):
        raise Problem(400, "request.bad_status", "status is open, active or finished")
    return await _manifest(request).list_games(status, game, limit, cursor)


@post("/v1/games/{game_id:str}/join", status_code=200, summary="Take a seat with the invite code")
async def join_game(
    request: Request[Any, Any, Any], game_id: str, data: JoinGame
) -> dict[str, Any]:
    structlog.contextvars.bind_contextvars(game=game_id)
    check_game_id(game_id)
    return await _manifest(request).join(game_id, data)


@post("/v1/games/{game_id:str}/start", status_code=200, summary="Start a full game (host token)")
async def start_game(request: Request[Any, Any, Any], game_id: str) -> dict[str, Any]:
    structlog.contextvars.bind_contextvars(game=game_id)
    check_game_id(game_id)
    return await _manifest(request).start(game_id, _token(request))


@route("/v1/games", http_method=["OPTIONS"], include_in_schema=False, status_code=204)
async def games_options(request: Request[Any, Any, Any]) -> Response[None]:
    """litestar's automatic OPTIONS answer names only the methods of the first handler on a
    path; /v1/games has two (list and create), so it gets this one, with the true ``Allow``."""
    return Response(
        content=None, status_code=204, headers={"allow": ", ".join(_allowed_methods(request))}
    )


# --- play ------------------------------------------------------------------------------------
@get("/v1/games/{game_id:str}", summary="The game as the caller may see it (seat token optional)")
async def get_game(request: Request[Any, Any, Any], game_id: str) -> Response[bytes]:
    structlog.contextvars.bind_contextvars(game=game_id)
    return _raw(await _manifest(request).game_document(game_id, _token(request)))


@get("/v1/games/{game_id:str}/legal", summary="Every legal command for the caller's seat")
async def get_legal(request: Request[Any, Any, Any], game_id: str) -> Response[bytes]:
    structlog.contextvars.bind_contextvars(game=game_id)
    return _raw(await _manifest(request).legal_document(game_id, _token(request)))


@post("/v1/games/{game_id:str}/commands", status_code=200, summary="Send a command (seat token)")
async def post_command(
    request: Request[Any, Any, Any], game_id: str, data: CommandBody
) -> dict[str, Any]:
    key = request.headers.get("idempotency-key")  # checked by service.hardening
    structlog.contextvars.bind_contextvars(game=game_id, command=str(data.command.get("type"))[:64])
    return await _manifest(request).command(game_id, _token(request), data, key)


@post("/v1/games/{game_id:str}/messages", status_code=200, summary="Table talk (seat token)")
async def post_message(
    request: Request[Any, Any, Any], game_id: str, data: MessageBody
) -> dict[str, Any]:
    structlog.contextvars.bind_contextvars(game=game_id)
    return await _manifest(request).message(game_id, _token(request), data)


# --- history: events, replay, audit, live -------------------------------------------------
def _history(request: Request[Any, Any, Any]) -> History:
    history: History = request.app.state.history
    return history


@get("/v1/games/{game_id:str}/events", summary="The game's events (redacted while it is live)")
async def get_events(
    request: Request[Any, Any, Any],
    game_id: str,
    after: int = Parameter(default=0, ge=0, le=2**31 - 1),  # versions are int4 in PostgreSQL
    limit: int = Parameter(default=100, ge=1, le=1000),
) -> dict[str, Any]:
    check_game_id(game_id)
    return await _history(request).events(game_id, _token(request), after, limit)


@get("/v1/games/{game_id:str}/replay/{n:int}", summary="The view after event n")
async def get_replay_at(request: Request[Any, Any, Any], game_id: str, n: int) -> dict[str, Any]:
    check_game_id(game_id)
    return await _history(request).replay(game_id, _token(request), n)


@get("/v1/games/{game_id:str}/replay", summary="The whole game as NDJSON, one line per event")
async def get_replay(request: Request[Any, Any, Any], game_id: str) -> Stream:
    check_game_id(game_id)
    lines = _history(request).replay_lines(game_id, _token(request))
    first = await anext(lines, None)  # errors (unknown game, bad token) before the 200 starts

    async def body() -> AsyncIterator[bytes]:
        if first is not None:
            yield first
            async for line in lines:
                yield line

    return Stream(body(), media_type="application/x-ndjson")


@get("/v1/games/{game_id:str}/audit", summary="Verify the chain, re-adjudicate, check the seed")
async def get_audit(request: Request[Any, Any, Any], game_id: str) -> Response[bytes]:
    check_game_id(game_id)
    audits: AuditCache = request.app.state.audits
    etag, fingerprint, unrecorded = await audits.state(game_id)
    headers = {"etag": etag, "cache-control": "no-cache"}
    sent = request.headers.get("if-none-match", "")
    if sent.strip() == "*" or etag in (t.strip().removeprefix("W/") for t in sent.split(",")):
        return Response(content=b"", status_code=304, headers=headers)
    body = await audits.report(game_id, fingerprint, unrecorded)
    return Response(content=body, media_type=JSON, headers=headers)


@get("/v1/games/{game_id:str}/audit/{n:int}", summary="The dispute file of event n")
async def get_dispute(request: Request[Any, Any, Any], game_id: str, n: int) -> dict[str, Any]:
    check_game_id(game_id)
    return await _history(request).dispute(game_id, n, _token(request))


@get(
    "/v1/games/{game_id:str}/export",
    summary="The whole game as one file for `manifest verify` (redacted for the caller)",
)
async def get_export(request: Request[Any, Any, Any], game_id: str) -> Response[bytes]:
    check_game_id(game_id)
    exported = await _history(request).export(game_id, _token(request))
    return _raw(encode_export(exported))  # hashes and seed in hex, as everywhere in the API


@get("/v1/games/{game_id:str}/stream", summary="Server-Sent Events: the caller's view on change")
async def get_stream(request: Request[Any, Any, Any], game_id: str) -> ServerSentEvent:
    check_game_id(game_id)
    history = _history(request)
    await history.manifest.viewer(game_id, _token(request))  # 401/403 before streaming
    await history.manifest.game_document(game_id, _token(request))  # 404 before streaming
    docs = history.changes(game_id, _token(request))
    first = await anext(docs)  # subscribed (Redis failing: 503) before the 200 starts

    async def changes() -> AsyncIterator[ServerSentEventMessage]:
        doc: bytes | None = first
        while doc is not None:
            version = msgspec.json.decode(doc)["version"]
            yield ServerSentEventMessage(data=doc.decode(), event="change", id=version)
            doc = await anext(docs, None)

    return ServerSentEvent(changes())


@get("/v1/keys", summary="The server's public key(s) for checking receipts")
async def keys(request: Request[Any, Any, Any]) -> dict[str, Any]:
    manifest = _manifest(request)
    return {"keys": await published_keys(manifest.store.pool, manifest.signer)}


# --- operations ------------------------------------------------------------------------------
@get("/healthz", summary="The process is up", include_in_schema=False)
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@get("/readyz", summary="PostgreSQL and Redis answer", include_in_schema=False)
async def readyz(request: Request[Any, Any, Any]) -> Response[Any]:
    ok, checks = await readiness(_manifest(request), request.app.state.settings.projection_lag)
    return Response(
        content={"status": "ready" if ok else "unavailable", "checks": checks},
        status_code=200 if ok else 503,
    )


@get("/metrics", summary="Prometheus metrics", include_in_schema=False)
async def metrics() -> Response[bytes]:
    body, content_type = metrics_body()
    return Response(content=body, media_type=content_type)


# --- errors as problem documents -------------------------------------------------------------
def _problem_response(problem: Problem, request: Request[Any, Any, Any]) -> Response[bytes]:
    return Response(
        content=problem.body(instance=request.url.path),
        status_code=problem.status,
        media_type=PROBLEM_JSON,
        headers=problem.headers or None,
    )


def on_problem(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    if not isinstance(exc, Problem):
        raise exc
    return _problem_response(exc, request)


def on_http_error(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    if not isinstance(exc, HTTPException):
        raise exc
    status = exc.status_code
    if isinstance(exc, ValidationException) or status == 400:
        problem = Problem(400, "request.invalid", _detail(exc))
    elif status == 413:
        problem = Problem(413, "request.too_large", "the request body is too large")
    elif status == 404:
        problem = Problem(404, "http.not_found", "no such endpoint")
    elif status == 405:
        allowed = _allowed_methods(request)
        problem = Problem(405, "http.method_not_allowed", "this endpoint does not take that method")
        response = _problem_response(problem, request)
        if allowed:
            response.headers["allow"] = ", ".join(allowed)
        return response
    else:
        problem = Problem(status, f"http.{status}", str(exc.detail))
    return _problem_response(problem, request)


_ROUTE_PATTERNS: dict[str, re.Pattern[str]] = {}


def _allowed_methods(request: Request[Any, Any, Any]) -> list[str]:
    """The methods the route at this path takes (for ``Allow`` on a 405)."""
    path = request.url.path
    for candidate in request.app.routes:
        template = candidate.path_format
        pattern = _ROUTE_PATTERNS.get(template)
        if pattern is None:
            pattern = re.compile("^" + re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(template)) + "$")
            _ROUTE_PATTERNS[template] = pattern
        methods = getattr(candidate, "methods", None)
        if methods and pattern.match(path):
            return sorted(methods)
    return []


def _detail(exc: HTTPException) -> str:
    extra = exc.extra
    if isinstance(extra, list) and extra:
        parts = [
            f"{e.get('key') or 'body'}: {e.get('message')}" for e in extra if isinstance(e, dict)
        ]
        if parts:
            return "; ".join(parts)
    return str(exc.detail) or "the request is not valid"


def on_not_found(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    return _problem_response(Problem(404, "game.not_found", "no such game"), request)


def on_unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    kind = "read" if request.method in ("GET", "HEAD") else "write"
    manifest = getattr(request.app.state, "manifest", None)
    problem = None if manifest is None else manifest.faults.problem(exc, kind)
    if problem is not None:  # a dependency failed: 503 with Retry-After (service.faults)
        log.warning("dependency failure", path=request.url.path, error=repr(exc))
        return _problem_response(problem, request)
    log.exception("unhandled error", path=request.url.path)
    detail = (
        "the server failed; a command sent may have been recorded: "
        "resend it with the same Idempotency-Key"
    )
    return _problem_response(Problem(500, "server.error", detail), request)


# --- the application -------------------------------------------------------------------------
async def build_manifest(settings: Settings) -> tuple[Manifest, Any, ProjectionStore]:
    """Connect, migrate and assemble the application (used by the app and the CLI)."""
    if not settings.pg_dsn:
        raise RuntimeError("PG_DSN is resolved before the app starts")
    raw_pool = await asyncpg.create_pool(
        settings.pg_dsn,
        min_size=2,
        max_size=settings.pg_pool,
        timeout=settings.pg_connect_timeout,
        command_timeout=settings.pg_statement_timeout + 1,  # the server's own limit comes first
        server_settings=pg_session_settings(settings),
        reset=_keep_session,
    )
    async with raw_pool.acquire() as conn:
        await conn.execute("SET statement_timeout = 0")  # migrations may take their time
        await migrate(conn, settings.migrations)
        await conn.execute("RESET statement_timeout")
    pool = BoundedPool(raw_pool, settings.pg_acquire_timeout)
    projections: ProjectionStore = (
        RedisStore.from_url(
            settings.redis_url,
            settings.redis_prefix,
            connect_timeout=settings.redis_connect_timeout,
            timeout=settings.redis_timeout,
            cluster=settings.redis_cluster,
        )
        if settings.redis_url
        else MemoryStore()
    )
    # The replica's pool opens no connection up front: an unreachable replica does not stop the
    # server, history reads fall back to the primary (EventStore.read_history).
    read_pool = (
        await asyncpg.create_pool(
            settings.pg_read_dsn,
            min_size=0,
            max_size=settings.pg_pool,
            timeout=settings.pg_connect_timeout,  # a replica that does not answer is skipped
            command_timeout=30,
        )
        if settings.pg_read_dsn
        else None
    )
    store = EventStore(pool, read_pool=read_pool)
    projector = Projector(
        projections,
        lambda game_id, after: store.read(game_id, after=after),
        retries=settings.projection_retries,
    )
    try:
        signer = await load_signer(pool, settings.signing_key, source=settings.signing_key_source)
    except BaseException:
        await store.close_replica()
        await pool.close()
        raise
    manifest = Manifest(
        store,
        projector,
        signer,
        faults=Faults(settings.retry_after),
        admission=Admission(settings.game_writers),
    )
    manifest.rejected_cap = settings.rejected_cap
    return manifest, pool, projections


async def _keep_session(connection: Any) -> None:
    """The pool's reset between uses. The default (unlisten, reset settings, release advisory
    locks, close cursors) costs a round trip per release, and nothing here leaves such state:
    the only advisory lock (migrations) is released by ``migrate`` itself."""


def create_app(settings: Settings | None = None) -> Litestar:
    settings = settings or Settings.from_env()
    configure_logging(settings.log_level)

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        manifest, pool, projections = await build_manifest(settings)
        app.state.manifest = manifest
        app.state.settings = settings
        app.state.history = History.of(manifest)
        app.state.audits = AuditCache(
            app.state.history, settings.audit_cache, settings.rejected_cap
        )
        stop = asyncio.Event()
        worker = asyncio.create_task(
            manifest.projector.run_worker(
                manifest.store.game_versions, settings.catchup_seconds, stop
            )
        )
        try:
            yield
        finally:
            stop.set()
            await worker
            await manifest.projector.drain(timeout=2 * settings.redis_timeout)
            await projections.close()
            await manifest.store.close_replica()
            await pool.close()

    def middleware(app: Any) -> Any:
        return RequestLogMiddleware(app, access_log=settings.access_log)

    quotas = Quotas(
        {
            "create": settings.quota_create,
            "commands": settings.quota_commands,
            "messages": settings.quota_messages,
            "queries": settings.quota_queries,
            "audit": settings.quota_audit,
            "reads": settings.quota_reads,
        }
    )

    def quota(app: Any) -> Any:
        def known(scope: Any, token: str) -> bool:
            manifest: Manifest | None = getattr(scope["app"].state, "manifest", None)
            return manifest is not None and manifest.knows_token(token)

        return QuotaMiddleware(app, quotas, known)

    def hardening(app: Any) -> Any:
        return HardeningMiddleware(app, max_json_depth=settings.max_json_depth)

    app = Litestar(
        route_handlers=[
            games_options,  # first: see its docstring
            rules,
            get_asset,
            create_game,
            list_games,
            join_game,
            start_game,
            get_game,
            get_legal,
            post_command,
            post_message,
            post_query,
            delete_seat,
            get_events,
            get_replay_at,
            get_replay,
            get_audit,
            get_dispute,
            get_export,
            get_stream,
            keys,
            healthz,
            readyz,
            metrics,
            *pictures.ROUTES,
        ],
        before_request=pictures.negotiate,
        lifespan=[lifespan],
        middleware=[middleware, quota, hardening],
        request_max_body_size=settings.max_body,
        exception_handlers={
            Problem: on_problem,
            HTTPException: on_http_error,
            GameNotFound: on_not_found,
            Exception: on_unexpected,
        },
        openapi_config=OpenAPIConfig(
            title="Manifest",
            version="1",
            description="Event-sourced server for four cargo board games. See shared/API.md.",
            path="/schema",
            render_plugins=[SwaggerRenderPlugin()],
        ),
        debug=False,
    )
    openapi.install(app)
    return app
