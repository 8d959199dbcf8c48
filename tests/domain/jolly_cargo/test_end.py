"""CARGO: the end of the game, the winner, and the fast variant."""

from __future__ import annotations

import pytest

from domain.jolly_cargo import JOLLY_CARGO
from domain.jolly_cargo.commands import EndTurn, PlaceCrate, PlaceHeldCrate, ReturnWorker
from domain.jolly_cargo.events import GameEnded

from .support import SPARE, at, board, move, rejects

#: Red's last crate sits in front of its ship; green keeps a spare in a corner.
LAST_RED = {"d7": "red", "h8": "green"}


def test_game_ends_at_the_end_of_the_turn_a_player_runs_out() -> None:
    """No crates of a player left on the dock: the game ends when that turn ends, not before."""
    table = at({"crates": LAST_RED, "workers": {"d6": ["red-D1"], "c3": ["red-B"]}})
    table.submit(0, move("red-D1", "N:push"))
    assert table.state.phase == "play"
    assert JOLLY_CARGO.outcome(table.state) is None
    table.submit(0, move("red-B", "N"))  # the mover finishes the turn
    events = table.submit(0, EndTurn())
    assert table.state.phase == "finished"
    assert [e for e in events if isinstance(e, GameEnded)] == [
        GameEnded(scores=[3, 0], collected=[1, 0], winners=[0], emptied=[0])
    ]
    outcome = JOLLY_CARGO.outcome(table.state)
    assert outcome is not None
    assert (outcome.scores, outcome.winners) == ([3, 0], [0])
    assert outcome.details["collected"] == [1, 0]


def test_game_ends_after_the_third_worker_without_end_turn() -> None:
    """The turn, and so the game, ends by itself after the last of the 3 moves."""
    table = at({"crates": LAST_RED, "workers": {"d6": ["red-D1"]}, "moves_left": 1})
    table.submit(0, move("red-D1", "N:push"))
    assert table.state.phase == "finished"
    assert table.state.winners == [0]


def test_game_ends_when_an_opponent_runs_out() -> None:
    """Sinking the opponent's last crate also ends the game at the end of the turn."""
    table = at({"crates": {"a8": "red", "a3": "green"}, "workers": {"b3": ["red-D1"]}})
    table.submit(0, move("red-D1", "W:push"))
    assert table.state.phase == "play"
    table.submit(0, EndTurn())
    outcome = JOLLY_CARGO.outcome(table.state)
    assert outcome is not None
    assert (outcome.scores, outcome.winners) == ([1, 0], [0])
    assert outcome.details["captured"] == [1, 0]


def test_a_held_crate_put_back_keeps_the_game_going() -> None:
    """A last crate held on a loading area comes back at the end of the turn: no end."""
    table = at({"crates": {"a8": "red", "d7": "green"}, "workers": {"d6": ["red-D1"]}})
    table.submit(0, move("red-D1", "N:push"))
    table.submit(0, EndTurn())
    table.submit(0, PlaceHeldCrate("green", "c4"))
    assert table.state.phase == "play"
    assert table.state.current == 1


def test_most_points_win() -> None:
    """The player with the most points wins, whoever emptied the dock."""
    table = at(
        {
            "players": [{"colour": "red"}, {"colour": "green", "score": 5}],
            "crates": LAST_RED,
            "workers": {"d6": ["red-D1"]},
        }
    )
    table.submit(0, move("red-D1", "N:push"))
    table.submit(0, EndTurn())
    outcome = JOLLY_CARGO.outcome(table.state)
    assert outcome is not None
    assert (outcome.scores, outcome.winners) == ([3, 5], [1])


@pytest.mark.parametrize(
    ("green", "winners"),
    [
        ({"score": 3}, [0]),  # red collected 1 crate, green none
        ({"score": 3, "captured": 2}, [1]),  # green collected 2
        ({"score": 3, "loaded": 1}, [0, 1]),  # 1 each: shared
    ],
)
def test_tie_on_points_goes_to_most_crates_collected(
    green: dict[str, int], winners: list[int]
) -> None:
    """A tie on points goes to most crates collected (loaded plus captured), else is shared."""
    table = at(
        {
            "players": [{"colour": "red"}, {"colour": "green", **green}],
            "crates": LAST_RED,
            "workers": {"d6": ["red-D1"]},
        }
    )
    table.submit(0, move("red-D1", "N:push"))
    table.submit(0, EndTurn())
    outcome = JOLLY_CARGO.outcome(table.state)
    assert outcome is not None
    assert (outcome.scores, outcome.winners) == ([3, 3], winners)


def test_no_command_after_the_end() -> None:
    """Once the game is over every command is refused (rule.game_over)."""
    table = at({"crates": LAST_RED, "workers": {"d6": ["red-D1"], "c3": ["red-B"]}})
    table.submit(0, move("red-D1", "N:push"))
    table.submit(0, EndTurn())
    rejects(table, 0, move("red-B", "N"), "rule.game_over")
    rejects(table, 1, EndTurn(), "rule.game_over")
    rejects(table, 0, PlaceCrate("c4"), "rule.game_over")
    assert JOLLY_CARGO.to_act(table.state) == []
    assert JOLLY_CARGO.legal(table.state, 0) == []
    assert JOLLY_CARGO.legal(table.state, 1) == []


FAST = {"fast_variant": True}


def test_fast_variant_squished_dockhands_are_out_for_good() -> None:
    """Fast variant: a squished Dockhand leaves the game instead of going to the Doctor."""
    table = at(
        {
            "crates": {**SPARE, "d4": "red", "f4": "red"},
            "workers": {"c4": ["red-D1"], "e4": ["green-D1"]},
            "options": FAST,
        }
    )
    table.submit(0, move("red-D1", "E:push"))
    assert table.state.doctor == {}
    assert "green-D1" in table.state.removed
    assert table.state.players[0].score == 1
    table.submit(0, EndTurn())
    table.submit(1, EndTurn())
    table.submit(0, EndTurn())
    rejects(table, 1, ReturnWorker("green-D1", "a3"), "rule.not_off_dock")


def test_fast_variant_drowned_workers_are_out_for_good() -> None:
    """Fast variant: a worker pushed into the water never comes back."""
    table = at(
        {
            "crates": {**SPARE, "b3": "red"},
            "workers": {"c3": ["red-D1"], "a3": ["green-B"], "f5": ["green-M"]},
            "options": FAST,
        }
    )
    table.submit(0, move("red-D1", "W:push"))
    assert table.state.water == []
    assert "green-B" in table.state.removed
    table.submit(0, EndTurn())
    rejects(table, 1, ReturnWorker("green-B", "d1"), "rule.not_off_dock")
    table.submit(1, move("green-M", "N"))  # no return is owed first
    assert board(table.state)["workers"] == {"b3": ["red-D1"], "f6": ["green-M"]}
