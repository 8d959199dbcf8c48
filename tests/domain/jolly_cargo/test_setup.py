"""CARGO set-up: crates, the ship roll, ships, workers and the roll for the first move."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from domain.jolly_cargo import JOLLY_CARGO
from domain.jolly_cargo.commands import (
    ChooseShip,
    EndTurn,
    Move,
    PlaceCrate,
    PlaceWorker,
)
from domain.jolly_cargo.events import (
    CratePlaced,
    CratesTurnedUp,
    DiceRolled,
    ShipChosen,
    TurnBegan,
)
from domain.kernel import AUDITOR, SPECTATOR, LocalGame, Viewer, seat

from .support import SEED, move, rejects

CORNERS = ["a1", "h1", "a8", "h8"]


def new(seats: int = 2, **options: Any) -> LocalGame[Any, Any, Any, Any, Any]:
    return LocalGame.new(JOLLY_CARGO, SEED, seats, JOLLY_CARGO.decode_options(options))


def step(table: LocalGame[Any, Any, Any, Any, Any]) -> list[Any]:
    """Play the first legal command of the seat to act."""
    who = JOLLY_CARGO.to_act(table.state)[0]
    return table.submit(who, JOLLY_CARGO.legal(table.state, who)[0])


def until(table: LocalGame[Any, Any, Any, Any, Any], phase: str) -> list[Any]:
    """Take legal commands until ``phase``; return the events of the last command."""
    events: list[Any] = []
    while table.state.phase != phase:
        events = step(table)
    return events


def rolled(events: list[Any], purpose: str) -> DiceRolled:
    (roll,) = [e for e in events if isinstance(e, DiceRolled) and e.purpose == purpose]
    return roll


# --- crates -------------------------------------------------------------------------------------
@pytest.mark.parametrize(("seats", "per"), [(2, 10), (3, 7), (4, 5)])
def test_crates_per_player_count(seats: int, per: int) -> None:
    """10 crates each with 2 players, 7 with 3, 5 with 4."""
    table = new(seats)
    placed = 0
    while table.state.phase == "crates":
        step(table)
        placed += 1
    assert placed == seats * per
    until(table, "workers")
    assert Counter(table.state.crates.values()) == {c: per for c in table.state.colours}


def test_crates_never_on_corners() -> None:
    """The four corner squares never take a crate (rule.corner)."""
    table = new()
    for square in CORNERS:
        rejects(table, 0, PlaceCrate(square), "rule.corner")
    assert not any(
        isinstance(c, PlaceCrate) and c.square in CORNERS for c in JOLLY_CARGO.legal(table.state, 0)
    )


def test_crates_never_on_a_crate() -> None:
    """A crate goes on an empty square (rule.square_occupied)."""
    table = new()
    table.submit(0, PlaceCrate("c4"))
    rejects(table, 1, PlaceCrate("c4"), "rule.square_occupied")


def test_crates_are_placed_in_seat_order() -> None:
    """Players place the crates one at a time, in seat order (rule.not_your_turn)."""
    table = new(3)
    rejects(table, 1, PlaceCrate("c4"), "rule.not_your_turn")
    for who, square in [(0, "c4"), (1, "d4"), (2, "e4"), (0, "f4")]:
        for other in {0, 1, 2} - {who}:
            rejects(table, other, PlaceCrate("b2"), "rule.not_your_turn")
        table.submit(who, PlaceCrate(square))
    assert sorted(table.state.crates) == ["c4", "d4", "e4", "f4"]


def test_face_down_crates_are_hidden_from_all_but_the_auditor() -> None:
    """A face-down crate's colour is hidden from spectators and every seat, views and events."""
    table = new()
    table.submit(0, PlaceCrate("c4"))
    table.submit(1, PlaceCrate("d4"))
    viewers: list[Viewer] = [SPECTATOR, seat(0), seat(1)]
    for viewer in viewers:
        shown = JOLLY_CARGO.view(table.state, viewer)
        assert [(c.square, c.colour, c.face_down) for c in shown.crates] == [
            ("c4", None, True),
            ("d4", None, True),
        ]
        assert [p.crates_on_dock for p in shown.players] == [None, None]
        for event in table.events:
            if isinstance(event, CratePlaced):
                assert JOLLY_CARGO.event_view(event, viewer).colour is None
    audited = JOLLY_CARGO.view(table.state, AUDITOR)
    assert {c.square: c.colour for c in audited.crates} == table.state.crates
    placed = [e for e in table.events if isinstance(e, CratePlaced)]
    assert [JOLLY_CARGO.event_view(e, AUDITOR).colour for e in placed] == [
        table.state.crates["c4"],
        table.state.crates["d4"],
    ]


