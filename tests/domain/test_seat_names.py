"""Pictures call the players by name (issue 29): given the names (the service passes them beside
the view it draws: ``domain.kernel.svg.Players``), no picture says "seat 0"; without them every
picture is as before; a finished Empire Builder picture names its winners."""

from __future__ import annotations

import re
from typing import Any

from domain.empire_builder import EMPIRE_BUILDER
from domain.empire_builder.options import Options
from domain.kernel import SPECTATOR, LocalGame, Rng, play_random_game
from domain.kernel.svg import Players
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
        drawn = game.svg(view, Players(tuple(NAMES[:seats])))
        assert drawn is not None
        assert not SEAT_WORD.search(drawn), (game.id, SEAT_WORD.search(drawn))
        for name in NAMES[:seats]:
            assert name in drawn, (game.id, name)


def test_a_hostile_name_is_text() -> None:
    game = next(g for g in all_games() if g.id == "jolly-cargo")
    table = _mid_game(game, 2)
    view = game.view(table.state, SPECTATOR)
    drawn = game.svg(view, Players(("<b>x</b>", "a&b")))
    assert drawn is not None and "<b>" not in drawn and "&lt;b&gt;x&lt;/b&gt;" in drawn


def test_a_finished_empire_builder_picture_names_its_winners() -> None:
    table, outcome = play_random_game(EMPIRE_BUILDER, SEED, 2, Options(turn_limit=2))
    view = EMPIRE_BUILDER.view(table.state, SPECTATOR)
    drawn = EMPIRE_BUILDER.svg(view, Players(("Ann", "Bo")))
    assert drawn is not None
    won = " and ".join(Players(("Ann", "Bo")).name(w) for w in outcome.winners)
    assert f"won by {won or 'nobody'} (" in drawn


def _rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def _distance(a: str, b: str) -> float:
    """A perceptual-enough distance between two colours ("redmean" weighted RGB, 0-765)."""
    (r1, g1, b1), (r2, g2, b2) = _rgb(a), _rgb(b)
    mean = (r1 + r2) / 2
    dr, dg, db = r1 - r2, g1 - g2, b1 - b2
    return float(((2 + mean / 256) * dr**2 + 4 * dg**2 + (2 + (255 - mean) / 256) * db**2) ** 0.5)


def test_empire_builder_seat_colours_are_far_from_water_and_each_other() -> None:
    from domain.empire_builder import render

    # the old seat 1 (#1f77b4) was 77 from the rivers' blue: the bound below would catch it
    assert _distance("#1f77b4", render.WATER[1]) < 150
    for seat, colour in enumerate(render.PLAYER_COLOURS):
        for water in render.WATER:
            assert _distance(colour, water) >= 150, (seat, colour, water)
    colours = render.PLAYER_COLOURS
    for i, a in enumerate(colours):
        for b in colours[i + 1 :]:
            assert _distance(a, b) >= 120, (a, b)


def test_empire_builder_city_names_are_readable_at_the_viewers_size() -> None:
    from domain.empire_builder import render

    svg = render.render()
    sizes = [int(s) for s in re.findall(r'class="city-name"[^>]*font-size="(\d+)"', svg)]
    assert len(sizes) == 66
    # drawn about 0.75 of their size in the viewer: no label under 7.5 px there, majors 11
    assert min(sizes) >= 10 and sizes.count(15) == 7


def test_empire_builder_legend_gives_each_player_their_colour() -> None:
    from domain.empire_builder import render

    table = _mid_game(EMPIRE_BUILDER, 3)
    drawn = EMPIRE_BUILDER.svg(
        EMPIRE_BUILDER.view(table.state, SPECTATOR), Players(tuple(NAMES[:3]))
    )
    assert drawn is not None
    swatches = re.findall(r'<rect class="legend" data-seat="(\d)"[^>]*fill="(#[0-9a-f]{6})"', drawn)
    assert swatches == [(str(s), render.PLAYER_COLOURS[s]) for s in range(3)]


def test_cargo_empire_says_turns_played_of_all_and_what_rings_mean() -> None:
    from domain.cargo_empire import CARGO_EMPIRE

    table = _mid_game(CARGO_EMPIRE, 2)
    view = CARGO_EMPIRE.view(table.state, SPECTATOR)
    drawn = CARGO_EMPIRE.svg(view)
    assert drawn is not None
    per = view.turns_per_round * 2
    assert f"turns played {view.turn}/{per}" in drawn  # never "turn 7/4"
    assert "blue dashed ring = port" in drawn


def test_cargo_says_what_the_worker_letters_mean() -> None:
    from domain.jolly_cargo import JOLLY_CARGO

    table = _mid_game(JOLLY_CARGO, 2)
    drawn = JOLLY_CARGO.svg(JOLLY_CARGO.view(table.state, SPECTATOR))
    assert drawn is not None
    for key in ("D = dockhand", "B = burly", "M = mule", "E = elephant"):
        assert key in drawn


def test_curious_cargo_panel_reads_as_words() -> None:
    from domain.curious_cargo import CURIOUS_CARGO

    table = _mid_game(CURIOUS_CARGO, 2)
    drawn = CURIOUS_CARGO.svg(CURIOUS_CARGO.view(table.state, SPECTATOR))
    assert drawn is not None
    assert "storage: - | - | -" not in drawn and "storage stacks: 1: " in drawn
    assert "circles: goods shipped" in drawn and "truck cards: " in drawn
