"""CARGO: the sea, the water, the Doctor, loading areas and the points they give."""

from __future__ import annotations

from typing import Any

from domain.jolly_cargo import JOLLY_CARGO
from domain.jolly_cargo.commands import EndTurn, PlaceHeldCrate, ReturnWorker
from domain.jolly_cargo.state import HeldCrate
from domain.kernel import LocalGame

from .support import SPARE, at, board, move, rejects

THREE_PLAYERS = [{"colour": "red"}, {"colour": "blue"}, {"colour": "green"}]
SPARE3 = {"a8": "red", "h1": "blue", "h8": "green"}


def scores(table: LocalGame[Any, Any, Any, Any, Any]) -> list[int]:
    return [p.score for p in table.state.players]


# --- the sea ------------------------------------------------------------------------------------
def test_opponents_crate_into_the_sea_scores_one() -> None:
    """An opponent's crate pushed into the sea: +1 to the mover, and it counts as captured."""
    table = at({"crates": {**SPARE, "a3": "green"}, "workers": {"b3": ["red-D1"]}})
    table.submit(0, move("red-D1", "W:push"))
    assert board(table.state) == {"crates": SPARE, "workers": {"a3": ["red-D1"]}}
    assert scores(table) == [1, 0]
    assert [p.captured for p in table.state.players] == [1, 0]


def test_own_crate_into_the_sea_costs_one() -> None:
    """Your own crate pushed into the sea: −1, and nothing captured."""
    table = at({"crates": {**SPARE, "a3": "red"}, "workers": {"b3": ["red-D1"]}})
    table.submit(0, move("red-D1", "W:push"))
    assert board(table.state) == {"crates": SPARE, "workers": {"a3": ["red-D1"]}}
    assert scores(table) == [-1, 0]
    assert [p.captured for p in table.state.players] == [0, 0]


# --- the water ----------------------------------------------------------------------------------
def test_worker_in_the_water_returns_first_onto_a_loading_square() -> None:
    """A worker shoved into the water comes back onto one of its owner's loading squares,
    at the start of the owner's next turn, before anything else."""
    table = at(
        {
            "crates": {**SPARE, "b3": "red"},
            "workers": {"c3": ["red-D1"], "a3": ["green-B"], "f5": ["green-M"]},
        }
    )
    table.submit(0, move("red-D1", "W:push"))
    assert table.state.water == ["green-B"]
    assert board(table.state)["workers"] == {"b3": ["red-D1"], "f5": ["green-M"]}
    assert scores(table) == [0, 0]
    table.submit(0, EndTurn())

    rejects(table, 1, move("green-M", "N"), "rule.return_workers_first")
    rejects(table, 1, EndTurn(), "rule.return_workers_first")
    rejects(table, 1, ReturnWorker("green-B", "c3"), "rule.not_a_loading_square")
    rejects(table, 1, ReturnWorker("green-B", "d8"), "rule.not_a_loading_square")
    assert JOLLY_CARGO.legal(table.state, 1) == [
        ReturnWorker("green-B", "d1"),
        ReturnWorker("green-B", "e1"),
    ]
    table.submit(1, ReturnWorker("green-B", "e1"))
    assert table.state.water == []
    assert board(table.state)["workers"] == {"b3": ["red-D1"], "e1": ["green-B"], "f5": ["green-M"]}
    assert table.state.moves_left == 3
    table.submit(1, move("green-M", "N"))


def test_worker_pushed_onto_a_ship_falls_in_the_water() -> None:
    """A worker pushed off the dock at a ship goes into the water like any other."""
    table = at({"crates": {**SPARE, "e7": "red"}, "workers": {"e6": ["red-B"], "e8": ["green-D1"]}})
    table.submit(0, move("red-B", "N:push"))
    assert table.state.water == ["green-D1"]
    assert board(table.state) == {"crates": SPARE, "workers": {"e7": ["red-B"]}}
    assert scores(table) == [3, 0]  # the red crate was loaded; the Dockhand scores nothing


