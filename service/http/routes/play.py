"""A game now: its document and the caller's legal commands (stored bytes from the
projections), commands, table talk and queries."""

from __future__ import annotations

from typing import Any

import structlog
from litestar import Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from service.application.bodies import CommandBody, MessageBody
from service.application.clocks import PresenceBody
from service.application.gameplay import Manifest
from service.application.queries import QueryBody
from service.http.limits import address_key
from service.http.schemas import CommandAnswer, MessageAnswer, QueryAnswer
from service.http.services import token_of

JSON = "application/json"


def stored(body: bytes) -> Response[bytes]:
    """A JSON document stored encoded (a projection's field), sent as it is."""
    return Response(content=body, status_code=200, media_type=JSON)


@get("/v1/games/{game_id:str}", summary="The game as the caller may see it (seat token optional)")
async def get_game(
    game_id: FromPath[str], manifest: NamedDependency[Manifest], request: Request[Any, Any, Any]
) -> Response[bytes]:
    structlog.contextvars.bind_contextvars(game=game_id)
    return stored(await manifest.documents.game_document(game_id, token_of(request)))


@get("/v1/games/{game_id:str}/legal", summary="Every legal command for the caller's seat")
async def get_legal(
    game_id: FromPath[str], manifest: NamedDependency[Manifest], request: Request[Any, Any, Any]
) -> Response[bytes]:
    structlog.contextvars.bind_contextvars(game=game_id)
    return stored(await manifest.documents.legal_document(game_id, token_of(request)))


@post("/v1/games/{game_id:str}/commands", status_code=200, summary="Send a command (seat token)")
async def post_command(
    request: Request[Any, Any, Any],
    game_id: FromPath[str],
    data: JSONBody[CommandBody],
    manifest: NamedDependency[Manifest],
) -> CommandAnswer:
    key = request.headers.get("idempotency-key")  # checked by service.http.hardening
    structlog.contextvars.bind_contextvars(game=game_id, command=str(data.command.get("type"))[:64])
    # every HTTP refusal is within the storage budgets (a peer with no address: one client)
    client = address_key(request.client.host) if request.client else "?"
    return await manifest.play.command(game_id, token_of(request), data, key, client)


@post("/v1/games/{game_id:str}/messages", status_code=200, summary="Table talk (seat token)")
async def post_message(
    game_id: FromPath[str],
    data: JSONBody[MessageBody],
    manifest: NamedDependency[Manifest],
    request: Request[Any, Any, Any],
) -> MessageAnswer:
    structlog.contextvars.bind_contextvars(game=game_id)
    return await manifest.talk.message(game_id, token_of(request), data)


@post(
    "/v1/games/{game_id:str}/queries",
    status_code=200,
    summary="Ask a question about the current state (nothing is appended)",
)
async def post_query(
    game_id: FromPath[str],
    data: JSONBody[QueryBody],
    manifest: NamedDependency[Manifest],
    request: Request[Any, Any, Any],
) -> QueryAnswer:
    structlog.contextvars.bind_contextvars(game=game_id, query=str(data.query.get("type"))[:64])
    return await manifest.queries.query(game_id, token_of(request), data)


@post(
    "/v1/games/{game_id:str}/presence",
    status_code=200,
    summary="Leave the seat to the bot (away: true) or come back (seat token, clocked games)",
)
async def post_presence(
    game_id: FromPath[str],
    data: JSONBody[PresenceBody],
    manifest: NamedDependency[Manifest],
    request: Request[Any, Any, Any],
) -> MessageAnswer:
    structlog.contextvars.bind_contextvars(game=game_id)
    return await manifest.clocks.presence(game_id, token_of(request), data)


ROUTES: list[Any] = [get_game, get_legal, post_command, post_message, post_query, post_presence]
