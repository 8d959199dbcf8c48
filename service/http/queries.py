"""``POST /v1/games/{id}/queries``: a question answered from the game's current state, with
nothing appended (:mod:`service.application.queries`)."""

from __future__ import annotations

from typing import Any

import structlog
from litestar import Request, post

from service.application.gameplay import Manifest
from service.application.queries import QueryBody
from service.application.tokens import bearer


@post(
    "/v1/games/{game_id:str}/queries",
    status_code=200,
    summary="Ask a question about the current state (nothing is appended)",
)
async def post_query(
    request: Request[Any, Any, Any], game_id: str, data: QueryBody
) -> dict[str, Any]:
    structlog.contextvars.bind_contextvars(game=game_id, query=str(data.query.get("type"))[:64])
    manifest: Manifest = request.app.state.manifest
    return await manifest.query(game_id, bearer(request.headers.get("authorization")), data)