def test_worker_fallen_in_during_its_owners_turn_waits() -> None:
    """A worker that falls in during its owner's own turn comes back on the next turn."""
    table = at(
        {
            "crates": {**SPARE, "b3": "green"},
            "workers": {"c3": ["red-D1"], "a3": ["red-M"], "f5": ["red-B"]},
        }
    )
    table.submit(0, move("red-D1", "W:push"))
    assert table.state.water == ["red-M"]
    rejects(table, 0, ReturnWorker("red-M", "d8"), "rule.returns_closed")
    table.submit(0, move("red-B", "N"))
    table.submit(0, EndTurn())
    table.submit(1, EndTurn())
    rejects(table, 0, move("red-D1", "E"), "rule.return_workers_first")
    table.submit(0, ReturnWorker("red-M", "d8"))
    assert board(table.state)["workers"] == {"b3": ["red-D1"], "d8": ["red-M"], "f6": ["red-B"]}


def test_returning_worker_may_join_dockhands_on_a_loading_square() -> None:
    """A rescued Dockhand may come back onto Dockhands; other workers need a free square."""
    table = at(
        {
            "crates": SPARE,
            "workers": {"d8": ["green-D1"], "e8": ["green-B"]},
            "water": ["red-D1", "red-B"],
        }
    )
    rejects(table, 0, ReturnWorker("red-B", "d8"), "rule.square_occupied")
    rejects(table, 0, ReturnWorker("red-B", "e8"), "rule.square_occupied")
    table.submit(0, ReturnWorker("red-D1", "d8"))
    assert board(table.state)["workers"] == {"d8": ["green-D1", "red-D1"], "e8": ["green-B"]}
    # the Burly has no free loading square: it waits, and play goes on
    table.submit(0, EndTurn())
    assert table.state.water == ["red-B"]


# --- the Doctor ---------------------------------------------------------------------------------
SQUISH = {
    "crates": {**SPARE, "d4": "red", "f4": "red"},
    "workers": {"c4": ["red-D1"], "e4": ["green-D1"], "b6": ["green-B"], "a2": ["red-D2"]},
}


def test_squished_dockhand_misses_the_next_turn_then_returns_to_an_edge() -> None:
    """A squished Dockhand misses its owner's next turn, then returns onto an edge square."""
    table = at(SQUISH)
    table.submit(0, move("red-D1", "E:push"))
    assert list(table.state.doctor) == ["green-D1"]
    assert "green-D1" not in table.state.workers
    table.submit(0, EndTurn())

    rejects(table, 1, ReturnWorker("green-D1", "a3"), "rule.still_at_doctor")
    table.submit(1, EndTurn())
    table.submit(0, EndTurn())

    rejects(table, 1, ReturnWorker("green-D1", "d5"), "rule.not_an_edge_square")
    rejects(table, 1, ReturnWorker("green-D1", "b7"), "rule.not_an_edge_square")
    table.submit(1, ReturnWorker("green-D1", "a3"))
    assert table.state.doctor == {}
    assert table.state.workers["green-D1"] == "a3"
    assert table.state.moves_left == 3  # coming back is not one of the 3 moves


def test_doctor_return_onto_dockhands_on_the_edge() -> None:
    """A Dockhand back from the Doctor may join Dockhands on the edge, not other workers."""
    table = at(
        {
            "crates": SPARE,
            "workers": {"a2": ["red-D2"], "a3": ["red-B"]},
            "doctor": {"green-D1": 1},
            "to_move": 1,
        }
    )
    rejects(table, 1, ReturnWorker("green-D1", "a3"), "rule.square_occupied")
    table.submit(1, ReturnWorker("green-D1", "a2"))
    assert board(table.state)["workers"] == {"a2": ["green-D1", "red-D2"], "a3": ["red-B"]}


def test_doctor_returns_only_before_the_first_action() -> None:
    """Dockhands come back from the Doctor only at the start of a turn (rule.returns_closed)."""
    table = at(
        {
            "crates": SPARE,
            "workers": {"c5": ["green-B"]},
            "doctor": {"green-D1": 1},
            "to_move": 1,
        }
    )
    table.submit(1, move("green-B", "N"))
    rejects(table, 1, ReturnWorker("green-D1", "a3"), "rule.returns_closed")


