"""What a player can send. Mileposts are the map's ids (``data/map.json``, index of
``mileposts``); cities and loads are names."""

from __future__ import annotations

from typing import Literal

import msgspec


class Build(msgspec.Struct, frozen=True, tag="build", tag_field="type", forbid_unknown_fields=True):
    """Build track along ``path``: from its first milepost (a major city's, or on own track)
    through each next, neighbouring, milepost. ``cost``: what the client expects to pay ($M);
    when given, a path that costs anything else is refused (``rule.cost_mismatch``). ``legal``
    lists each next section with its cost."""

    path: list[int]
    cost: int | None = None


class PlaceTrain(
    msgspec.Struct, frozen=True, tag="place_train", tag_field="type", forbid_unknown_fields=True
):
    """After three turns of building: the train appears in ``city``."""

    city: str


class Move(msgspec.Struct, frozen=True, tag="move", tag_field="type", forbid_unknown_fields=True):
    """Move the train through ``path`` (the mileposts entered, in order)."""

    path: list[int]


class PickUp(
    msgspec.Struct, frozen=True, tag="pick_up", tag_field="type", forbid_unknown_fields=True
):
    load: str


class Deliver(
    msgspec.Struct, frozen=True, tag="deliver", tag_field="type", forbid_unknown_fields=True
):
    """Fill demand ``demand`` (0–2) of the card in hand slot ``card`` (0–2)."""

    card: int
    demand: int


class Dump(msgspec.Struct, frozen=True, tag="dump", tag_field="type", forbid_unknown_fields=True):
    load: str


class Upgrade(
    msgspec.Struct, frozen=True, tag="upgrade", tag_field="type", forbid_unknown_fields=True
):
    """At the start of a turn, for $20M: ``speed`` (12 mileposts) or ``capacity`` (3 loads)."""

    kind: Literal["speed", "capacity"]


class TradeIn(
    msgspec.Struct, frozen=True, tag="trade_in", tag_field="type", forbid_unknown_fields=True
):
    """At the start of a turn: discard all three demand cards, draw three; the turn ends."""


class EndTurn(
    msgspec.Struct, frozen=True, tag="end_turn", tag_field="type", forbid_unknown_fields=True
):
    pass


class Borrow(
    msgspec.Struct, frozen=True, tag="borrow", tag_field="type", forbid_unknown_fields=True
):
    """Borrow ``amount`` ($M, 1 to 20 a turn) from the bank when the terms allow; twice the
    amount is taken from the next delivery's payoff."""

    amount: int


class ChooseFace(
    msgspec.Struct, frozen=True, tag="choose_face", tag_field="type", forbid_unknown_fields=True
):
    """Choose the player card's face from ``board.FACES`` (cosmetic; any seat, any time)."""

    face: str


class AutoMove(
    msgspec.Struct, frozen=True, tag="auto_move", tag_field="type", forbid_unknown_fields=True
):
    """Move from the train's milepost to ``toward`` (a neighbour) and on along the track to the
    next city or junction, or as far as the moves and fees allow."""

    toward: int


class LoseLoad(
    msgspec.Struct, frozen=True, tag="lose_load", tag_field="type", forbid_unknown_fields=True
):
    """After a lost load card: the load this seat's train loses (its owner chooses)."""

    load: str


Command = (
    Build | PlaceTrain | Move | PickUp | Deliver | Dump | Upgrade | TradeIn | EndTurn | Borrow
    | ChooseFace | AutoMove | LoseLoad
)
