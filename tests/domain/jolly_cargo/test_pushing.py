"""CARGO pushing and pulling: strength, the push line, squishing, pulls (the picture examples)."""

from __future__ import annotations

import pytest

from domain.jolly_cargo.events import CrateShift, WorkersMoved

from .support import SPARE, at, board, move, rejects

#: Squares east of c4 along rank 4, where the push lines are laid out.
ROW = ["d4", "e4", "f4", "g4"]


def row_of_crates(count: int) -> dict[str, str]:
    return {**SPARE, **{sq: "green" for sq in ROW[:count]}}


@pytest.mark.parametrize(
    ("worker", "strength"),
    [("red-D1", 1), ("red-B", 2), ("red-M", 1), ("red-E", 2)],
)
def test_push_strength(worker: str, strength: int) -> None:
    """Dockhand pushes 1 crate, Burly 2, Mule 1, Elephant 2 (rule.too_heavy)."""
    table = at({"crates": row_of_crates(strength + 1), "workers": {"c4": [worker]}})
    rejects(table, 0, move(worker, "E:push"), "rule.too_heavy")

    table = at({"crates": row_of_crates(strength), "workers": {"c4": [worker]}})
    table.submit(0, move(worker, "E:push"))
    moved = {sq: "green" for sq in ROW[1 : strength + 1]}
    assert board(table.state) == {"crates": {**SPARE, **moved}, "workers": {"d4": [worker]}}


def test_workers_cannot_push_workers() -> None:
    """Pushing a worker has its own code (rule.cannot_push_worker); pushing an empty square is
    rule.nothing_to_push."""
    table = at({"crates": SPARE, "workers": {"c4": ["red-E"], "d4": ["green-M"], "c5": ["red-B"]}})
    error = rejects(table, 0, move("red-E", "E:push"), "rule.cannot_push_worker")  # E + M + space
    assert "workers cannot push workers" in error.message and error.details == {"step": 0}
    rejects(table, 0, move("red-B", "N:push"), "rule.nothing_to_push")  # nothing there at all
    rejects(table, 0, move("red-B", "S:push"), "rule.cannot_push_worker")  # its own Elephant


def test_burly_crate_dockhand_slide() -> None:
    """Picture: BURLY + CRATE + DOCKHAND + SPACE — all three slide one square."""
    table = at(
        {"crates": {**SPARE, "d4": "green"}, "workers": {"c4": ["red-B"], "e4": ["green-D1"]}}
    )
    table.submit(0, move("red-B", "E:push"))
    assert board(table.state) == {
        "crates": {**SPARE, "e4": "green"},
        "workers": {"d4": ["red-B"], "f4": ["green-D1"]},
    }


def test_shoved_dockhand_joins_dockhands() -> None:
    """Picture: MULE + CRATE + DOCKHAND + 2 DOCKHANDS — the Dockhand joins the stack of 3."""
    table = at(
        {
            "crates": {**SPARE, "d4": "green"},
            "workers": {"c4": ["red-M"], "e4": ["green-D1"], "f4": ["green-D2", "red-D1"]},
        }
    )
    table.submit(0, move("red-M", "E:push"))
    assert board(table.state) == {
        "crates": {**SPARE, "e4": "green"},
        "workers": {"d4": ["red-M"], "f4": ["green-D1", "green-D2", "red-D1"]},
    }
    assert table.state.doctor == {}


def test_one_dockhand_squishes_a_stack() -> None:
    """Picture: DOCKHAND + CRATE + 4 DOCKHANDS + CRATE — the 4 Dockhands are squished."""
    table = at(
        {
            "crates": {**SPARE, "d4": "red", "f4": "green"},
            "workers": {
                "c4": ["red-D1"],
                "e4": ["green-D1", "green-D2", "green-D3", "green-D4"],
            },
        }
    )
    table.submit(0, move("red-D1", "E:push"))
    assert board(table.state) == {
        "crates": {**SPARE, "e4": "red", "f4": "green"},
        "workers": {"d4": ["red-D1"]},
    }
    assert sorted(table.state.doctor) == ["green-D1", "green-D2", "green-D3", "green-D4"]
    assert [p.score for p in table.state.players] == [4, 0]


def test_mule_cannot_push_crate_burly_crate() -> None:
    """Picture: MULE + CRATE + BURLY + CRATE + SPACE — the Mule cannot push two crates."""
    table = at(
        {
            "crates": {**SPARE, "d4": "green", "f4": "green"},
            "workers": {"c4": ["red-M"], "e4": ["green-B"]},
        }
    )
    rejects(table, 0, move("red-M", "E:push"), "rule.too_heavy")


def test_elephant_pushes_through_burly_and_squishes() -> None:
    """Picture: ELEPHANT + CRATE + BURLY + CRATE + 3 DOCKHANDS + CRATE — the 3 are squished."""
    table = at(
        {
            "crates": {**SPARE, "c4": "green", "e4": "green", "g4": "red"},
            "workers": {
                "b4": ["red-E"],
                "d4": ["green-B"],
                "f4": ["green-D1", "green-D2", "green-D3"],
            },
        }
    )
    table.submit(0, move("red-E", "E:push"))
    assert board(table.state) == {
        "crates": {**SPARE, "d4": "green", "f4": "green", "g4": "red"},
        "workers": {"c4": ["red-E"], "e4": ["green-B"]},
    }
    assert sorted(table.state.doctor) == ["green-D1", "green-D2", "green-D3"]
    assert [p.score for p in table.state.players] == [3, 0]


