"""``evolve`` folds any recorded event: checking is ``decide``'s and position import's job.

A position is checked when it is imported (``start_from_position``); the ``position_loaded``
event it records is then folded as it stands, so a stored stream always folds, whatever a later
version of the rules would say about it."""

from __future__ import annotations

from typing import Any

import pytest

from domain.cargo_empire import CARGO_EMPIRE
from domain.cargo_empire import events as ce
from domain.curious_cargo import CURIOUS_CARGO
from domain.curious_cargo import events as cc
from domain.empire_builder import EMPIRE_BUILDER
from domain.empire_builder import events as eb
from domain.jolly_cargo import JOLLY_CARGO
from domain.jolly_cargo import events as jc
from domain.kernel import CommandError, Game, Rng, typed
from domain.registry import GAMES

SEED = bytes(32)

#: Positions the import refuses, and a fact of the state folded from them anyway.
CASES: list[tuple[Game[Any, Any, Any, Any, Any], Any, dict[str, Any], Any]] = [
    (  # a seat with more posts than turns left
        CARGO_EMPIRE, ce.PositionLoaded,
        {"players": [{"supply": 13}, {}]},
        lambda s: s.players[0].supply == 13,
    ),
    (  # more Ships in hands than the deck has
        CARGO_EMPIRE, ce.PositionLoaded,
        {"players": [{"hand": {"ship": 9}}, {"hand": {"ship": 9}}]},
        lambda s: s.players[1].hand.ship == 9,
    ),
    (  # four moves left
        JOLLY_CARGO, jc.PositionLoaded,
        {"players": [{"colour": "red"}, {"colour": "green"}], "crates": {"c3": "red"},
         "workers": {}, "moves_left": 4},
        lambda s: s.moves_left == 4,
    ),
    (  # a seat losing 150,000 turns (issue 35: out of skip's documented range, 0 to 3)
        EMPIRE_BUILDER, eb.PositionLoaded,
        {"players": [{"cards": [0, 1, 2], "skip": 150_000}, {"cards": [3, 4, 5]}]},
        lambda s: s.players[0].skip == 150_000,
    ),
    (  # a train of speed 10
        EMPIRE_BUILDER, eb.PositionLoaded,
        {"players": [{"cards": [0, 1, 2], "speed": 10}, {"cards": [3, 4, 5]}]},
        lambda s: s.players[0].speed == 10,
    ),
    (  # two seats holding the same demand card
        EMPIRE_BUILDER, eb.PositionLoaded,
        {"players": [{"cards": [0, 1, 2]}, {"cards": [2, 3, 4]}]},
        lambda s: s.players[1].cards == [2, 3, 4],
    ),
    (  # a forklift past the track
        CURIOUS_CARGO, cc.PositionLoaded,
        {"players": [{"forklift": 99}, {}]},
        lambda s: s.players[0].forklift == 99,
    ),
    (  # more construction tokens than the game has
        CURIOUS_CARGO, cc.PositionLoaded,
        {"players": [{"tokens": {"construction": 9}}, {"tokens": {"construction": 9}}]},
        lambda s: s.players[1].construction == 9 and s.supply.construction < 0,
    ),
]


def test_every_registered_game_is_covered() -> None:
    # A game added to the registry must bring a case here: evolve checks nothing in every game.
    assert {game.id for game, *_ in CASES} == set(GAMES)


@pytest.mark.parametrize(("game", "loaded", "raw", "fact"), CASES)
def test_import_checks_a_position_and_folding_does_not(
    game: Game[Any, Any, Any, Any, Any], loaded: Any, raw: dict[str, Any], fact: Any
) -> None:
    with pytest.raises(CommandError) as caught:  # decoding checks the numbers' ranges
        game.start_from_position(game.decode_position(raw), Rng(SEED, 1))
    assert caught.value.code in ("position.invalid", "position.out_of_range")
    # A recorded position_loaded is decoded as an event is, ranges unchecked, and folds.
    position = typed(raw, game.position_type)
    state = game.evolve(None, loaded(position))
    assert fact(state)


@pytest.mark.parametrize(("game", "event"), [(CARGO_EMPIRE, ce.TurnEnded(0)),
                                             (JOLLY_CARGO, jc.TurnEnded(0))])
def test_a_stream_that_does_not_open_the_game_is_an_explicit_error(
    game: Game[Any, Any, Any, Any, Any], event: Any
) -> None:
    # A ValueError, not an assert (which `python -O` would strip).
    with pytest.raises(ValueError, match="opening"):
        game.evolve(None, event)
