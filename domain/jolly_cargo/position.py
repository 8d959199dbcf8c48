"""The position form: a mid-game CARGO board as JSON, like FEN in chess.

Example (two players, red to move with 3 workers, nothing moved yet)::

    {"players": [{"colour": "red"}, {"colour": "green", "score": 2}],
     "crates": {"c4": "green", "f6": "red"},
     "workers": {"b4": ["red-B"], "d4": ["green-D1", "green-D2"]},
     "to_move": 0, "moves_left": 3}

Rules of the form:

* ``players`` lists the seats in order; each has a ship ``colour`` and optional ``score``,
  ``loaded``, ``captured`` and ``turns`` (turns begun, default 1).
* ``crates`` maps square → colour; only colours of the players' ships.
* ``workers`` maps square → worker ids. A square holds one worker, or any number of Dockhands.
  No worker shares a square with a crate.
* ``water`` and ``doctor`` (id → the owner's turn from which it may return) hold workers off the
  dock. A worker of a player that the position does not mention anywhere is out of the game —
  so a puzzle needs to list only the pieces it uses.
* ``held``: crates off the board waiting for a seat to place them back; ``sea``: colours of the
  crates lost at sea so far.
* ``to_move`` (seat), ``moves_left``, ``used`` (workers that already acted this turn), ``acted``
  and ``turn`` (the game's turn number, default 3 — past the short opening turns) say where in
  the turn play stands. ``options`` are the game's options.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from domain.kernel import CommandError
from domain.kernel import invalid_position as _bad
from domain.kernel.bounds import between

from . import board
from .board import Colour
from .options import CRATES_PER_PLAYER, Options
from .pieces import colour_of, crew, is_dockhand
from .state import HeldCrate, Player, State

# The bounds of a position's numbers (:mod:`domain.kernel.bounds`), from the component data.
#: A seat (2 to 4 players).
Seat = Annotated[int, between(0, 3)]
#: The most crates of a game (7 each with 3 players): each is loaded, captured or lost once, so
#: a score is at least minus the crates (-1 for one's own lost at sea) and at most 3 points a
#: crate (a crate loaded).
CRATES_MAX = max(n * c for n, c in CRATES_PER_PLAYER.items())
#: The most turns a position may name. Decision: 10,000 (docs/rules/jolly-cargo.md).
TURNS_MAX = 10_000


class PlayerPosition(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    colour: Colour
    score: Annotated[int, between(-CRATES_MAX, 3 * CRATES_MAX)] = 0
    loaded: Annotated[int, between(0, CRATES_MAX)] = 0
    captured: Annotated[int, between(0, CRATES_MAX)] = 0
    turns: Annotated[int, between(0, TURNS_MAX)] = 1


class HeldPosition(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    seat: Seat
    colour: Colour


class Position(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    players: list[PlayerPosition]
    crates: dict[str, Colour]
    workers: dict[str, list[str]]
    to_move: Seat = 0
    moves_left: Annotated[int, between(0, 3)] = 3
    used: list[str] = []
    acted: bool = False
    turn: Annotated[int, between(1, TURNS_MAX)] = 3
    water: list[str] = []
    #: The owner's turn from which the worker may return: two after the squish at most.
    doctor: dict[str, Annotated[int, between(0, TURNS_MAX + 2)]] = {}
    held: list[HeldPosition] = []
    sea: list[Colour] = []
    options: Options = Options()


def validate(p: Position) -> None:
    """Raise ``position.invalid`` naming the first thing wrong with the position."""
    seats = len(p.players)
    if not 2 <= seats <= 4:
        raise _bad("a position has 2 to 4 players")
    colours = [pl.colour for pl in p.players]
    if len(set(colours)) != seats:
        raise _bad("each player needs a ship of their own colour")
    if not 0 <= p.to_move < seats:
        raise _bad(f"to_move must be a seat from 0 to {seats - 1}")
    if not 0 <= p.moves_left <= 3 or p.turn < 1:
        raise _bad("moves_left is 0 to 3 and turn at least 1")
    for square, colour in p.crates.items():
        if square not in board.INDEX:
            raise _bad(f"{square!r} is not a square of the dock")
        if colour not in colours:
            raise _bad(f"crate on {square}: no player has the {colour} ship")
    seen: set[str] = set()
    allowed = {w for c in colours for w in crew(c)}

    def claim(worker: str) -> None:
        if worker not in allowed:
            raise _bad(f"{worker!r} is not a worker of a player in this position")
        if worker in seen:
            raise _bad(f"{worker} appears twice")
        seen.add(worker)

    for square, stack in p.workers.items():
        if square not in board.INDEX:
            raise _bad(f"{square!r} is not a square of the dock")
        if not stack:
            continue
        if square in p.crates:
            raise _bad(f"{square} holds a crate and a worker")
        for worker in stack:  # first: a Dockhand's check reads the id, so it must be one
            claim(worker)
        if len(stack) > 1 and not all(is_dockhand(w) for w in stack):
            raise _bad(f"{square}: only Dockhands share a square")
    for worker in [*p.water, *p.doctor]:
        claim(worker)
    for worker in p.doctor:
        if not is_dockhand(worker):
            raise _bad(f"{worker}: only Dockhands go to the Doctor")
    for worker in p.used:
        if worker not in seen or colour_of(worker) != colours[p.to_move]:
            raise _bad(f"used: {worker} is not a worker of the player to move")
    for h in p.held:
        if not 0 <= h.seat < seats or h.colour not in colours or h.colour == colours[h.seat]:
            raise _bad("held crates wait for a seat whose ship is not their colour")


def state_from_position(p: Position) -> State:
    """The state a position describes. No checks: a recorded position was validated when it was
    imported (:func:`validate`), and folding accepts any recorded event."""
    on_dock = {w: sq for sq, stack in p.workers.items() for w in stack}
    placed = set(on_dock) | set(p.water) | set(p.doctor)
    everyone = [w for pl in p.players for w in crew(pl.colour)]
    return State(
        seats=len(p.players),
        options=p.options,
        phase="play",
        players=[Player(pl.colour, pl.score, pl.loaded, pl.captured, pl.turns) for pl in p.players],
        colours=[pl.colour for pl in p.players],
        crates_per_player=0,
        crates=dict(p.crates),
        crates_face_down=False,
        workers=on_dock,
        water=list(p.water),
        doctor=dict(p.doctor),
        removed=[w for w in everyone if w not in placed],
        held=[HeldCrate(h.seat, h.colour) for h in p.held],
        sea=list(p.sea),
        order=list(range(len(p.players))),
        first_player=0,
        current=p.to_move,
        turn=p.turn,
        moves_left=p.moves_left,
        used=list(p.used),
        acted=p.acted,
    )


def position_of(s: State) -> Position:
    """Export a game in play; raises ``position.unavailable`` during set-up."""
    if s.phase != "play" or s.current is None:
        raise CommandError("position.unavailable", "a position exists once play has begun")
    stacks: dict[str, list[str]] = {}
    for worker, square in sorted(s.workers.items()):
        stacks.setdefault(square, []).append(worker)
    return Position(
        players=[
            PlayerPosition(p.colour, p.score, p.loaded, p.captured, p.turns)  # type: ignore[arg-type]
            for p in s.players
        ],
        crates=dict(sorted(s.crates.items())),
        workers=dict(sorted(stacks.items())),
        to_move=s.current,
        moves_left=s.moves_left,
        used=list(s.used),
        acted=s.acted,
        turn=s.turn,
        water=list(s.water),
        doctor=dict(s.doctor),
        held=[HeldPosition(h.seat, h.colour) for h in s.held],
        sea=list(s.sea),
        options=s.options,
    )
