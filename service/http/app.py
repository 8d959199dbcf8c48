"""The HTTP API (``docs/api.md``) as one litestar app: the routes
(:mod:`service.http.routes`, :mod:`service.http.pictures`), the application objects they are
given (:mod:`service.http.services`, built by the lifespan), the middleware (access log, quotas,
input hardening), problem JSON for every error (:mod:`service.http.errors`), and the OpenAPI
document at ``/schema`` (:mod:`service.http.openapi`) with its page
(:mod:`service.http.apidocs`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg  # type: ignore[import-untyped]
from litestar import Litestar
from litestar.openapi import OpenAPIConfig

from projections.projector import Projector
from projections.redis_store import RedisStore
from projections.store import MemoryStore, ProjectionStore
from service.application.faults import Admission, BoundedPool, Faults, pg_session_settings
from service.application.gameplay import Manifest
from service.application.names import load_confusables
from service.audit.receipts import load_signer
from service.collector import tune_collector
from service.eventstore.migrate import migrate
from service.eventstore.primary import PrimaryConnector
from service.eventstore.rejections import Budget
from service.eventstore.store import EventStore
from service.http import apidocs, openapi, pictures
from service.http.errors import exception_handlers
from service.http.hardening import HardeningMiddleware
from service.http.limits import QuotaMiddleware, Quotas
from service.http.routes import ROUTES
from service.http.services import Services
from service.observability import RequestLogMiddleware, configure_logging, configure_metrics
from service.settings import Settings


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
        connect=PrimaryConnector(settings.pg_dsn),  # several hosts: the one that takes writes
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
            heartbeat=settings.stream_heartbeat,
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
    store = EventStore(pool, read_pool=read_pool, append_batch=settings.pg_append_batch)
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
    manifest.refusal_body_prefix = settings.refusal_body_prefix
    manifest.refusal_budget = Budget(settings.refusals_per_client, settings.refusal_bytes)
    return manifest, pool, projections


async def _keep_session(connection: Any) -> None:
    """The pool's reset between uses. The default (unlisten, reset settings, release advisory
    locks, close cursors) costs a round trip per release, and nothing here leaves such state:
    the only advisory lock (migrations) is released by ``migrate`` itself."""


def create_app(settings: Settings | None = None) -> Litestar:
    settings = settings or Settings.from_env()
    configure_logging(settings.log_level)
    configure_metrics(settings.metrics_dir)  # several workers: /metrics sums them all
    tune_collector(settings.gc_threshold)  # each worker builds its app: once per process
    load_confusables()  # the player-name table, read before the loop serves anything

    services = Services(settings)

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        manifest, pool, projections = await build_manifest(settings)
        services.start(manifest)
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
            "heavy": settings.quota_heavy,
            "reads": settings.quota_reads,
            "streams": settings.quota_streams,
        }
    )

    def quota(app: Any) -> Any:
        def known(scope: Any, token: str) -> bool:
            manifest = services.started
            return manifest is not None and manifest.knows_token(token)

        return QuotaMiddleware(app, quotas, known)

    def hardening(app: Any) -> Any:
        return HardeningMiddleware(app, max_json_depth=settings.max_json_depth)

    app = Litestar(
        route_handlers=[*ROUTES, *pictures.ROUTES, *apidocs.ROUTES],
        dependencies=services.dependencies(),
        before_request=pictures.negotiator(services),
        lifespan=[lifespan],
        middleware=[middleware, quota, hardening],
        request_max_body_size=settings.max_body,
        exception_handlers=exception_handlers(services),
        openapi_config=OpenAPIConfig(
            title="Manifest",
            version="1",
            description="Event-sourced server for four cargo board games. See docs/api.md.",
            path=apidocs.DOCS_PATH,
            render_plugins=[apidocs.OfflineSwagger()],
        ),
        debug=False,
    )
    openapi.install(app)
    return app
