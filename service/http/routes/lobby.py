"""Games: create, list, join, start, and remove a joined player before the start."""

from __future__ import annotations

from typing import Any

import structlog
from litestar import Request, Response, delete, get, post, route
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery, JSONBody, Parameter

from service.application.bodies import CreateGame, JoinGame
from service.application.gameplay import Manifest
from service.http.errors import allowed_methods
from service.http.schemas import CreatedGame, GameList, Joined, SeatRemoved, Started
from service.http.services import token_of
from service.problems import Problem


@post("/v1/games", status_code=201, summary="Create a game (with players: started at once)")
async def create_game(
    data: JSONBody[CreateGame], manifest: NamedDependency[Manifest], request: Request[Any, Any, Any]
) -> Response[CreatedGame]:
    structlog.contextvars.bind_contextvars(game_type=data.game)
    created = await manifest.lobby.create(data, token_of(request))  # a player key: seated
    return Response(
        content=created, status_code=201, headers={"location": f"/v1/games/{created.id}"}
    )


@get("/v1/games", summary="List games, newest first (keyset pages: pass back `next`)")
async def list_games(
    manifest: NamedDependency[Manifest],
    status: FromQuery[str | None] = None,
    game: FromQuery[str | None] = None,
    limit: int = Parameter(default=50, ge=1, le=200),
    cursor: FromQuery[str | None] = None,
) -> GameList:
    if status is not None and status not in ("open", "active", "finished"):
        raise Problem(400, "request.bad_status", "status is open, active or finished")
    return await manifest.lobby.list_games(status, game, limit, cursor)


@post("/v1/games/{game_id:str}/join", status_code=200, summary="Take a seat with the invite code")
async def join_game(
    game_id: FromPath[str],
    data: JSONBody[JoinGame],
    manifest: NamedDependency[Manifest],
    request: Request[Any, Any, Any],
) -> Joined:
    structlog.contextvars.bind_contextvars(game=game_id)
    return await manifest.lobby.join(game_id, data, token_of(request))  # a player key: bound


@post("/v1/games/{game_id:str}/start", status_code=200, summary="Start a full game (host token)")
async def start_game(
    game_id: FromPath[str], manifest: NamedDependency[Manifest], request: Request[Any, Any, Any]
) -> Started:
    structlog.contextvars.bind_contextvars(game=game_id)
    return await manifest.lobby.start(game_id, token_of(request))


@delete(
    "/v1/games/{game_id:str}/seats/{seat:int}",
    status_code=200,
    summary="Remove a joined player before the start (host token)",
)
async def delete_seat(
    game_id: FromPath[str],
    seat: FromPath[int],
    manifest: NamedDependency[Manifest],
    request: Request[Any, Any, Any],
) -> SeatRemoved:
    """The seat reopens and the removed player's token stops working
    (``Lobby.remove_seat``)."""
    structlog.contextvars.bind_contextvars(game=game_id)
    return await manifest.lobby.remove_seat(game_id, token_of(request), seat)


@route("/v1/games", http_method=["OPTIONS"], include_in_schema=False, status_code=204)
async def games_options(request: Request[Any, Any, Any]) -> Response[None]:
    """litestar's automatic OPTIONS answer names only the methods of the first handler on a
    path; /v1/games has two (list and create), so it gets this one, with the true ``Allow``."""
    return Response(
        content=None, status_code=204, headers={"allow": ", ".join(allowed_methods(request))}
    )


ROUTES: list[Any] = [
    games_options,  # first: see its docstring
    create_game,
    list_games,
    join_game,
    start_game,
    delete_seat,
]
