"""CARGO turns: which workers a player may move, how far, and where."""

from __future__ import annotations

import pytest

from domain.jolly_cargo.commands import EndTurn

from .support import SPARE, at, board, move, rejects

THREE_PLAYERS = [{"colour": "red"}, {"colour": "blue"}, {"colour": "green"}]


def test_three_different_workers_then_the_turn_passes() -> None:
    """A player moves up to 3 different workers; after the third the turn passes on."""
    table = at(
        {
            "crates": SPARE,
            "workers": {"c3": ["red-D1"], "c5": ["red-B"], "f3": ["red-M"], "f5": ["red-E"]},
        }
    )
    table.submit(0, move("red-D1", "N"))
    assert (table.state.current, table.state.moves_left) == (0, 2)
    table.submit(0, move("red-B", "E"))
    table.submit(0, move("red-M", "S", "S"))
    assert board(table.state)["workers"] == {
        "c4": ["red-D1"],
        "d5": ["red-B"],
        "f1": ["red-M"],
        "f5": ["red-E"],
    }
    assert (table.state.current, table.state.moves_left) == (1, 3)


def test_the_same_worker_cannot_move_twice() -> None:
    """No worker moves twice in one turn (rule.worker_already_moved)."""
    table = at({"crates": SPARE, "workers": {"c3": ["red-B"], "f5": ["red-E"]}})
    table.submit(0, move("red-B", "N"))
    rejects(table, 0, move("red-B", "N"), "rule.worker_already_moved")


def test_a_stack_cannot_exceed_the_moves_left() -> None:
    """Each Dockhand of a stack is one of the 3 moves (rule.no_moves_left)."""
    table = at({"crates": SPARE, "workers": {"c3": ["red-D1", "red-D2"]}, "moves_left": 1})
    rejects(table, 0, move(["red-D1", "red-D2"], "N"), "rule.no_moves_left")
    table.submit(0, move("red-D1", "N"))
    assert board(table.state)["workers"] == {"c3": ["red-D2"], "c4": ["red-D1"]}
    assert table.state.current == 1


def test_ending_the_turn_early() -> None:
    """A player may stop after fewer than 3 workers with end_turn."""
    table = at({"crates": SPARE, "workers": {"c3": ["red-B"], "f5": ["green-B"]}})
    table.submit(0, move("red-B", "N"))
    table.submit(0, EndTurn())
    assert (table.state.current, table.state.moves_left) == (1, 3)
    assert board(table.state)["workers"] == {"c4": ["red-B"], "f5": ["green-B"]}
    rejects(table, 0, move("red-B", "N"), "rule.not_your_turn")


def test_ending_the_turn_without_moving() -> None:
    """A player may end the turn without moving anything."""
    table = at({"crates": SPARE, "workers": {"c3": ["red-B"]}})
    table.submit(0, EndTurn())
    assert (table.state.current, table.state.moves_left) == (1, 3)


def test_turns_pass_in_seat_order() -> None:
    """Play goes clockwise, in seat order, back to seat 0."""
    table = at(
        {
            "players": THREE_PLAYERS,
            "crates": {"a8": "red", "h1": "blue", "h8": "green"},
            "workers": {},
        }
    )
    seen = []
    for _ in range(4):
        seen.append(table.state.current)
        table.submit(table.state.current, EndTurn())
    assert seen == [0, 1, 2, 0]


def test_not_your_turn() -> None:
    """Only the player to move acts (rule.not_your_turn)."""
    table = at({"crates": SPARE, "workers": {"c3": ["red-B"], "f5": ["green-B"]}})
    rejects(table, 1, move("green-B", "N"), "rule.not_your_turn")
    rejects(table, 1, EndTurn(), "rule.not_your_turn")


def test_opponents_workers_are_not_yours() -> None:
    """A player moves only their own workers (rule.not_your_worker)."""
    table = at({"crates": SPARE, "workers": {"c3": ["red-B"], "f5": ["green-B"]}})
    rejects(table, 0, move("green-B", "N"), "rule.not_your_worker")


