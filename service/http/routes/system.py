"""The catalogue (``GET /v1/rules``, a game's static assets) and operations: ``/healthz``,
``/readyz`` and ``/metrics`` (the last three left out of the OpenAPI document)."""

from __future__ import annotations

from typing import Any

from litestar import Response, get
from litestar.di import NamedDependency

from domain.registry import all_games
from service.application.gameplay import Manifest
from service.http.assets import get_asset
from service.http.readiness import readiness
from service.http.schemas import Health, Readiness, RuleEntry
from service.observability import metrics_body
from service.settings import Settings


@get("/v1/rules", summary="Every game this server hosts, with its options and position schemas")
async def rules() -> list[RuleEntry]:
    return [
        RuleEntry(
            game=g.id,
            title=g.title,
            min_seats=g.min_seats,
            max_seats=g.max_seats,
            playable=True,  # every registered game is (docs/api.md)
            options=g.options_schema(),
            position=g.position_schema(),
            commands=g.command_schema(),
            assets=sorted(g.assets),
        )
        for g in all_games()
    ]


@get("/healthz", summary="The process is up", include_in_schema=False)
async def healthz() -> Health:
    return Health(status="ok")


@get("/readyz", summary="PostgreSQL and Redis answer", include_in_schema=False)
async def readyz(
    manifest: NamedDependency[Manifest], settings: NamedDependency[Settings]
) -> Response[Readiness]:
    ok, checks = await readiness(manifest, settings.projection_lag)
    return Response(
        content=Readiness(status="ready" if ok else "unavailable", checks=checks),
        status_code=200 if ok else 503,
        headers=None if ok else {"Retry-After": str(settings.retry_after)},
    )


@get("/metrics", summary="Prometheus metrics", include_in_schema=False)
async def metrics() -> Response[bytes]:
    body, content_type = metrics_body()
    return Response(content=body, media_type=content_type)


ROUTES: list[Any] = [rules, get_asset, healthz, readyz, metrics]