def test_own_squished_dockhand_misses_the_next_turn_too() -> None:
    """Squishing your own Dockhand costs 1 point, and it misses your next turn."""
    table = at(
        {
            "crates": {**SPARE, "d4": "green", "f4": "green"},
            "workers": {"c4": ["red-D1"], "e4": ["red-D2"]},
        }
    )
    table.submit(0, move("red-D1", "E:push"))
    assert list(table.state.doctor) == ["red-D2"]
    assert scores(table) == [-1, 0]
    table.submit(0, EndTurn())
    table.submit(1, EndTurn())
    rejects(table, 0, ReturnWorker("red-D2", "a3"), "rule.still_at_doctor")
    table.submit(0, EndTurn())
    table.submit(1, EndTurn())
    table.submit(0, ReturnWorker("red-D2", "a3"))
    assert table.state.workers["red-D2"] == "a3"


def test_squish_points_go_to_the_player_whose_turn_it_is() -> None:
    """Squishing an opponent's Dockhand gives +1 to the mover, nothing to the victim."""
    table = at(
        {
            "crates": {**SPARE, "d4": "red", "f4": "red"},
            "workers": {"c4": ["green-D1"], "e4": ["red-D1", "red-D2"]},
            "to_move": 1,
        }
    )
    table.submit(1, move("green-D1", "E:push"))
    assert sorted(table.state.doctor) == ["red-D1", "red-D2"]
    assert scores(table) == [0, 2]


# --- loading ------------------------------------------------------------------------------------
def test_own_crate_loaded_scores_three() -> None:
    """Your crate pushed onto your loading area leaves the dock and scores +3."""
    table = at({"crates": {**SPARE, "d7": "red"}, "workers": {"d6": ["red-D1"]}})
    table.submit(0, move("red-D1", "N:push"))
    assert board(table.state) == {"crates": SPARE, "workers": {"d7": ["red-D1"]}}
    assert scores(table) == [3, 0]
    assert [p.loaded for p in table.state.players] == [1, 0]


def test_crate_pushed_onto_its_owners_area_by_another_scores_for_the_owner() -> None:
    """Pushing an opponent's crate onto their own loading area gives them 3 points."""
    table = at({"crates": {**SPARE, "e7": "red"}, "workers": {"e6": ["green-B"]}, "to_move": 1})
    table.submit(1, move("green-B", "N:push"))
    assert board(table.state) == {"crates": SPARE, "workers": {"e7": ["green-B"]}}
    assert scores(table) == [3, 0]
    assert [p.loaded for p in table.state.players] == [1, 0]


def test_opponents_crate_on_your_area_is_placed_back_at_the_end_of_your_turn() -> None:
    """An opponent's crate on the mover's loading area is held, then placed back by the mover
    at the end of the turn, on an empty square that is not a loading square."""
    table = at({"crates": {**SPARE, "d7": "green"}, "workers": {"d6": ["red-D1"]}})
    table.submit(0, move("red-D1", "N:push"))
    assert board(table.state) == {"crates": SPARE, "workers": {"d7": ["red-D1"]}}
    assert table.state.held == [HeldCrate(0, "green")]
    assert scores(table) == [0, 0]

    rejects(table, 0, PlaceHeldCrate("green", "c4"), "rule.place_at_end_of_turn")
    table.submit(0, EndTurn())
    assert (table.state.current, JOLLY_CARGO.to_act(table.state)) == (0, [0])
    rejects(table, 0, PlaceHeldCrate("red", "c4"), "rule.no_held_crate")
    rejects(table, 1, PlaceHeldCrate("green", "c4"), "rule.no_held_crate")
    rejects(table, 0, PlaceHeldCrate("green", "d8"), "rule.loading_square")
    rejects(table, 0, PlaceHeldCrate("green", "d1"), "rule.loading_square")
    rejects(table, 0, PlaceHeldCrate("green", "d7"), "rule.square_occupied")
    rejects(table, 0, PlaceHeldCrate("green", "a8"), "rule.square_occupied")
    table.submit(0, PlaceHeldCrate("green", "c4"))
    assert board(table.state)["crates"] == {**SPARE, "c4": "green"}
    assert table.state.held == []
    assert (table.state.current, table.state.moves_left) == (1, 3)