@pytest.mark.parametrize(
    ("worker", "allowed"),
    [("red-D1", 1), ("red-B", 1), ("red-M", 2), ("red-E", 2)],
)
def test_movement_allowance(worker: str, allowed: int) -> None:
    """Dockhand 1, Burly 1, Mule 2, Elephant 2 steps (rule.too_many_steps)."""
    table = at({"crates": SPARE, "workers": {"d3": [worker]}})
    rejects(table, 0, move(worker, *["N"] * (allowed + 1)), "rule.too_many_steps")
    table.submit(0, move(worker, *["N"] * allowed))
    assert board(table.state)["workers"] == {f"d{3 + allowed}": [worker]}


def test_mule_and_elephant_may_turn_between_steps() -> None:
    """The two steps of a Mule or Elephant are orthogonal steps in any directions."""
    table = at({"crates": SPARE, "workers": {"d3": ["red-M"], "f3": ["red-E"]}})
    table.submit(0, move("red-M", "N", "W"))
    table.submit(0, move("red-E", "E", "S"))
    assert board(table.state)["workers"] == {"c4": ["red-M"], "g2": ["red-E"]}


@pytest.mark.parametrize(
    ("square", "steps"),
    [("a4", ["W"]), ("d8", ["N"]), ("h6", ["E"]), ("f1", ["S"]), ("b5", ["W", "W"])],
)
def test_workers_never_move_off_the_dock(square: str, steps: list[str]) -> None:
    """No worker steps into the water or onto a ship itself (rule.off_dock)."""
    worker = "red-M" if len(steps) == 2 else "red-B"
    table = at({"crates": SPARE, "workers": {square: [worker]}})
    rejects(table, 0, move(worker, *steps), "rule.off_dock")


def test_a_worker_cannot_step_onto_another_worker() -> None:
    """Burly, Mule and Elephant never share a square (rule.square_occupied)."""
    table = at(
        {
            "crates": SPARE,
            "workers": {"d4": ["red-B"], "d5": ["green-D1"], "e4": ["green-M"], "c4": ["red-E"]},
        }
    )
    rejects(table, 0, move("red-B", "N"), "rule.square_occupied")
    rejects(table, 0, move("red-B", "E"), "rule.square_occupied")
    rejects(table, 0, move("red-E", "E"), "rule.square_occupied")


def test_a_mule_cannot_move_through_a_worker() -> None:
    """Workers cannot move through squares held by other workers."""
    table = at({"crates": SPARE, "workers": {"d3": ["red-M"], "d4": ["green-D1"]}})
    rejects(table, 0, move("red-M", "N", "N"), "rule.square_occupied")


def test_a_plain_step_into_a_crate_is_refused() -> None:
    """A worker cannot stand on a crate: stepping into one is only possible as a push."""
    table = at({"crates": {**SPARE, "d5": "green"}, "workers": {"d4": ["red-B"]}})
    rejects(table, 0, move("red-B", "N"), "rule.square_occupied")


def test_a_dockhand_may_step_onto_dockhands() -> None:
    """Dockhands share squares with Dockhands of any owner, but not with other workers."""
    table = at(
        {
            "crates": SPARE,
            "workers": {"d4": ["red-D1"], "d5": ["green-D1", "green-D2"], "c4": ["green-B"]},
        }
    )
    rejects(table, 0, move("red-D1", "W"), "rule.square_occupied")
    table.submit(0, move("red-D1", "N"))
    assert board(table.state)["workers"] == {
        "d5": ["green-D1", "green-D2", "red-D1"],
        "c4": ["green-B"],
    }


def test_a_stack_of_dockhands_moves_together_and_counts_as_several() -> None:
    """A stack of own Dockhands moves as one, each Dockhand using one of the 3 moves."""
    table = at({"crates": SPARE, "workers": {"d4": ["red-D1", "red-D2"], "f4": ["red-B"]}})
    table.submit(0, move(["red-D1", "red-D2"], "W"))
    assert board(table.state)["workers"] == {"c4": ["red-D1", "red-D2"], "f4": ["red-B"]}
    assert table.state.moves_left == 1
    rejects(table, 0, move("red-D1", "W"), "rule.worker_already_moved")