def test_random_crate_placement() -> None:
    """Option crate_placement=random: all crates scattered off the corners, then the ship roll."""
    table = new(2, crate_placement="random")
    assert table.state.phase == "ships"
    assert len(table.state.crates) == 20
    assert not set(table.state.crates) & set(CORNERS)
    assert Counter(table.state.crates.values()) == {"red": 10, "green": 10}
    assert rolled(table.events, "ships").winner == JOLLY_CARGO.to_act(table.state)[0]
    for event in table.events:
        if isinstance(event, CratePlaced):
            assert JOLLY_CARGO.event_view(event, SPECTATOR).colour is None
    assert all(c.colour is None for c in JOLLY_CARGO.view(table.state, seat(0)).crates)


# --- ships --------------------------------------------------------------------------------------
def test_die_roll_after_the_last_crate_picks_who_chooses_first() -> None:
    """After the last crate a die roll (purpose ships) decides who chooses a ship first."""
    table = new()
    events: list[Any] = []
    for _ in range(19):
        events = step(table)
        assert not any(isinstance(e, DiceRolled) for e in events)
    events = step(table)
    roll = rolled(events, "ships")
    assert table.state.phase == "ships"
    assert JOLLY_CARGO.to_act(table.state) == [roll.winner]
    top = max(r.value for r in roll.rounds[-1])
    assert [r.seat for r in roll.rounds[-1] if r.value == top] == [roll.winner]


def test_ships_chosen_in_turn_from_the_winner_last_one_automatic() -> None:
    """Ships are chosen in turn from the roll's winner; the last ship goes by itself."""
    table = new(3)
    winner = rolled(until(table, "ships"), "ships").winner
    second, third = (winner + 1) % 3, (winner + 2) % 3
    rejects(table, second, ChooseShip("red"), "rule.not_your_turn")
    rejects(table, winner, ChooseShip("yellow"), "rule.ship_not_in_play")
    table.submit(winner, ChooseShip("green"))
    rejects(table, third, ChooseShip("red"), "rule.not_your_turn")
    rejects(table, second, ChooseShip("green"), "rule.ship_taken")
    events = table.submit(second, ChooseShip("red"))
    assert [e for e in events if isinstance(e, ShipChosen)] == [
        ShipChosen(second, "red"),
        ShipChosen(third, "blue", automatic=True),
    ]
    colours = [p.colour for p in table.state.players]
    assert (colours[winner], colours[second], colours[third]) == ("green", "red", "blue")


def test_crates_turn_up_once_the_ships_are_chosen() -> None:
    """All crates are turned face up after the ships are chosen, not before."""
    table = new()
    winner = rolled(until(table, "ships"), "ships").winner
    rejects(table, winner, ChooseShip("blue"), "rule.ship_not_in_play")
    assert all(c.colour is None for c in JOLLY_CARGO.view(table.state, SPECTATOR).crates)
    events = table.submit(winner, ChooseShip("green"))
    assert ShipChosen(1 - winner, "red", automatic=True) in events
    (up,) = [e for e in events if isinstance(e, CratesTurnedUp)]
    assert up.crates == table.state.crates
    assert table.state.phase == "workers"
    assert not table.state.crates_face_down
    shown = JOLLY_CARGO.view(table.state, SPECTATOR)
    assert {c.square: c.colour for c in shown.crates} == table.state.crates
    assert JOLLY_CARGO.event_view(up, SPECTATOR).crates == table.state.crates


# --- workers ------------------------------------------------------------------------------------
def ready_for_workers(seats: int = 2) -> tuple[LocalGame[Any, Any, Any, Any, Any], int]:
    """A table with crates placed by the players on ranks 5 to 7, and ships chosen."""
    table = new(seats)
    files = "abcdefgh"
    squares = [f"{f}{r}" for r in range(5, 8) for f in files]
    for i in range(seats * {2: 10, 3: 7, 4: 5}[seats]):
        table.submit(JOLLY_CARGO.to_act(table.state)[0], PlaceCrate(squares[i]))
    winner = rolled(table.events, "ships").winner
    until(table, "workers")
    return table, winner


def colour(table: LocalGame[Any, Any, Any, Any, Any], who: int) -> str:
    return str(table.state.players[who].colour)


def test_workers_are_placed_one_at_a_time_from_the_winner() -> None:
    """Workers are placed one at a time, in turn, starting with the ship roll's winner."""
    table, winner = ready_for_workers()
    other = 1 - winner
    mine, theirs = colour(table, winner), colour(table, other)
    assert JOLLY_CARGO.to_act(table.state) == [winner]
    rejects(table, other, PlaceWorker(f"{theirs}-B", "b1"), "rule.not_your_turn")
    table.submit(winner, PlaceWorker(f"{mine}-B", "b1"))
    rejects(table, winner, PlaceWorker(f"{mine}-M", "c1"), "rule.not_your_turn")
    rejects(table, other, PlaceWorker(f"{mine}-M", "c1"), "rule.not_your_worker")
    table.submit(other, PlaceWorker(f"{theirs}-B", "c1"))
    table.submit(winner, PlaceWorker(f"{mine}-M", "d1"))
    assert table.state.workers == {f"{mine}-B": "b1", f"{theirs}-B": "c1", f"{mine}-M": "d1"}


