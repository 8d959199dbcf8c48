"""The state of a game of Empire Builder: a plain value that ``evolve`` copies and never mutates.

The demand deck is a set (``deck``, sorted card ids): a card is drawn at random when it is drawn,
so no order of the deck exists anywhere to leak."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from domain.kernel import copier
from domain.kernel.bounds import between

from .cards import ALL_CARDS
from .options import Options

Phase = Literal["play", "finished"]
BUILDING_TURNS = 3


class Player(msgspec.Struct):
    money: int
    #: Demand card ids in hand slots 0–2.
    cards: list[int]
    loads: list[str] = []
    #: The train's milepost; None until placed.
    train: int | None = None
    speed: int = 9
    capacity: int = 2
    #: Turns this player has completed.
    turns: int = 0
    #: Owed to the bank (twice what was borrowed), taken from the next delivery.
    debt: int = 0
    #: The player card's face (``board.FACES``); empty: not chosen.
    face: str = ""
    #: Turns this player will lose (a derailment).
    skip: int = 0

    def copy(self) -> Player:
        return _copy_player(self)


class Effect(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An event card in force: ``card`` (see ``cards.py``) drawn by ``drawer``; it ends when
    ``turns_left`` more of the drawer's turns have ended."""

    #: (Bounded as a position's numbers are: :mod:`domain.kernel.bounds`.)
    card: Annotated[int, between(0, ALL_CARDS - 1)]
    drawer: Annotated[int, between(0, 5)]
    turns_left: Annotated[int, between(1, 2)]


class Turn(msgspec.Struct):
    """What the player to act has done so far this turn."""

    moved: int = 0
    spent: int = 0
    major_starts: int = 0
    #: Opponents paid the $4M fee this turn.
    paid: list[int] = []
    built: bool = False
    #: Anything done this turn (an upgrade or a trade-in must come first).
    acted: bool = False
    #: Borrowed this turn ($M).
    borrowed: int = 0

    def copy(self) -> Turn:
        return _copy_turn(self)


class State(msgspec.Struct):
    seats: int
    options: Options
    phase: Phase
    #: Seats in turn order, the first player first.
    order: list[int]
    players: list[Player]
    #: Track: edge key (see ``board.edge_key``) → owner seat.
    track: dict[int, int]
    deck: list[int]
    discard: list[int]
    #: Turns completed by all players together.
    turn_number: int = 0
    turn: Turn = msgspec.field(default_factory=Turn)
    winners: list[int] = []
    reason: str = ""
    #: Event cards in force (floods, strikes, snow).
    effects: list[Effect] = []
    #: Seats that must choose a load they lose (a lost load card), sorted: a seat once per load
    #: still to choose, and never more often than its train has loads.
    pending: list[int] = []

    def copy(self) -> State:
        return _copy_state(self)

    def current(self) -> int | None:
        """The seat whose turn it is: rounds go in ``order``, except the second building round,
        which goes in reverse (the last player of the first round builds twice in a row, and
        so does the first player at the start of the third round), as in the published game."""
        if self.phase != "play":
            return None
        rnd, i = divmod(self.turn_number, self.seats)
        return self.order[self.seats - 1 - i if rnd == 1 else i]

    def worth(self, seat: int) -> int:
        """Cash less debt: what the win check and the turn limit's ranking both count."""
        p = self.players[seat]
        return p.money - p.debt

    def chips_out(self, load: str) -> int:
        return sum(p.loads.count(load) for p in self.players)


# The kernel's copier (every field carried over, written once: tests/domain/test_copying.py).
_copy_player = copier(Player)
_copy_turn = copier(Turn)
_copy_state = copier(State)
