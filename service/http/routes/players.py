"""Players (docs/api.md, "Players"): create one (its first key, shown once), its keys (make one
with fewer scopes, list, revoke) and its games, the most urgent first."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, delete, get, post, route
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery, JSONBody, Parameter

from service.application.gameplay import Manifest
from service.application.players import (
    CreatedKey,
    CreatedPlayer,
    KeyInfo,
    KeyList,
    MyGames,
    NewKey,
    NewPlayer,
)
from service.http.errors import allowed_methods
from service.http.services import token_of
from service.problems import Problem


@post("/v1/players", status_code=201, summary="Create a player (its first key: shown once)")
async def create_player(
    data: JSONBody[NewPlayer], manifest: NamedDependency[Manifest]
) -> Response[CreatedPlayer]:
    created = await manifest.players.create(data)
    return Response(content=created, status_code=201)


@post("/v1/me/keys", status_code=201, summary="Make a further key with fewer scopes (keys scope)")
async def create_key(
    data: JSONBody[NewKey], manifest: NamedDependency[Manifest], request: Request[Any, Any, Any]
) -> Response[CreatedKey]:
    created = await manifest.players.add_key(token_of(request), data)
    return Response(content=created, status_code=201)


@get("/v1/me/keys", summary="The player's keys, revoked ones too (keys scope)")
async def list_keys(
    manifest: NamedDependency[Manifest], request: Request[Any, Any, Any]
) -> KeyList:
    return await manifest.players.keys(token_of(request))


@delete("/v1/me/keys/{key_id:str}", status_code=200, summary="Revoke a key (keys scope)")
async def revoke_key(
    key_id: FromPath[str], manifest: NamedDependency[Manifest], request: Request[Any, Any, Any]
) -> KeyInfo:
    return await manifest.players.revoke(token_of(request), key_id)


@get("/v1/me/games", summary="The player's games, the most urgent first (read scope)")
async def my_games(
    manifest: NamedDependency[Manifest],
    request: Request[Any, Any, Any],
    status: FromQuery[str | None] = None,
    limit: int = Parameter(default=50, ge=1, le=200),
    cursor: FromQuery[str | None] = None,
) -> MyGames:
    if status is not None and status not in ("open", "active", "finished"):
        raise Problem(400, "request.bad_status", "status is open, active or finished")
    return await manifest.players.games(token_of(request), status, limit, cursor)


@route("/v1/me/keys", http_method=["OPTIONS"], include_in_schema=False, status_code=204)
async def keys_options(request: Request[Any, Any, Any]) -> Response[None]:
    """As ``lobby.games_options``: /v1/me/keys has two handlers (make, list), so the true
    ``Allow`` is this one's."""
    return Response(
        content=None, status_code=204, headers={"allow": ", ".join(allowed_methods(request))}
    )


#: ``keys_options`` first (it must precede the others on its path).
ROUTES: list[Any] = [keys_options, create_player, create_key, list_keys, revoke_key, my_games]
