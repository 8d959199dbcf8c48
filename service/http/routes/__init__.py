"""The API's routes, one module per thing served (``docs/api.md``):

- :mod:`~service.http.routes.lobby` — games: create, list, join, start, remove a seat;
- :mod:`~service.http.routes.play` — a game now: its document, legal commands, commands,
  table talk, queries;
- :mod:`~service.http.routes.history` — its past: events, replay (one event, all as NDJSON),
  the live stream;
- :mod:`~service.http.routes.audit` — checking it: audit, dispute files, export, the keys;
- :mod:`~service.http.routes.system` — the catalogue (rules, assets) and operations
  (health, readiness, metrics).

Board pictures and the viewer's files are :mod:`service.http.pictures`. Handlers take the
application's objects as parameters (:mod:`service.http.services`) and return the answer
Structs of :mod:`service.http.schemas` (most of them the application's own,
:mod:`service.application.answers`), as the application returns them (or stored bytes).

A ``{game_id}`` in any path is checked once, by :func:`game_id_guard` on the whole app, before
a handler runs: the application takes it as a game id in the one spelling the server issues."""

from __future__ import annotations

from typing import Any

from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler

from service.application.games import check_game_id
from service.http.routes import audit, history, lobby, play, system

#: Every handler, ``lobby`` first (its OPTIONS handler must precede the others on its path).
ROUTES: list[Any] = [*lobby.ROUTES, *play.ROUTES, *history.ROUTES, *audit.ROUTES, *system.ROUTES]


def game_id_guard(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """Every route whose path has ``{game_id}``: 404 ``game.not_found`` unless it is the
    canonical spelling (:func:`~service.application.games.check_game_id`). Installed on the
    app, so a new route cannot forget it."""
    game_id = connection.path_params.get("game_id")
    if game_id is not None:
        check_game_id(game_id)
