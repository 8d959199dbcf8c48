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

from litestar import Litestar
from litestar.openapi import OpenAPIConfig

from service.application.clocks import ClockFirer
from service.application.names import load_confusables
from service.bootstrap import build_manifest
from service.collector import tune_collector
from service.http import apidocs, openapi, pictures
from service.http.errors import exception_handlers
from service.http.hardening import HardeningMiddleware
from service.http.limits import QuotaMiddleware, Quotas
from service.http.routes import ROUTES
from service.http.services import Services
from service.observability import RequestLogMiddleware, configure_logging, configure_metrics
from service.settings import Settings


def create_app(settings: Settings | None = None) -> Litestar:
    settings = settings or Settings.from_env()
    configure_logging(settings.log_level)
    configure_metrics(settings.metrics_dir)  # several workers: /metrics sums them all
    tune_collector(settings.gc_threshold)  # each worker builds its app: once per process
    load_confusables()  # the player-name table, read before the loop serves anything

    services = Services(settings)

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        manifest, store, projections = await build_manifest(settings)
        services.start(manifest)
        stop = asyncio.Event()
        worker = asyncio.create_task(
            manifest.projector.run_worker(
                manifest.store.game_versions, settings.catchup_seconds, stop
            )
        )
        firer = ClockFirer(  # this instance's turn-clock deadlines (MANIFEST_CLOCK_*)
            manifest.clocks,
            tick=settings.clock_tick,
            lease=settings.clock_lease,
            batch=settings.clock_batch,
        )
        firing = asyncio.create_task(firer.run(stop))
        try:
            yield
        finally:
            stop.set()
            await worker
            await firing
            await manifest.projector.drain(timeout=2 * settings.redis_timeout)
            await projections.close()
            await store.close()

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
        },
        per_address={
            "commands": settings.quota_commands_per_address,
            "messages": settings.quota_messages_per_address,
            "queries": settings.quota_queries_per_address,
            "streams": settings.quota_streams_per_address,
        },
    )

    def quota(app: Any) -> Any:
        def known(scope: Any, token: str) -> bool:
            manifest = services.started
            return manifest is not None and manifest.seats.knows_token(token)

        return QuotaMiddleware(app, quotas, known)

    def hardening(app: Any) -> Any:
        return HardeningMiddleware(app, max_json_depth=settings.max_json_depth)

    app = Litestar(
        route_handlers=[*ROUTES, *pictures.ROUTES, *apidocs.ROUTES],
        dependencies=services.dependencies(),
        before_request=pictures.negotiator(services),
        lifespan=[lifespan],
        middleware=[quota, hardening],
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
    # Outermost, around the router and its exception handler: every answer is observed as sent
    # (the status logged and counted, X-Request-Id), also one no route's middleware sends.
    app.asgi_handler = RequestLogMiddleware(app.asgi_handler, access_log=settings.access_log)
    return app
