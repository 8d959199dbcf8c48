"""The API's routes, one module per thing served (``docs/api.md``):

- :mod:`~service.http.routes.lobby` — games: create, list, join, start, remove a seat;
- :mod:`~service.http.routes.play` — a game now: its document, legal commands, commands,
  table talk, queries;
- :mod:`~service.http.routes.history` — its past: events, replay (one event, all as NDJSON),
  the live stream;
- :mod:`~service.http.routes.audit` — checking it: audit, dispute files, export, the keys;
- :mod:`~service.http.routes.players` — players: create one, its keys, its games;
- :mod:`~service.http.routes.system` — the catalogue (rules, assets) and operations
  (health, readiness, metrics).

Board pictures and the viewer's files are :mod:`service.http.pictures`. Handlers take the
application's objects as parameters (:mod:`service.http.services`) and return the answer
Structs of :mod:`service.http.schemas` (most of them the application's own,
:mod:`service.application.answers`), as the application returns them (or stored bytes).

A ``{game_id}`` in any path is checked once, for every route, by
:class:`~service.http.hardening.HardeningMiddleware` before a handler runs: the application
takes it as a game id in the one spelling the server issues."""

from __future__ import annotations

from typing import Any

from service.http.routes import audit, history, lobby, play, players, system

#: Every handler, ``lobby`` first (its OPTIONS handler must precede the others on its path).
ROUTES: list[Any] = [
    *lobby.ROUTES,
    *play.ROUTES,
    *history.ROUTES,
    *audit.ROUTES,
    *players.ROUTES,
    *system.ROUTES,
]
