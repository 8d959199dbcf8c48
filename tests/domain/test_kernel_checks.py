"""The rules every game shares are checked once, by the kernel (``Game.check``), for every
registered game and every command: a seat the game does not have is ``rule.no_such_seat``, a
finished game ``rule.game_over``, a seat the game is not waiting for ``rule.not_your_turn``
(unless the game's ``out_of_turn`` lets it send that command). The games' own ``decide`` no
longer has these checks: a game that leaves them out is still guarded."""

from __future__ import annotations

import json
from typing import Any

import pytest

from domain.kernel import LocalGame, Rng, RuleError
from domain.registry import all_games, get_game

from .recorded import FIXTURE

GAMES = [g.id for g in all_games()]
RECORDED: list[Any] = json.loads(FIXTURE.read_text())
SEED = bytes([3]) * 32


def opening(game_id: str) -> LocalGame[Any, Any, Any, Any, Any]:
    game = get_game(game_id)
    return LocalGame.new(game, SEED, max(game.min_seats, 2))


def a_legal_command(table: LocalGame[Any, Any, Any, Any, Any]) -> tuple[int, Any]:
    """A seat to act and a command of it the rules accept now."""
    game = table.game
    for seat in game.to_act(table.state):
        for command in game.legal(table.state, seat):
            try:
                game.decide(table.state, seat, command, table.rng())
            except RuleError:
                continue
            return seat, command
    raise AssertionError("no seat has an accepted command")


def refused(table: LocalGame[Any, Any, Any, Any, Any], seat: int, command: Any) -> RuleError:
    before = table.version
    with pytest.raises(RuleError) as caught:
        table.submit(seat, command)
    assert table.version == before
    return caught.value


@pytest.mark.parametrize("game_id", GAMES)
def test_a_seat_the_game_does_not_have_is_refused_for_every_game(game_id: str) -> None:
    table = opening(game_id)
    seats = table.game.seats(table.state)
    _, command = a_legal_command(table)
    for bad in (seats, seats + 5, -1):
        error = refused(table, bad, command)
        assert error.code == "rule.no_such_seat", error.message
        assert error.message == f"this game has seats 0 to {seats - 1}"


@pytest.mark.parametrize("game_id", GAMES)
def test_a_seat_out_of_turn_is_refused_for_every_game(game_id: str) -> None:
    table = opening(game_id)
    game = table.game
    # Play until some seat is not to act (Curious Cargo opens with a simultaneous draft).
    for _ in range(200):
        waiting = game.to_act(table.state)
        idle = [s for s in range(game.seats(table.state)) if s not in waiting]
        if idle:
            break
        table.submit(*a_legal_command(table))
    else:
        raise AssertionError("every seat stayed to act")
    mover, command = a_legal_command(table)
    assert not game.out_of_turn(table.state, idle[0], command)
    error = refused(table, idle[0], command)
    assert error.code == "rule.not_your_turn", error.message
    assert error.details == {"to_act": waiting}
    table.submit(mover, command)  # the same command from the seat to act is accepted


def finished(game_id: str) -> LocalGame[Any, Any, Any, Any, Any]:
    """The shortest recorded game of ``game_id``, replayed to its end."""
    game = get_game(game_id)
    recorded = min((r for r in RECORDED if r["game"] == game_id), key=lambda r: r["events"])
    options = game.decode_options(recorded["options"])
    table = LocalGame.new(game, bytes.fromhex(recorded["seed"]), recorded["seats"], options)
    for seat, raw, _ in recorded["commands"]:
        table.submit(seat, game.decode_command(raw))
    assert game.outcome(table.state) is not None
    return table


@pytest.mark.parametrize("game_id", GAMES)
def test_a_finished_game_refuses_every_command_for_every_game(game_id: str) -> None:
    table = finished(game_id)
    game = table.game
    seats = game.seats(table.state)
    last = game.decode_command(
        next(r for r in RECORDED if r["game"] == game_id)["commands"][-1][1]
    )
    for seat in range(seats):
        error = refused(table, seat, last)
        assert error.code == "rule.game_over", error.message
    assert refused(table, seats, last).code == "rule.no_such_seat"  # the seat comes first


@pytest.mark.parametrize("game_id", GAMES)
def test_the_kernel_guards_a_game_whose_decide_checks_nothing(game_id: str) -> None:
    """The attack: a game's ``decide`` that accepts anything (as a new game's author might
    write it) still never sees a bad seat, a finished game or a seat out of turn."""
    import dataclasses

    seen: list[int] = []

    def anything(state: Any, seat: int, command: Any, rng: Rng) -> list[Any]:
        seen.append(seat)
        return []

    game = get_game(game_id)
    careless = dataclasses.replace(
        game, decider=dataclasses.replace(game.decider, decide=anything)
    )
    table = LocalGame.new(careless, SEED, max(careless.min_seats, 2))
    _, command = a_legal_command(opening(game_id))
    seats = careless.seats(table.state)
    with pytest.raises(RuleError, match="seats 0 to"):
        careless.decide(table.state, seats, command, table.rng())
    done = finished(game_id).state
    with pytest.raises(RuleError, match="the game is over"):
        careless.decide(done, 0, command, table.rng())
    assert seen == []
