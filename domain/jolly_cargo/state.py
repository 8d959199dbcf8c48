"""The state of a game of CARGO: a plain value that ``evolve`` copies and never mutates."""

from __future__ import annotations

from typing import Literal

import msgspec

from domain.kernel import RuleError, copier

from .board import Colour
from .options import Options

Phase = Literal["crates", "ships", "workers", "play", "finished"]


class Player(msgspec.Struct):
    colour: Colour | None = None
    score: int = 0
    #: Own crates loaded onto the ship.
    loaded: int = 0
    #: Opponents' crates this player pushed into the sea.
    captured: int = 0
    #: Turns this player has begun (the Doctor counts in these).
    turns: int = 0

    @property
    def collected(self) -> int:
        return self.loaded + self.captured


class HeldCrate(msgspec.Struct, frozen=True):
    """A crate off the board until ``seat`` places it back."""

    seat: int
    colour: Colour


class State(msgspec.Struct):
    seats: int
    options: Options
    phase: Phase
    players: list[Player]
    #: Ship colours in play (crate colours), in the order the options give.
    colours: list[Colour]
    crates_per_player: int
    #: Square name → crate colour, for every crate on the dock.
    crates: dict[str, Colour]
    crates_face_down: bool
    #: Worker id → square name, for every worker on the dock.
    workers: dict[str, str]
    water: list[str]
    #: Dockhand id → the owner's turn number from which it may come back.
    doctor: dict[str, int]
    #: Workers out of the game (fast variant, or not in a loaded position).
    removed: list[str]
    held: list[HeldCrate]
    #: Colours of the crates lost at sea, in the order they fell.
    sea: list[Colour]
    #: Set-up: seats in the order they place (crates, then ships, then workers).
    order: list[int]
    #: Set-up: how many placements of the current step are done.
    placed: int = 0
    first_player: int | None = None
    current: int | None = None
    turn: int = 0
    moves_left: int = 0
    used: list[str] = []
    #: A worker has acted this turn (Doctor returns are only before the first action).
    acted: bool = False
    #: Winners, set when the game ends.
    winners: list[int] = []

    def copy(self) -> State:
        return _copy(self)

    # --- derived facts --------------------------------------------------------------------
    def colour_of_seat(self, seat: int) -> Colour:
        """The seat's ship colour; raises ``rule.wrong_phase`` before the ships are chosen."""
        colour = self.players[seat].colour
        if colour is None:
            raise RuleError("rule.wrong_phase", f"seat {seat} has not chosen a ship yet")
        return colour

    def mover(self) -> int:
        """The seat whose turn it is in play; raises ``rule.wrong_phase`` when there is none."""
        if self.current is None:
            raise RuleError("rule.wrong_phase", "nobody is to move now")
        return self.current

    def seat_of_colour(self, colour: str) -> int | None:
        for i, p in enumerate(self.players):
            if p.colour == colour:
                return i
        return None

    def crates_on_dock(self, colour: str) -> int:
        return sum(1 for c in self.crates.values() if c == colour)


_copy = copier(State)
