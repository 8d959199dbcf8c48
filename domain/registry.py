"""The games this server hosts, by id. Adding a game is one line here.

Rules editions (docs/api.md "Rules editions"): a game's rules change over the project's life, and
a stored game is re-adjudicated by the rules it was played under. ``lobby.created.edition``
records the edition a game was created under (absent: 1, the edition before the field existed);
:data:`EDITIONS` holds, per game, the editions this code implements, the highest being the one
new games get. A game's table folds and decides with its own edition's rules
(:func:`get_game` with ``edition``); an edition this code no longer implements folds with
today's rules, and the audit says it cannot re-adjudicate it rather than flag it."""

from __future__ import annotations

from typing import Any

from .cargo_empire import CARGO_EMPIRE
from .curious_cargo import CURIOUS_CARGO
from .curious_cargo import EDITIONS as CURIOUS_CARGO_EDITIONS
from .empire_builder import EMPIRE_BUILDER
from .jolly_cargo import JOLLY_CARGO
from .kernel import Game, UnknownGame

#: Any game's decider record, as the service and the projections hold it (each game's own module
#: has the precisely typed one).
AnyGame = Game[Any, Any, Any, Any, Any]

GAMES: dict[str, AnyGame] = {
    game.id: game for game in (JOLLY_CARGO, CARGO_EMPIRE, EMPIRE_BUILDER, CURIOUS_CARGO)
}

#: Each game's rules editions this code implements (edition → rules). Empire Builder's edition 2
#: is the rules since 2026-11-27 (major-city starts, the derailment choice, the reversed second
#: building round, cash less debt, the map's fixes); its edition 1 is not kept
#: (docs/rules/empire-builder.md "Rules editions").
EDITIONS: dict[str, dict[int, AnyGame]] = {
    JOLLY_CARGO.id: {1: JOLLY_CARGO},
    CARGO_EMPIRE.id: {1: CARGO_EMPIRE},
    EMPIRE_BUILDER.id: {2: EMPIRE_BUILDER},
    CURIOUS_CARGO.id: dict(CURIOUS_CARGO_EDITIONS),
}


def get_game(game_id: str, edition: int | None = None) -> AnyGame:
    """A game's rules: today's, or those of ``edition`` where this code implements it (else
    today's: see :func:`implements`)."""
    try:
        game = GAMES[game_id]
    except KeyError:
        raise UnknownGame(game_id) from None
    if edition is None:
        return game
    return EDITIONS[game_id].get(edition, game)


def current_edition(game_id: str) -> int:
    """The rules edition games created now are recorded under."""
    get_game(game_id)
    return max(EDITIONS[game_id])


def implements(game_id: str, edition: int) -> bool:
    """Whether this code plays ``edition`` of the game's rules exactly (so can re-adjudicate it)."""
    return edition in EDITIONS.get(game_id, {})


def all_games() -> list[AnyGame]:
    return list(GAMES.values())
