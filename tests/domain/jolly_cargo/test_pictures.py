"""The seven picture examples of the rules text, each set up as a position and played by one
command, checking the exact board, squishes and scores that result. Red (seat 0) moves; the
examples lie along rank 3, pushing east."""

from __future__ import annotations

from domain.jolly_cargo import JOLLY_CARGO
from domain.jolly_cargo.commands import ReturnWorker
from domain.jolly_cargo.state import State

from .support import SPARE, at, board, move, rejects


def scores(state: State) -> list[int]:
    return [p.score for p in state.players]


def test_elephant_cannot_push_a_mule() -> None:
    """ELEPHANT + MULE + SPACE: workers cannot push one another directly."""
    table = at({"crates": SPARE, "workers": {"b3": ["red-E"], "c3": ["green-M"]}})
    rejects(table, 0, move("red-E", "E:push"), "rule.cannot_push_worker")
    rejects(table, 0, move("red-E", "E"), "rule.square_occupied")


def test_burly_pushes_crate_and_dockhand() -> None:
    """BURLY + CRATE + DOCKHAND + EMPTY SPACE: all three slide one square."""
    table = at(
        {"crates": {"c3": "green", **SPARE}, "workers": {"b3": ["red-B"], "d3": ["green-D1"]}}
    )
    table.submit(0, move("red-B", "E:push"))
    assert board(table.state) == {
        "crates": {"d3": "green", **SPARE},
        "workers": {"c3": ["red-B"], "e3": ["green-D1"]},
    }
    assert scores(table.state) == [0, 0]
    assert table.state.doctor == {}


def test_mule_pushes_dockhand_onto_two_dockhands() -> None:
    """MULE + CRATE + DOCKHAND + 2 DOCKHANDS: the Dockhand joins the pair, making a stack of 3."""
    table = at(
        {
            "crates": {"c3": "green", **SPARE},
            "workers": {"b3": ["red-M"], "d3": ["green-D1"], "e3": ["green-D2", "red-D1"]},
        }
    )
    table.submit(0, move("red-M", "E:push"))
    assert board(table.state) == {
        "crates": {"d3": "green", **SPARE},
        "workers": {"c3": ["red-M"], "e3": ["green-D1", "green-D2", "red-D1"]},
    }
    assert scores(table.state) == [0, 0]


def test_dockhand_squishes_four_dockhands() -> None:
    """DOCKHAND + CRATE + 4 DOCKHANDS + CRATE: the four are squished and go to the Doctor."""
    four = ["green-D1", "green-D2", "green-D3", "green-D4"]
    table = at(
        {
            "crates": {"c3": "green", "e3": "green", **SPARE},
            "workers": {"b3": ["red-D1"], "d3": four},
        }
    )
    table.submit(0, move("red-D1", "E:push"))
    assert board(table.state) == {
        "crates": {"d3": "green", "e3": "green", **SPARE},
        "workers": {"c3": ["red-D1"]},
    }
    assert sorted(table.state.doctor) == four
    assert scores(table.state) == [4, 0]


def test_mule_cannot_push_two_crates_past_a_burly() -> None:
    """MULE + CRATE + BURLY + CRATE + SPACE: the Mule cannot push 2 crates; Burly isn't squished."""
    table = at(
        {
            "crates": {"c3": "green", "e3": "green", **SPARE},
            "workers": {"b3": ["red-M"], "d3": ["green-B"]},
        }
    )
    rejects(table, 0, move("red-M", "E:push"), "rule.too_heavy")


def test_elephant_pushes_line_and_squishes_three_dockhands() -> None:
    """ELEPHANT + CRATE + BURLY + CRATE + 3 DOCKHANDS + CRATE: four pieces slide, three squished."""
    three = ["green-D1", "green-D2", "green-D3"]
    table = at(
        {
            "crates": {"b3": "green", "d3": "green", "f3": "green", **SPARE},
            "workers": {"a3": ["red-E"], "c3": ["green-B"], "e3": three},
        }
    )
    table.submit(0, move("red-E", "E:push"))
    assert board(table.state) == {
        "crates": {"c3": "green", "e3": "green", "f3": "green", **SPARE},
        "workers": {"b3": ["red-E"], "d3": ["green-B"]},
    }
    assert sorted(table.state.doctor) == three
    assert scores(table.state) == [3, 0]


def test_three_dockhands_push_three_crates_and_a_mule_into_the_water() -> None:
    """3 DOCKHANDS + CRATE + CRATE + CRATE + MULE + WATER: everything moves; the Mule falls in."""
    stack = ["red-D1", "red-D2", "red-D3"]
    table = at(
        {
            "crates": {"e3": "green", "f3": "green", "g3": "green", **SPARE},
            "workers": {"d3": stack, "h3": ["green-M"]},
        }
    )
    table.submit(0, move(stack, "E:push"))
    assert board(table.state) == {
        "crates": {"f3": "green", "g3": "green", "h3": "green", **SPARE},
        "workers": {"e3": stack},
    }
    assert table.state.water == ["green-M"]
    assert scores(table.state) == [0, 0]
    # Three Dockhands were three of red's three moves: green's turn, and the Mule comes back
    # first, onto one of green's loading squares.
    assert table.state.current == 1
    assert JOLLY_CARGO.legal(table.state, 1) == [
        ReturnWorker("green-M", "d1"),
        ReturnWorker("green-M", "e1"),
    ]
