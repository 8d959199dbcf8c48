"""What a player can send. Squares are names (``b3``), rotations 0/90/180/270 clockwise, tiles
and truck cards by id (``S2r1``, ``T10``)."""

from __future__ import annotations

from typing import Literal

import msgspec

from .components import Colour


class _C(msgspec.Struct, frozen=True, tag_field="type", forbid_unknown_fields=True):
    pass


class KeepCard(_C, frozen=True, tag="keep_card"):
    """Draft: keep this card of the three dealt, pass the other two."""

    card: str


class DrawTile(_C, frozen=True, tag="draw_tile"):
    pass


class PlayTile(_C, frozen=True, tag="play_tile"):
    """Play a tile from the hand or from the top of an own storage stack."""

    tile: str
    at: str
    rot: int


class UseConstructionToken(_C, frozen=True, tag="use_construction_token"):
    """Spend a construction token for 2 extra actions."""


class PlaceSplitter(_C, frozen=True, tag="place_splitter"):
    """Spend a construction token to place an own splitter (no action used)."""

    colour: Colour
    at: str
    rot: int


class EndTurn(_C, frozen=True, tag="end_turn"):
    pass


class Stored(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    tile: str
    stack: int


class Store(_C, frozen=True, tag="store"):
    """Cleanup: every tile in hand, once, in order, onto the top of the named stack."""

    placements: list[Stored]


class PlayTruck(_C, frozen=True, tag="play_truck"):
    """Play a truck card into ``target``'s shipping lane."""

    card: str
    target: int


class UseTruckingToken(_C, frozen=True, tag="use_trucking_token"):
    """Spend a trucking token: draw a card, gain 2 AP."""


class DiscardForTiles(_C, frozen=True, tag="discard_for_tiles"):
    card: str


class TradeTiles(_C, frozen=True, tag="trade_tiles"):
    """Discard the tops of two stacks (or the top two of one), draw a truck card."""

    stacks: list[int]


class ChooseLoads(_C, frozen=True, tag="choose_loads"):
    """Which shipping docks (by street number) load, when several maximal loads exist."""

    docks: list[int]


Command = (
    KeepCard
    | DrawTile
    | PlayTile
    | UseConstructionToken
    | PlaceSplitter
    | EndTurn
    | Store
    | PlayTruck
    | UseTruckingToken
    | DiscardForTiles
    | TradeTiles
    | ChooseLoads
)

Source = Literal["hand", 0, 1, 2]
