"""Board pictures over HTTP, and the viewer page's static files.

* ``GET /v1/games/{id}/board.svg`` — the caller's view now, drawn by the game
  (``Game.svg``; seat token optional, as for ``GET /v1/games/{id}``).
* ``GET /v1/games/{id}/replay/{n}/board.svg`` — the caller's view after event ``n``.
* ``GET /v1/games/{id}`` and ``GET /v1/games/{id}/replay/{n}`` answer the same pictures when
  the ``Accept`` header prefers ``image/svg+xml`` to ``application/json`` (:func:`negotiator`, a
  ``before_request`` hook, so those handlers stay as they are).

* ``/viewer/`` — the replay and audit viewer (``service/http/static/viewer``: plain files and
  JavaScript modules, no build step, nothing from elsewhere).

A picture shows exactly the view the JSON would: hidden things stay hidden.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import msgspec
from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.params import FromPath, QueryParameter
from litestar.static_files import create_static_files_router

from domain.kernel import decoder
from domain.kernel.svg import SVG_MEDIA_TYPE, Players, notice
from domain.platform.table import GameDocument
from domain.registry import get_game
from service.application.gameplay import Manifest
from service.application.history import History
from service.http.services import Services, token_of
from service.problems import Problem

VIEWER_DIR = Path(__file__).parent / "static" / "viewer"
_JSON = "application/json"
_GAME_PATH = "/v1/games/{game_id:str}"
_REPLAY_PATH = "/v1/games/{game_id:str}/replay/{n:int}"


def picture(
    game: str,
    view: Any,
    status: str,
    names: Sequence[str | None] = (),
    load: str | None = None,
) -> str:
    """The SVG of one typed view of a ``game`` (its ``view_type``), its players called by their
    ``names`` (by seat), with ``load``'s supply cities marked when given; a notice while the
    game has no board yet. An unknown ``load`` is a 422 (``picture.unknown_load``)."""
    rules = get_game(game)
    if load is not None and load not in rules.picture_loads:
        raise Problem(
            422,
            "picture.unknown_load",
            f"{rules.title} pictures mark no load {load!r}"
            + (
                f"; its loads: {', '.join(sorted(rules.picture_loads))}"
                if rules.picture_loads
                else ""
            ),
        )
    if view is None:
        return notice(rules.title, "waiting for players" if status == "open" else "no board")
    svg = rules.svg(view, Players(tuple(names)), load)
    if svg is None:
        raise Problem(406, "picture.unavailable", f"{game} has no board picture yet")
    return svg


def _svg(body: str) -> Response[bytes]:
    return Response(
        content=body.encode(),
        media_type=SVG_MEDIA_TYPE,
        headers={"vary": "Accept", "cache-control": "no-cache"},
    )


class _Head(msgspec.Struct):
    """What a stored game document says of its game, before its view is read as a type."""

    game: str


def read_document(raw: bytes) -> GameDocument[Any]:
    """A stored game document (JSON) with its view typed: the game's ``view_type``."""
    game = msgspec.json.decode(raw, type=_Head).game
    generic: Any = GameDocument
    document: GameDocument[Any] = decoder(generic[get_game(game).view_type]).decode(raw)
    return document


async def _board_now(
    manifest: Manifest, game_id: str, token: str | None, load: str | None = None
) -> Response[bytes]:
    doc = read_document(await manifest.documents.game_document(game_id, token))
    names = [s.name for s in sorted(doc.seats, key=lambda s: s.seat)]
    return _svg(picture(doc.game, doc.view, doc.status, names, load))


async def _board_at(
    history: History, game_id: str, n: int, token: str | None, load: str | None = None
) -> Response[bytes]:
    doc = await history.replay(game_id, token, n)
    row = await history.store.get_game(game_id)
    if row is None:
        raise Problem(404, "game.not_found", f"no game {game_id}")
    return _svg(picture(row.game, doc.view, doc.status, row.players, load))


#: The ``load`` query parameter of the picture endpoints.
_LOAD_DOC = (
    "Empire Builder: a load (e.g. Coal) whose supply cities the picture marks, as the manual "
    "shows when a load is clicked; a name that is no load of the game is a 422 "
    "(picture.unknown_load)"
)


@get(
    "/v1/games/{game_id:str}/board.svg",
    summary="The board as the caller may see it, as SVG (seat token optional)",
    media_type=SVG_MEDIA_TYPE,
)
async def board_svg(
    game_id: FromPath[str],
    manifest: NamedDependency[Manifest],
    request: Request[Any, Any, Any],
    load: Annotated[str | None, QueryParameter(name="load", description=_LOAD_DOC)] = None,
) -> Response[bytes]:
    return await _board_now(manifest, game_id, token_of(request), load)


@get(
    "/v1/games/{game_id:str}/replay/{n:int}/board.svg",
    summary="The board after event n as the caller may see it, as SVG",
    media_type=SVG_MEDIA_TYPE,
)
async def replay_svg(
    game_id: FromPath[str],
    n: FromPath[int],
    history: NamedDependency[History],
    request: Request[Any, Any, Any],
    load: Annotated[str | None, QueryParameter(name="load", description=_LOAD_DOC)] = None,
) -> Response[bytes]:
    return await _board_at(history, game_id, n, token_of(request), load)


def wants_svg(accept: str | None) -> bool:
    """Whether an ``Accept`` header prefers an SVG picture to JSON (a tie goes to JSON)."""
    if not accept or "image/" not in accept:
        return False
    best, best_q = _JSON, _quality(accept, _JSON)
    q = _quality(accept, SVG_MEDIA_TYPE)
    if q > best_q:
        best = SVG_MEDIA_TYPE
    return best == SVG_MEDIA_TYPE


def _quality(accept: str, media: str) -> float:
    """The q-value ``accept`` gives ``media``: the most specific matching range wins."""
    kind = media.split("/", 1)[0]
    found: tuple[int, float] = (-1, 0.0)
    for item in accept.split(","):
        parts = [p.strip() for p in item.split(";")]
        rng = parts[0].lower()
        q = 1.0
        for param in parts[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = min(1.0, max(0.0, float(value)))
                except ValueError:
                    q = 0.0
        specificity = 2 if rng == media else 1 if rng == f"{kind}/*" else 0 if rng == "*/*" else -1
        if specificity > found[0]:
            found = (specificity, q)
    return found[1]


def negotiator(services: Services) -> Callable[[Request[Any, Any, Any]], Awaitable[Any]]:
    """The ``before_request`` hook of an app: answer the picture for ``GET /v1/games/{id}``
    and ``/replay/{n}`` when the client asks for SVG; None lets the JSON handler run. (Hooks
    get no injected parameters: this one reads the app's :class:`Services`.)"""

    async def negotiate(request: Request[Any, Any, Any]) -> Response[bytes] | None:
        if request.method != "GET" or not wants_svg(request.headers.get("accept")):
            return None
        paths = request.route_handler.paths
        params = request.path_params
        token = token_of(request)
        if _GAME_PATH in paths:
            return await _board_now(services.manifest(), params["game_id"], token)
        if _REPLAY_PATH in paths:
            return await _board_at(services.history(), params["game_id"], params["n"], token)
        return None

    return negotiate


#: Everything this module serves; ``service.http.app`` adds it to its route handlers.
ROUTES: list[Any] = [
    board_svg,
    replay_svg,
    create_static_files_router(
        path="/viewer",
        directories=[VIEWER_DIR],
        html_mode=True,
        include_in_schema=False,
        name="viewer",
    ),
]