def test_three_dockhands_push_three_crates_and_a_mule_into_the_water() -> None:
    """Picture: 3 DOCKHANDS + 3 CRATES + MULE + WATER — the Mule goes into the water."""
    table = at(
        {
            "crates": {**SPARE, "e4": "green", "f4": "green", "g4": "red"},
            "workers": {"d4": ["red-D1", "red-D2", "red-D3"], "h4": ["green-M"]},
        }
    )
    table.submit(0, move(["red-D1", "red-D2", "red-D3"], "E:push"))
    assert board(table.state) == {
        "crates": {**SPARE, "f4": "green", "g4": "green", "h4": "red"},
        "workers": {"e4": ["red-D1", "red-D2", "red-D3"]},
    }
    assert table.state.water == ["green-M"]
    assert table.state.current == 1


def test_burly_shoved_without_counting() -> None:
    """Burly Workers in the line are shoved along and do not count: a Burly moves C+B+C."""
    table = at(
        {
            "crates": {**SPARE, "d4": "green", "f4": "green"},
            "workers": {"c4": ["red-B"], "e4": ["green-B"]},
        }
    )
    table.submit(0, move("red-B", "E:push"))
    assert board(table.state) == {
        "crates": {**SPARE, "e4": "green", "g4": "green"},
        "workers": {"d4": ["red-B"], "f4": ["green-B"]},
    }


def test_mule_shoved_by_a_dockhands_push() -> None:
    """A Mule is pushed by a crate that even a Dockhand pushes."""
    table = at(
        {"crates": {**SPARE, "d4": "green"}, "workers": {"c4": ["red-D1"], "e4": ["green-M"]}}
    )
    table.submit(0, move("red-D1", "E:push"))
    assert board(table.state) == {
        "crates": {**SPARE, "e4": "green"},
        "workers": {"d4": ["red-D1"], "f4": ["green-M"]},
    }


@pytest.mark.parametrize("pusher", ["red-D1", "red-B", "red-E"])
def test_an_elephant_is_never_shoved(pusher: str) -> None:
    """Elephants cannot be pushed by anything (rule.elephant_immovable)."""
    table = at({"crates": {**SPARE, "d4": "green"}, "workers": {"c4": [pusher], "e4": ["green-E"]}})
    rejects(table, 0, move(pusher, "E:push"), "rule.elephant_immovable")


def test_an_elephant_behind_a_burly_is_not_shoved() -> None:
    """A Burly in the line cannot pass the push on to an Elephant behind it."""
    table = at(
        {
            "crates": {**SPARE, "d4": "green"},
            "workers": {"c4": ["red-E"], "e4": ["green-B"], "f4": ["green-E"]},
        }
    )
    rejects(table, 0, move("red-E", "E:push"), "rule.elephant_immovable")


def test_dockhand_squished_between_crate_and_elephant() -> None:
    """A Dockhand caught between a pushed crate and an Elephant is squished."""
    table = at(
        {
            "crates": {**SPARE, "d4": "green"},
            "workers": {"c4": ["red-B"], "e4": ["green-D1"], "f4": ["green-E"]},
        }
    )
    table.submit(0, move("red-B", "E:push"))
    assert board(table.state) == {
        "crates": {**SPARE, "e4": "green"},
        "workers": {"d4": ["red-B"], "f4": ["green-E"]},
    }
    assert list(table.state.doctor) == ["green-D1"]
    assert table.state.players[0].score == 1


def test_dockhand_squished_between_mule_and_burly() -> None:
    """A Dockhand pressed between a shoved Mule and a Burly Worker is squished."""
    table = at(
        {
            "crates": {**SPARE, "d4": "green"},
            "workers": {
                "c4": ["red-D1"],
                "e4": ["green-M"],
                "f4": ["green-D1"],
                "g4": ["green-B"],
            },
        }
    )
    table.submit(0, move("red-D1", "E:push"))
    assert board(table.state) == {
        "crates": {**SPARE, "e4": "green"},
        "workers": {"d4": ["red-D1"], "f4": ["green-M"], "g4": ["green-B"]},
    }
    assert list(table.state.doctor) == ["green-D1"]
    assert table.state.players[0].score == 1


def test_dockhands_of_several_owners_squished_together() -> None:
    """A mixed stack is squished whole; the mover scores +1 per opponent's, −1 per own."""
    table = at(
        {
            "crates": {**SPARE, "d4": "green", "f4": "green"},
            "workers": {"c4": ["red-D1"], "e4": ["green-D1", "green-D2", "red-D2"]},
        }
    )
    table.submit(0, move("red-D1", "E:push"))
    assert sorted(table.state.doctor) == ["green-D1", "green-D2", "red-D2"]
    assert [p.score for p in table.state.players] == [1, 0]


