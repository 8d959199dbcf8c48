"""The games this server hosts, by id. Adding a game is one line here."""

from __future__ import annotations

from typing import Any

from .cargo_empire import CARGO_EMPIRE
from .curious_cargo import CURIOUS_CARGO
from .empire_builder import EMPIRE_BUILDER
from .jolly_cargo import JOLLY_CARGO
from .kernel import Game, UnknownGame

#: Any game's decider record, as the service and the projections hold it (each game's own module
#: has the precisely typed one).
AnyGame = Game[Any, Any, Any, Any, Any]

GAMES: dict[str, AnyGame] = {
    game.id: game for game in (JOLLY_CARGO, CARGO_EMPIRE, EMPIRE_BUILDER, CURIOUS_CARGO)
}


def get_game(game_id: str) -> AnyGame:
    try:
        return GAMES[game_id]
    except KeyError:
        raise UnknownGame(game_id) from None


def all_games() -> list[AnyGame]:
    return list(GAMES.values())
