"""Board pictures: each game's SVG of a known position holds what the position holds, shows
nothing the viewer may not see, and is well-formed XML."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from typing import Any

from domain.cargo_empire import CARGO_EMPIRE
from domain.jolly_cargo import JOLLY_CARGO
from domain.kernel import AUDITOR, SPECTATOR, LocalGame, Rng, play_random_game, seat
from domain.registry import all_games
from tests.domain.cargo_empire.support import at as empire_at
from tests.domain.jolly_cargo.support import at as cargo_at

NS = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{NS}svg"
    return root


def having(root: ET.Element, cls: str) -> list[ET.Element]:
    """Elements whose class list holds ``cls``."""
    return [e for e in root.iter() if cls in (e.get("class") or "").split()]


SEED = bytes(range(32))


def _played(game: Any, seats: int, commands: int, seed: bytes = SEED) -> Any:
    """A table after ``commands`` random legal commands (fewer if the game ends)."""
    table = LocalGame.new(game, seed, seats)
    chooser = Rng(seed, 0)
    for _ in range(commands):
        waiting = game.to_act(table.state)
        if not waiting:
            break
        who = chooser.choice(waiting)
        table.submit(who, chooser.choice(game.legal(table.state, who)))
    return table


def test_every_game_draws_its_views_through_a_whole_game() -> None:
    for game in all_games():
        table, _ = play_random_game(game, SEED, min(game.min_seats + 1, game.max_seats))
        for n in (len(table.records) // 3, len(table.records)):
            state = game.fold(table.events[:n])
            for viewer in (SPECTATOR, AUDITOR, seat(0)):
                svg = game.svg(game.view(state, viewer))
                assert svg is not None
                parse(svg)


def test_cargo_crates_workers_doctor_water_and_sea() -> None:
    table = cargo_at(
        {
            "crates": {"c3": "red", "d4": "red", "f6": "green", "b2": "green", "g7": "green"},
            "workers": {"a1": ["red-D1", "red-D2"], "h1": ["green-E"], "c5": ["red-M"]},
            "doctor": {"green-D1": 5},
            "water": ["red-B"],
            "sea": ["green", "red", "green"],
        }
    )
    svg = JOLLY_CARGO.svg(JOLLY_CARGO.view(table.state, SPECTATOR))
    root = parse(svg)
    crates = having(root, "crate")
    assert Counter(c.get("data-colour") for c in crates) == {"red": 2, "green": 3}
    assert {c.get("data-square") for c in crates} == {"c3", "d4", "f6", "b2", "g7"}
    assert not having(root, "face-down")
    workers = {w.get("data-worker"): w for w in having(root, "worker")}
    assert set(workers) == {"red-D1", "red-D2", "green-E", "red-M"}
    assert workers["green-E"].get("data-kind") == "elephant"
    assert workers["green-E"].get("data-owner") == "green"
    assert workers["red-D2"].get("data-square") == "a1"
    assert workers["red-M"].get("data-kind") == "mule"
    doctor = having(root, "doctor-worker")
    assert [(d.get("data-worker"), d.get("data-back-on-turn")) for d in doctor] == [
        ("green-D1", "5")
    ]
    assert [w.get("data-worker") for w in having(root, "water-worker")] == ["red-B"]
    sea = {s.get("data-colour"): s.get("data-count") for s in having(root, "sea")}
    assert sea == {"red": "1", "green": "2"}
    ships = {s.get("data-colour"): s.get("data-seat") for s in having(root, "ship")}
    assert ships == {"red": "0", "green": "1"}
    assert len(having(root, "square")) == 64


def _crates_placed(n: int) -> LocalGame[Any, Any, Any, Any, Any]:
    """A new three-player game with ``n`` crates placed face down."""
    table = _played(JOLLY_CARGO, 3, n)
    assert table.state.phase == "crates"
    return table


def test_cargo_face_down_crates_stay_hidden_from_spectators_and_seats() -> None:
    table = _crates_placed(7)
    for viewer in (SPECTATOR, seat(0), seat(2)):
        root = parse(JOLLY_CARGO.svg(JOLLY_CARGO.view(table.state, viewer)))
        marks = having(root, "face-down")
        assert len(marks) == 7
        assert all(m.get("data-colour") is None for m in marks)
        text = ET.tostring(root, encoding="unicode")
        for hidden in ('data-colour="red"', 'data-colour="blue"', 'data-colour="green"'):
            assert not any(hidden in ET.tostring(m, encoding="unicode") for m in marks), text
    audit = parse(JOLLY_CARGO.svg(JOLLY_CARGO.view(table.state, AUDITOR)))
    shown = having(audit, "crate")
    assert len(shown) == 7 and not having(audit, "face-down")
    assert Counter(c.get("data-colour") for c in shown) == Counter(table.state.crates.values())


def test_cargo_same_view_same_bytes() -> None:
    table = _crates_placed(4)
    view = JOLLY_CARGO.view(table.state, SPECTATOR)
    assert JOLLY_CARGO.svg(view) == JOLLY_CARGO.svg(view)


def test_empire_cities_levels_cubes_posts_and_track() -> None:
    table = empire_at(
        {
            "players": [
                {"hand": {"truck": 2, "train": 1}, "markers": {"truck": 3, "train": 1, "ship": 5}},
                {"hand": {"ship": 2}, "markers": {"truck": 0, "train": 2, "ship": 0}},
            ],
            "cities": {
                "Paris": {"level": 2, "cubes": 1, "posts": [0, 1, 0]},
                "Lisboa": {"level": 3, "posts": [1]},
                "Wien": {"level": 1, "cubes": 2, "demand": {"grey": 0, "orange": None}},
            },
            "market": ["truck", "train", "ship", "truck"],
        }
    )
    view = CARGO_EMPIRE.view(table.state, SPECTATOR)
    root = parse(CARGO_EMPIRE.svg(view))
    cities = {c.get("data-city"): c for c in having(root, "city")}
    assert len(cities) == 12
    assert cities["Paris"].get("data-level") == "2"
    assert cities["Lisboa"].get("data-level") == "3"
    assert cities["Lisboa"].get("data-port") == "true" and cities["Paris"].get("data-port") is None
    paris_cubes = having(cities["Paris"], "cube")
    assert len(paris_cubes) == 1 and paris_cubes[0].get("data-colour") == "grey"
    assert not having(cities["Lisboa"], "cube")
    assert [p.get("data-seat") for p in having(cities["Paris"], "post")] == ["0", "1", "0"]
    assert [p.get("data-seat") for p in having(cities["Lisboa"], "post")] == ["1"]
    demand = {d.get("data-colour"): d.get("data-seat") for d in having(cities["Wien"], "demand")}
    assert demand == {"grey": "0", "orange": ""}
    total_cubes = sum(c.cubes for c in view.map.cities)
    assert len(having(root, "cube")) == total_cubes
    assert len(having(root, "track")) == len(view.map.tracks)
    markers = {
        (m.get("data-seat"), m.get("data-vehicle")): m.get("data-step")
        for m in having(root, "marker")
    }
    assert markers[("0", "truck")] == "3" and markers[("0", "ship")] == "5"
    assert markers[("1", "train")] == "2"
    market = [m.get("data-vehicle") for m in having(root, "market-card")]
    assert market == ["truck", "train", "ship", "truck"]


def test_empire_hand_shown_only_to_its_seat() -> None:
    table = empire_at(
        {
            "players": [
                {"hand": {"truck": 2, "train": 1}, "private": ["Paris", "Wien"]},
                {"hand": {"ship": 2}, "private": ["Lisboa", "Napoli"]},
            ]
        }
    )
    mine = CARGO_EMPIRE.svg(CARGO_EMPIRE.view(table.state, seat(0)))
    theirs = CARGO_EMPIRE.svg(CARGO_EMPIRE.view(table.state, seat(1)))
    parse(mine)
    assert "hand T2 R1 S0" in mine and "hand T2 R1 S0" not in theirs
    assert "hand 3 cards" in theirs
    assert "private cities: Paris, Wien" in mine and "Paris, Wien" not in theirs
    assert "private cities: Lisboa, Napoli" in theirs and "Lisboa, Napoli" not in mine