def test_dockhand_cannot_pull() -> None:
    """Dockhands and Burly Workers only push (rule.cannot_pull)."""
    table = at(
        {
            "crates": {**SPARE, "c4": "green", "c6": "green"},
            "workers": {"d4": ["red-D1"], "d6": ["red-B"]},
        }
    )
    rejects(table, 0, move("red-D1", "E:pull"), "rule.cannot_pull")
    rejects(table, 0, move("red-B", "E:pull"), "rule.cannot_pull")


@pytest.mark.parametrize("puller", ["red-M", "red-E"])
def test_mule_and_elephant_pull(puller: str) -> None:
    """A pull steps away from an adjacent crate, which follows into the square left."""
    table = at({"crates": {**SPARE, "c4": "green"}, "workers": {"d4": [puller]}})
    table.submit(0, move(puller, "E:pull"))
    assert board(table.state) == {
        "crates": {**SPARE, "d4": "green"},
        "workers": {"e4": [puller]},
    }


def test_a_pull_needs_a_crate_behind() -> None:
    """Nothing behind the worker (opposite to its step): nothing to pull (rule.nothing_to_pull)."""
    table = at(
        {"crates": {**SPARE, "d5": "green"}, "workers": {"d4": ["red-M"], "c4": ["green-D1"]}}
    )
    rejects(table, 0, move("red-M", "E:pull"), "rule.nothing_to_pull")  # a worker behind
    rejects(table, 0, move("red-M", "N:pull"), "rule.nothing_to_pull")  # crate ahead, not behind


def test_a_pull_moves_only_one_crate() -> None:
    """Pulling brings one crate along; the crate behind it stays."""
    table = at({"crates": {**SPARE, "c4": "green", "b4": "green"}, "workers": {"d4": ["red-E"]}})
    table.submit(0, move("red-E", "E:pull"))
    assert board(table.state) == {
        "crates": {**SPARE, "b4": "green", "d4": "green"},
        "workers": {"e4": ["red-E"]},
    }


def test_mule_moves_a_crate_two_squares() -> None:
    """A Mule may push the same crate twice."""
    table = at({"crates": {**SPARE, "d4": "green"}, "workers": {"c4": ["red-M"]}})
    table.submit(0, move("red-M", "E:push", "E:push"))
    assert board(table.state) == {"crates": {**SPARE, "f4": "green"}, "workers": {"e4": ["red-M"]}}


def test_mule_moves_then_pushes() -> None:
    """A Mule splits its 2 steps into a move and a push."""
    table = at({"crates": {**SPARE, "e5": "green"}, "workers": {"d4": ["red-M"]}})
    table.submit(0, move("red-M", "E", "N:push"))
    assert board(table.state) == {"crates": {**SPARE, "e6": "green"}, "workers": {"e5": ["red-M"]}}


def test_mule_pushes_then_pulls_the_same_crate() -> None:
    """A Mule may push a crate and pull the same crate back."""
    table = at({"crates": {**SPARE, "d4": "green"}, "workers": {"c4": ["red-M"]}})
    events = table.submit(0, move("red-M", "E:push", "W:pull"))
    assert board(table.state) == {"crates": {**SPARE, "d4": "green"}, "workers": {"c4": ["red-M"]}}
    assert table.state.moves_left == 2
    moved = next(e for e in events if isinstance(e, WorkersMoved))
    shifts = [(op.frm, op.to) for op in moved.ops if isinstance(op, CrateShift)]
    assert shifts == [("d4", "e4"), ("e4", "d4")]


def test_mule_moves_only_one_crate() -> None:
    """A Mule handles one crate per action (rule.mule_one_crate)."""
    crates = {**SPARE, "d4": "green", "d5": "green"}
    table = at({"crates": crates, "workers": {"c4": ["red-M"]}})
    rejects(table, 0, move("red-M", "E:push", "N:push"), "rule.mule_one_crate")
    # pull c5 one square south, then push a different crate
    table = at({"crates": {**SPARE, "c5": "green", "d3": "green"}, "workers": {"c4": ["red-M"]}})
    rejects(table, 0, move("red-M", "S:pull", "E:push"), "rule.mule_one_crate")


def test_elephant_pushes_one_crate_then_pulls_another() -> None:
    """An Elephant may push one crate and then pull a different one."""
    table = at({"crates": {**SPARE, "e4": "green", "e3": "red"}, "workers": {"d4": ["red-E"]}})
    table.submit(0, move("red-E", "E:push", "N:pull"))
    assert board(table.state) == {
        "crates": {**SPARE, "f4": "green", "e4": "red"},
        "workers": {"e5": ["red-E"]},
    }


def test_elephant_between_two_crates_cannot_push_and_pull_at_once() -> None:
    """Pushing the crate ahead does not drag the crate behind (one direction at a time)."""
    table = at({"crates": {**SPARE, "c4": "red", "e4": "green"}, "workers": {"d4": ["red-E"]}})
    table.submit(0, move("red-E", "E:push"))
    assert board(table.state) == {
        "crates": {**SPARE, "c4": "red", "f4": "green"},
        "workers": {"e4": ["red-E"]},
    }
