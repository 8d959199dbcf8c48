"""Queries: a question answered from the game's current state, with
nothing appended (``docs/api.md``). The game answers through the kernel's optional
``Game.ask(state, viewer, query)`` (Empire Builder: survey, route planner, auto move preview).

A seat token asks as that seat; no token asks as a spectator (public questions only: a game
refuses questions that need a seat). A query the game does not know, or a malformed one, is 422
``query.invalid`` (``query.unsupported`` for a game without queries); a refused question is 422
with the game's code; an open game is 409 ``game.not_started``."""

from __future__ import annotations

from typing import Any

import msgspec

from domain.kernel import SPECTATOR, RuleError, seat
from service.application.answers import QueryAnswer
from service.application.errors import Conflict, NotFound, RefusedByRules
from service.application.seats import Seats
from service.application.tables import Tables
from service.eventstore.port import EventLog


class QueryBody(msgspec.Struct, forbid_unknown_fields=True):
    query: dict[str, Any]


class Queries:
    """Questions to a game, answered on its stored state."""

    def __init__(self, store: EventLog, tables: Tables, seats: Seats) -> None:
        self.store = store
        self.tables = tables
        self.seats = seats

    async def query(self, game_id: str, token: str | None, body: QueryBody) -> QueryAnswer:
        """The game's answer to ``body`` on the stored state (asking never changes it), as the
        token's seat or as a spectator. The state is this process's table only when it is at
        the stored (version, head): another instance may have recorded a move since."""
        who = await self.seats.viewer(game_id, token)
        stored = await self.store.version_head(game_id)
        if stored is None or stored[0] == 0:
            raise NotFound("game.not_found", f"no game {game_id}")
        table = await self.tables.stored(game_id, stored[1], stored[0])
        if table.status == "open" or table.state is None:
            raise Conflict("game.not_started", "the game has not started: seats are still open")
        rules = table.rules
        try:
            query = rules.decode_query(body.query)
            result = rules.ask(table.state, SPECTATOR if who is None else seat(who), query)
        except RuleError as error:
            raise RefusedByRules(error.code, error.message, **error.details) from None
        return QueryAnswer(version=table.version, answer=result)