def test_a_stack_pushes_as_many_crates_as_it_has_dockhands() -> None:
    """Two Dockhands push two crates; two cannot push three (rule.too_heavy)."""
    crates = {**SPARE, "d5": "green", "d6": "green"}
    table = at({"crates": crates, "workers": {"d4": ["red-D1", "red-D2", "red-D3"]}})
    rejects(table, 0, move("red-D1", "N:push"), "rule.too_heavy")
    table.submit(0, move(["red-D1", "red-D2"], "N:push"))
    assert board(table.state) == {
        "crates": {**SPARE, "d6": "green", "d7": "green"},
        "workers": {"d4": ["red-D3"], "d5": ["red-D1", "red-D2"]},
    }

    table = at({"crates": {**crates, "d7": "red"}, "workers": {"d4": ["red-D1", "red-D2"]}})
    rejects(table, 0, move(["red-D1", "red-D2"], "N:push"), "rule.too_heavy")


def test_part_of_a_stack_may_move_alone() -> None:
    """A Dockhand may leave its stack; the others stay."""
    table = at({"crates": SPARE, "workers": {"d4": ["red-D1", "red-D2", "green-D1"]}})
    table.submit(0, move("red-D2", "S"))
    assert board(table.state)["workers"] == {"d4": ["green-D1", "red-D1"], "d3": ["red-D2"]}


def test_only_dockhands_stack() -> None:
    """Several workers move at once only as a Dockhand stack (rule.only_dockhands_stack)."""
    table = at({"crates": SPARE, "workers": {"d4": ["red-D1"], "d3": ["red-B"]}})
    rejects(table, 0, move(["red-D1", "red-B"], "E"), "rule.only_dockhands_stack")


def test_a_stack_moves_only_from_one_square() -> None:
    """Dockhands on different squares are not a stack (rule.stack_not_together)."""
    table = at({"crates": SPARE, "workers": {"d4": ["red-D1"], "d3": ["red-D2"]}})
    rejects(table, 0, move(["red-D1", "red-D2"], "E"), "rule.stack_not_together")


def test_a_stack_not_together_is_reported_before_the_move_limit() -> None:
    """Three Dockhands on two squares with one move left: the command is wrong as a stack,
    whatever the count, so rule.stack_not_together, not rule.no_moves_left."""
    table = at({"crates": SPARE, "moves_left": 1,
                "workers": {"d4": ["red-D1", "red-D2"], "d3": ["red-D3"]}})
    rejects(table, 0, move(["red-D1", "red-D2", "red-D3"], "E"), "rule.stack_not_together")
    rejects(table, 0, move(["red-D1", "red-D2"], "E"), "rule.no_moves_left")


def test_messages_name_an_elephant_with_its_article() -> None:
    table = at({"crates": SPARE, "workers": {"c3": ["red-E"]}})
    error = rejects(table, 0, move("red-E", "N", "N", "N"), "rule.too_many_steps")
    assert error.message.startswith("an elephant moves at most 2 step(s)")
    table = at({"crates": {**SPARE, "d3": "green", "e3": "green", "f3": "green"},
                "workers": {"c3": ["red-E"]}})
    error = rejects(table, 0, move("red-E", "E:push"), "rule.too_heavy")
    assert "an elephant pushing here" in error.message and " a elephant" not in error.message
    table = at({"crates": SPARE, "workers": {"c3": ["red-B"]}})
    assert "a burly cannot pull" in rejects(table, 0, move("red-B", "N:pull"),
                                            "rule.cannot_pull").message


def test_a_stack_cannot_include_an_opponents_dockhand() -> None:
    """Only your own Dockhands move with your stack (rule.not_your_worker)."""
    table = at({"crates": SPARE, "workers": {"d4": ["red-D1", "green-D1"]}})
    rejects(table, 0, move(["red-D1", "green-D1"], "E"), "rule.not_your_worker")
