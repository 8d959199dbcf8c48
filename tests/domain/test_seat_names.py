"""Pictures call the players by name (issue 29): given the names (the service adds them to the
view it draws: ``domain.kernel.svg.named``), no picture says "seat 0"; without them every
picture is as before; a finished Empire Builder picture names its winners."""

from __future__ import annotations

import re
from typing import Any

from domain.empire_builder import EMPIRE_BUILDER
from domain.empire_builder.options import Options
from domain.kernel import SPECTATOR, LocalGame, Rng, play_random_game
from domain.kernel.svg import named, seat_name
from domain.registry import all_games

SEED = bytes(range(32))
NAMES = ["Ann", "Bo", "Cyrille", "Di", "Ed", "Flo"]
SEAT_WORD = re.compile(r">[^<]*\b[Ss]eat \d")  # "seat 0" in a text node


def _mid_game(game: Any, seats: int) -> Any:
    """A table after 40 random legal commands."""
    table = LocalGame.new(game, SEED, seats)
    chooser = Rng(SEED, 0)
    for _ in range(40):
        waiting = table.game.to_act(table.state)
        if not waiting:
            break
        who = chooser.choice(waiting)
        table.submit(who, chooser.choice(table.game.legal(table.state, who)))
    return table


def test_every_picture_names_the_players() -> None:
    for game in all_games():
        seats = game.min_seats if game.min_seats > 1 else 2
        table = _mid_game(game, seats)
        view = game.view(table.state, SPECTATOR)
        plain = game.svg(view)
        assert plain is not None and SEAT_WORD.search(plain), game.id  # as before: numbers
        drawn = game.svg(named(view, NAMES[:seats]))
        assert drawn is not None
        assert not SEAT_WORD.search(drawn), (game.id, SEAT_WORD.search(drawn))
        for name in NAMES[:seats]:
            assert name in drawn, (game.id, name)


def test_a_hostile_name_is_text() -> None:
    game = next(g for g in all_games() if g.id == "jolly-cargo")
    table = _mid_game(game, 2)
    view = game.view(table.state, SPECTATOR)
    drawn = game.svg(named(view, ["<b>x</b>", "a&b"]))
    assert drawn is not None and "<b>" not in drawn and "&lt;b&gt;x&lt;/b&gt;" in drawn


def test_a_finished_empire_builder_picture_names_its_winners() -> None:
    table, outcome = play_random_game(EMPIRE_BUILDER, SEED, 2, Options(turn_limit=2))
    view = EMPIRE_BUILDER.view(table.state, SPECTATOR)
    drawn = EMPIRE_BUILDER.svg(named(view, ["Ann", "Bo"]))
    assert drawn is not None
    won = " and ".join(seat_name(named({}, ["Ann", "Bo"]), w) for w in outcome.winners)
    assert f"won by {won or 'nobody'} (" in drawn
