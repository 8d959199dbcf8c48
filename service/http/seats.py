"""``DELETE /v1/games/{id}/seats/{n}`` (host token): remove a joined player before the start;
the seat reopens and the removed player's token stops working (``Manifest.remove_seat``)."""

from __future__ import annotations

from typing import Any

import structlog
from litestar import Request, delete

from service.application.gameplay import Manifest
from service.application.tokens import bearer


@delete("/v1/games/{game_id:str}/seats/{seat:int}", status_code=200,
        summary="Remove a joined player before the start (host token)")
async def delete_seat(request: Request[Any, Any, Any], game_id: str, seat: int) -> dict[str, Any]:
    structlog.contextvars.bind_contextvars(game=game_id)
    manifest: Manifest = request.app.state.manifest
    return await manifest.remove_seat(game_id, bearer(request.headers.get("authorization")), seat)
