"""What happened. Events are facts: ``evolve`` applies them without checking or chance.

Hidden information in events: ``cards_drawn.cards`` (what a player drew) and
``cities_dealt.cities`` (a player's private city cards) are for that player's eyes only, and so
is which end of a delivery earned a city-card bonus (``delivered.bonus_for``)."""

from __future__ import annotations

from typing import ClassVar

import msgspec

from .board import Colour, Vehicle
from .commands import Leg, Moves
from .options import Options
from .position import Position
from .state import Score


class E(msgspec.Struct, frozen=True, tag_field="type"):
    """Base of Cargo Empire's events."""


class GameStarted(E, frozen=True, tag="game_started"):
    seats: int
    options: Options
    #: The public city cards, face up for everyone.
    public: list[str]
    posts_per_player: int
    turns_per_round: int
    #: The order the starting posts are placed in (snake order).
    order: list[int]


class PositionLoaded(E, frozen=True, tag="position_loaded"):
    """The game starts from a documented position (see ``position.py``)."""

    #: Where its hidden values are (``domain.kernel.hidden.HIDDEN_PATHS``).
    hidden_paths: ClassVar[tuple[str, ...]] = tuple(
        f"position.{p}" for p in Position.hidden_paths
    )
    position: Position


class CitiesDealt(E, frozen=True, tag="cities_dealt"):
    """A player's private city cards (hidden from the others until the end)."""

    #: Where its hidden values are (``domain.kernel.hidden.HIDDEN_PATHS``).
    hidden_paths: ClassVar[tuple[str, ...]] = ("cities.*",)
    seat: int
    cities: list[str]


class CardsDrawn(E, frozen=True, tag="cards_drawn"):
    """Cards drawn blind from the deck into a hand (hidden from the others)."""

    #: Where its hidden values are (``domain.kernel.hidden.HIDDEN_PATHS``).
    hidden_paths: ClassVar[tuple[str, ...]] = ("cards.*",)
    seat: int
    cards: list[Vehicle]


class MarketFilled(E, frozen=True, tag="market_filled"):
    """Cards turned face up from the deck into the market."""

    cards: list[Vehicle]


class DiscardRecycled(E, frozen=True, tag="discard_recycled"):
    """The deck ran out: the discard pile becomes the deck (draws are at random)."""


class PostPlaced(E, frozen=True, tag="post_placed"):
    """A starting post goes onto a post space next to the city."""

    seat: int
    city: str


class PlayBegan(E, frozen=True, tag="play_began"):
    pass


class Delivered(E, frozen=True, tag="delivered"):
    #: Where its hidden values are (``domain.kernel.hidden.HIDDEN_PATHS``).
    hidden_paths: ClassVar[tuple[str, ...]] = ("bonus_for.*",)

    seat: int
    origin: str
    destination: str
    cargo: Colour
    route: list[Leg]
    #: Moves from the cards (Truck 1, Train 1, Ship 2 per card) plus the bonus split.
    moves: Moves
    bonus: Moves
    #: Why bonus moves were earned: ``origin``, ``destination``, ``perfect_upgrade``. Others than
    #: the deliverer (and auditors) see ``city_card`` instead of ``origin``/``destination``.
    bonus_for: list[str]


class CityUpgraded(E, frozen=True, tag="city_upgraded"):
    city: str
    #: The new level: 2 (LV1 flipped and refilled) or 3 (LV2 tile removed).
    level: int
    #: Seats of the posts moved from the tile to the post spaces, in demand-space order.
    moved: list[int]
    #: Cubes left on the old tile side, removed from the game (LV1 leftovers or the LV2 tile's).
    removed_cubes: int
    perfect: bool


class MarketTaken(E, frozen=True, tag="market_taken"):
    """A face-up card goes from the market into a hand."""

    seat: int
    slot: int
    card: Vehicle


class PostRetired(E, frozen=True, tag="post_retired"):
    """A turn without a delivery: one trading post leaves the player's board, out of the game."""

    seat: int


class TurnEnded(E, frozen=True, tag="turn_ended"):
    seat: int


class GameEnded(E, frozen=True, tag="game_ended"):
    scores: list[Score]
    winners: list[int]
    #: Every player's private city cards, revealed.
    private: list[list[str]]


Event = (
    GameStarted
    | PositionLoaded
    | CitiesDealt
    | CardsDrawn
    | MarketFilled
    | DiscardRecycled
    | PostPlaced
    | PlayBegan
    | Delivered
    | CityUpgraded
    | MarketTaken
    | PostRetired
    | TurnEnded
    | GameEnded
)
