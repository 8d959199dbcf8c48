"""What a player can send. Cities are names (``Lisboa``), cards and vehicles ``truck``,
``train``, ``ship``."""

from __future__ import annotations

import msgspec

from .board import Colour, Vehicle


class Leg(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One card of a payment and the city the cargo reaches with it."""

    card: Vehicle
    to: str


class Moves(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Bonus moves given to each vehicle marker."""

    truck: int = 0
    train: int = 0
    ship: int = 0


class PlacePost(
    msgspec.Struct, frozen=True, tag="place_post", tag_field="type", forbid_unknown_fields=True
):
    """Set-up: put one starting trading post next to a city."""

    city: str


class Deliver(
    msgspec.Struct, frozen=True, tag="deliver", tag_field="type", forbid_unknown_fields=True
):
    """Ship one ``cargo`` cube from ``origin`` to ``destination`` along ``route`` (the cards in
    the order they are used), and split the bonus moves as ``bonus`` says."""

    origin: str
    destination: str
    cargo: Colour
    route: list[Leg]
    bonus: Moves = Moves()


class Gather(
    msgspec.Struct, frozen=True, tag="gather", tag_field="type", forbid_unknown_fields=True
):
    """Instead of delivering: take the face-up market card in slot ``market`` (or, when None,
    the top card of the deck) and then the top card of the deck."""

    market: int | None = None


Command = PlacePost | Deliver | Gather
