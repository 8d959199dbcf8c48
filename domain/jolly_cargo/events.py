"""What happened. Events are facts: ``evolve`` applies them without checking or chance."""

from __future__ import annotations

from typing import ClassVar

import msgspec

from .board import Colour
from .commands import Step
from .options import Options
from .position import Position


class E(msgspec.Struct, frozen=True, tag_field="type"):
    """Base of CARGO's events."""


class GameStarted(E, frozen=True, tag="game_started"):
    seats: int
    options: Options
    colours: list[Colour]
    crates_per_player: int


class PositionLoaded(E, frozen=True, tag="position_loaded"):
    """The game starts from a documented position (see ``position.py``)."""

    position: Position


class CratePlaced(E, frozen=True, tag="crate_placed"):
    """A face-down crate is put on the dock. ``colour`` stays hidden until the crates turn up."""

    #: Where its hidden values are (``domain.kernel.hidden.HIDDEN_PATHS``).
    hidden_paths: ClassVar[tuple[str, ...]] = ("colour",)
    seat: int | None
    square: str
    colour: Colour


class DieRoll(msgspec.Struct, frozen=True):
    seat: int
    value: int


class DiceRolled(E, frozen=True, tag="dice_rolled"):
    """Everyone rolls; ties among the highest roll again. ``purpose`` is ``ships`` (who chooses
    a ship and places first) or ``first_move`` (who moves first)."""

    purpose: str
    rounds: list[list[DieRoll]]
    winner: int


class ShipChosen(E, frozen=True, tag="ship_chosen"):
    seat: int
    colour: Colour
    #: True when it was the only ship left.
    automatic: bool = False


class CratesTurnedUp(E, frozen=True, tag="crates_turned_up"):
    crates: dict[str, Colour]


class WorkerPlaced(E, frozen=True, tag="worker_placed"):
    seat: int
    worker: str
    square: str


class TurnBegan(E, frozen=True, tag="turn_began"):
    seat: int
    number: int
    moves: int


class WorkerReturned(E, frozen=True, tag="worker_returned"):
    seat: int
    worker: str
    square: str
    #: ``water`` or ``doctor``.
    source: str


# --- what a worker action did, in the order it happened ----------------------------------------
class Op(msgspec.Struct, frozen=True, tag_field="op"):
    pass


class CrateShift(Op, frozen=True, tag="crate"):
    """A crate moved one square; ``to`` None means it went into the sea."""

    frm: str
    to: str | None
    colour: Colour


class WorkerShift(Op, frozen=True, tag="worker"):
    """A worker moved one square; ``to`` None means it fell into the water."""

    worker: str
    to: str | None


class Squish(Op, frozen=True, tag="squish"):
    """A Dockhand caught between two objects goes to the Doctor."""

    worker: str


class Load(Op, frozen=True, tag="load"):
    """A crate arrived on its own ship's loading area: off the board, +3 to its owner."""

    square: str
    colour: Colour
    seat: int


class Hold(Op, frozen=True, tag="hold"):
    """A crate arrived on another ship's loading area: that ship's player will place it back."""

    square: str
    colour: Colour
    seat: int


StepOp = CrateShift | WorkerShift | Squish | Load | Hold


class WorkersMoved(E, frozen=True, tag="workers_moved"):
    seat: int
    workers: list[str]
    steps: list[Step]
    ops: list[StepOp]
    #: Points gained (or lost) per seat by this action.
    points: list[int]


class HeldCratePlaced(E, frozen=True, tag="held_crate_placed"):
    seat: int
    colour: Colour
    square: str


class StoppedMoving(E, frozen=True, tag="stopped_moving"):
    """The player moves no more workers this turn (chose to, or had no moves left)."""

    seat: int


class TurnEnded(E, frozen=True, tag="turn_ended"):
    seat: int


class GameEnded(E, frozen=True, tag="game_ended"):
    scores: list[int]
    collected: list[int]
    winners: list[int]
    #: The seats with no crate left on the dock.
    emptied: list[int]


Event = (
    GameStarted
    | PositionLoaded
    | CratePlaced
    | DiceRolled
    | ShipChosen
    | CratesTurnedUp
    | WorkerPlaced
    | TurnBegan
    | WorkerReturned
    | WorkersMoved
    | HeldCratePlaced
    | StoppedMoving
    | TurnEnded
    | GameEnded
)