def test_placing_workers_dockhands_share_others_do_not() -> None:
    """Dockhands of any owner share squares; nothing else shares, and nothing goes on a crate."""
    table, winner = ready_for_workers()
    other = 1 - winner
    mine, theirs = colour(table, winner), colour(table, other)
    table.submit(winner, PlaceWorker(f"{mine}-D1", "b1"))
    table.submit(other, PlaceWorker(f"{theirs}-D1", "b1"))
    table.submit(winner, PlaceWorker(f"{mine}-D2", "b1"))
    rejects(table, other, PlaceWorker(f"{theirs}-B", "b1"), "rule.square_occupied")
    rejects(table, other, PlaceWorker(f"{theirs}-D2", "c5"), "rule.square_occupied")  # crate
    table.submit(other, PlaceWorker(f"{theirs}-E", "c1"))
    rejects(table, winner, PlaceWorker(f"{mine}-D3", "c1"), "rule.square_occupied")
    rejects(table, winner, PlaceWorker(f"{mine}-M", "c1"), "rule.square_occupied")
    rejects(table, winner, PlaceWorker(f"{mine}-D3", "d6"), "rule.square_occupied")  # crate
    assert sorted(w for w, sq in table.state.workers.items() if sq == "b1") == sorted(
        [f"{mine}-D1", f"{mine}-D2", f"{theirs}-D1"]
    )


def test_seven_workers_each_then_the_first_move_roll() -> None:
    """After 7 workers each, a second roll (first_move) picks who moves first, with 1 worker."""
    table, _ = ready_for_workers()
    events: list[Any] = []
    for placed in range(14):
        assert table.state.phase == "workers"
        events = step(table)
        assert len(table.state.workers) == placed + 1
    assert Counter(w.split("-")[0] for w in table.state.workers) == {"red": 7, "green": 7}
    first = rolled(events, "first_move").winner
    assert [e for e in events if isinstance(e, TurnBegan)] == [TurnBegan(first, 1, 1)]
    assert table.state.phase == "play"
    assert (table.state.current, table.state.moves_left) == (first, 1)


@pytest.mark.parametrize("seats", [2, 3])
def test_opening_turns_move_one_then_two_then_three(seats: int) -> None:
    """The first player moves 1 worker, the second 2, the next ones 3; play goes in seat order."""
    table, _ = ready_for_workers(seats)
    first = rolled(until(table, "play"), "first_move").winner
    began: list[tuple[int, int]] = []
    for _ in range(seats + 1):
        who, moves = table.state.current, table.state.moves_left
        began.append((who, moves))
        for _ in range(moves):
            assert table.state.current == who
            action = next(
                c
                for c in JOLLY_CARGO.legal(table.state, who)
                if isinstance(c, Move) and all(s.kind == "move" for s in c.steps)
            )
            table.submit(who, action)
        assert table.state.current != who
    expected = [1, 2, 3, 3, 3][: seats + 1]
    assert began == [((first + i) % seats, m) for i, m in enumerate(expected)]


def test_commands_in_the_wrong_phase() -> None:
    """Set-up and play commands only in their phase (rule.wrong_phase)."""
    table = new()
    rejects(table, 0, ChooseShip("red"), "rule.wrong_phase")
    rejects(table, 0, PlaceWorker("red-B", "b1"), "rule.wrong_phase")
    rejects(table, 0, move("red-B", "N"), "rule.wrong_phase")
    rejects(table, 0, EndTurn(), "rule.wrong_phase")
    winner = rolled(until(table, "ships"), "ships").winner
    rejects(table, winner, PlaceCrate("b2"), "rule.wrong_phase")
    rejects(table, winner, PlaceWorker("red-B", "b1"), "rule.wrong_phase")
    until(table, "workers")
    rejects(table, winner, ChooseShip("red"), "rule.wrong_phase")
    rejects(table, winner, EndTurn(), "rule.wrong_phase")
    until(table, "play")
    who = table.state.current
    rejects(table, who, PlaceCrate("b2"), "rule.wrong_phase")
    rejects(table, who, PlaceWorker("red-B", "b1"), "rule.wrong_phase")
    rejects(table, who, ChooseShip("red"), "rule.wrong_phase")


def test_a_worker_is_placed_once() -> None:
    """Each of the 7 workers is placed once (rule.worker_placed)."""
    table, winner = ready_for_workers()
    other = 1 - winner
    mine, theirs = colour(table, winner), colour(table, other)
    table.submit(winner, PlaceWorker(f"{mine}-E", "b1"))
    table.submit(other, PlaceWorker(f"{theirs}-E", "c1"))
    rejects(table, winner, PlaceWorker(f"{mine}-E", "d3"), "rule.worker_placed")