def test_crate_on_a_third_players_area_is_placed_back_by_them_at_once() -> None:
    """A crate arriving on another player's area is placed back by that player at once;
    the mover waits."""
    table = at(
        {
            "players": THREE_PLAYERS,
            "crates": {**SPARE3, "g5": "green"},
            "workers": {"f5": ["red-D1"], "c3": ["red-B"]},
        }
    )
    table.submit(0, move("red-D1", "E:push"))
    assert table.state.held == [HeldCrate(1, "green")]
    assert JOLLY_CARGO.to_act(table.state) == [1]
    rejects(table, 0, move("red-B", "N"), "rule.waiting_for_placement")
    rejects(table, 0, EndTurn(), "rule.waiting_for_placement")
    rejects(table, 0, PlaceHeldCrate("green", "c6"), "rule.no_held_crate")
    rejects(table, 1, PlaceHeldCrate("green", "h4"), "rule.loading_square")
    table.submit(1, PlaceHeldCrate("green", "c6"))
    assert board(table.state)["crates"] == {**SPARE3, "c6": "green"}
    assert JOLLY_CARGO.to_act(table.state) == [0]
    assert (table.state.current, table.state.moves_left) == (0, 2)
    assert scores(table) == [0, 0, 0]
    table.submit(0, move("red-B", "N"))


def test_loading_squares_of_unplayed_ships_are_ordinary() -> None:
    """With red and green playing, crates pushed onto blue's h4 or yellow's a5 stay there."""
    table = at(
        {
            "crates": {**SPARE, "g4": "green", "b5": "red"},
            "workers": {"f4": ["red-D1"], "c5": ["red-B"]},
        }
    )
    table.submit(0, move("red-D1", "E:push"))
    table.submit(0, move("red-B", "W:push"))
    assert board(table.state)["crates"] == {**SPARE, "h4": "green", "a5": "red"}
    assert table.state.held == []
    assert scores(table) == [0, 0]


def test_a_pulled_crate_can_be_loaded() -> None:
    """A crate pulled onto its ship's loading area is loaded like a pushed one."""
    table = at({"crates": {**SPARE, "c8": "red"}, "workers": {"d8": ["red-M"]}})
    table.submit(0, move("red-M", "E:pull"))
    assert board(table.state) == {"crates": SPARE, "workers": {"e8": ["red-M"]}}
    assert scores(table) == [3, 0]
    assert table.state.players[0].loaded == 1


def test_a_pulled_opponents_crate_onto_your_area_is_held() -> None:
    """An opponent's crate pulled onto the mover's loading area is held for placing back."""
    table = at({"crates": {**SPARE, "c8": "green"}, "workers": {"d8": ["red-E"]}})
    table.submit(0, move("red-E", "E:pull"))
    assert board(table.state) == {"crates": SPARE, "workers": {"e8": ["red-E"]}}
    assert table.state.held == [HeldCrate(0, "green")]


def test_a_crate_resting_on_a_loading_square_pushed_beside_the_ship_falls_into_the_sea() -> None:
    """Decision: a crate on a loading square pushed off the dock toward its ship is lost at sea,
    scored like any crate into the sea, not loaded — boats are water only for workers, and a
    crate is loaded only by arriving on a loading square."""
    table = at({"crates": {**SPARE, "d8": "green", "e8": "red"},
                "workers": {"d7": ["red-D1"], "e7": ["red-D2"]}})
    table.submit(0, move("red-D1", "N:push"))  # green crate off red's loading square d8
    assert board(table.state) == {"crates": {**SPARE, "e8": "red"},
                                  "workers": {"d8": ["red-D1"], "e7": ["red-D2"]}}
    assert scores(table) == [1, 0] and [p.captured for p in table.state.players] == [1, 0]
    table.submit(0, move("red-D2", "N:push"))  # red's own crate off e8, beside its own ship
    assert board(table.state)["crates"] == SPARE
    assert scores(table) == [0, 0] and table.state.players[0].loaded == 0
