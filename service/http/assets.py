"""``GET /v1/rules/{game}/assets/{name}``: a game's static data (``Game.assets``), served
with a strong ``ETag`` (the hex SHA-256 of the bytes, the hash views refer to) so a client
downloads it once; ``If-None-Match`` with that tag answers 304 without a body."""

from __future__ import annotations

import hashlib
from functools import cache
from typing import Any

from litestar import Request, Response, get
from litestar.params import FromPath

from domain.kernel import UnknownGame
from domain.registry import all_games, get_game
from service.problems import Problem


@cache
def _etag(game: str, name: str) -> str:
    return '"' + hashlib.sha256(get_game(game).assets[name]).hexdigest() + '"'


#: Every game's assets, named in the OpenAPI (``GET /v1/rules`` lists them per game too).
DESCRIPTION = (
    "A game's static data as JSON, the bytes of its data file, with a strong ETag (the hex "
    "SHA-256 of the body); If-None-Match with it answers 304. Assets: "
    + "; ".join(f"{g.id}: {', '.join(sorted(g.assets)) or 'none'}" for g in all_games())
    + ". Empire Builder's `loads` lists each load with its chips and supply cities, `demands` "
    "the demand cards (three [city, load, payoff] demands each), `events` the event cards by "
    "`kind`. See docs/api.md."
)


@get(
    "/v1/rules/{game:str}/assets/{name:str}",
    summary="A game's static data (map, components, cards), cacheable by its ETag",
    description=DESCRIPTION,
)
async def get_asset(
    request: Request[Any, Any, Any], game: FromPath[str], name: FromPath[str]
) -> Response[bytes]:
    try:
        rules = get_game(game)
    except UnknownGame:
        raise Problem(404, "asset.not_found", f"no game {game!r}; see /v1/rules") from None
    body = rules.assets.get(name)
    if body is None:
        raise Problem(404, "asset.not_found", f"{game} has no asset {name!r}")
    etag = _etag(game, name)
    headers = {"ETag": etag, "Cache-Control": "public, max-age=86400"}
    wanted = request.headers.get("if-none-match", "")
    if etag in [t.strip() for t in wanted.split(",")] or wanted.strip() == "*":
        return Response(content=b"", status_code=304, headers=headers)
    return Response(content=body, status_code=200, media_type="application/json", headers=headers)
