"""The state of a game of Cargo Empire: a plain value that ``evolve`` copies and never mutates."""

from __future__ import annotations

from typing import Literal

import msgspec

from domain.kernel import copier

from .board import Colour, Vehicle
from .options import Options

Phase = Literal["setup", "play", "finished"]


class Cards(msgspec.Struct):
    """A pile of Transport cards by kind (a hand, the deck, the discard pile)."""

    truck: int = 0
    train: int = 0
    ship: int = 0

    def total(self) -> int:
        return self.truck + self.train + self.ship

    def get(self, kind: str) -> int:
        n: int = getattr(self, kind)
        return n

    def add(self, kind: str, n: int = 1) -> None:
        setattr(self, kind, self.get(kind) + n)

    def copy(self) -> Cards:
        return _copy_cards(self)


class CityState(msgspec.Struct):
    #: 1 or 2 (a tile shows that side), or 3 (the tile is gone).
    level: int
    #: Cargo cubes left on the tile (all of the tile's cargo colour).
    cubes: int
    #: Demand space colour → the seat whose post fills it (None: free).
    demand: dict[str, int | None]
    #: Seats of the posts on the spaces next to the city, in the order they arrived.
    posts: list[int]

    def copy(self) -> CityState:
        return _copy_city(self)


class Player(msgspec.Struct):
    hand: Cards
    private: list[str]
    #: Trading posts still on the player's board.
    supply: int
    markers: dict[str, int]
    #: Colours this player has delivered (for the Rainbow goal), sorted.
    delivered: list[Colour] = []
    deliveries: int = 0

    def copy(self) -> Player:
        return _copy_player(self)


class Score(msgspec.Struct, frozen=True):
    vehicles: dict[str, int]
    lv3_posts: int
    private_cities: int
    goals: dict[str, int]
    total: int


class State(msgspec.Struct):
    seats: int
    options: Options
    phase: Phase
    cities: dict[str, CityState]
    players: list[Player]
    public: list[str]
    deck: Cards
    discard: Cards
    market: list[Vehicle]
    posts_per_player: int
    turns_per_round: int
    #: Set-up: seats in the order they place starting posts, and how many are placed.
    order: list[int] = []
    placed: int = 0
    round: int = 1
    #: Turns completed in the current round (all seats together).
    turn: int = 0
    #: Cubes by colour that were delivered (left the game) or removed with an LV2 tile.
    cubes_delivered: dict[str, int] = {}
    cubes_removed: dict[str, int] = {}
    scores: list[Score] = []
    winners: list[int] = []

    def copy(self) -> State:
        return _copy_state(self)

    # --- derived facts --------------------------------------------------------------------
    def current(self) -> int | None:
        """The seat to act, or None when the game is over."""
        if self.phase == "setup":
            # Between the last placement and the first round (one decision, two events) nobody
            # is to act yet: a replay looks at that state too.
            return self.order[self.placed] if self.placed < len(self.order) else None
        if self.phase == "play":
            return (self.round - 1 + self.turn) % self.seats
        return None

    def has_post(self, seat: int, city: str) -> bool:
        c = self.cities[city]
        return seat in c.posts or seat in c.demand.values()

    def posts_in(self, city: str) -> list[int]:
        c = self.cities[city]
        return [*c.posts, *(s for s in c.demand.values() if s is not None)]


_copy_cards = copier(Cards)
_copy_city = copier(CityState)
_copy_player = copier(Player)
_copy_state = copier(State)
