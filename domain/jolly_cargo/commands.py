"""What a player can send. Squares are names (``c4``), workers are ids (``red-M``)."""

from __future__ import annotations

from typing import Literal

import msgspec

from .board import Colour, Direction

StepKind = Literal["move", "push", "pull"]


class Step(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One step of a worker action: a direction and what the step does."""

    dir: Direction
    kind: StepKind = "move"


class PlaceCrate(
    msgspec.Struct, frozen=True, tag="place_crate", tag_field="type", forbid_unknown_fields=True
):
    """Set-up: place the next face-down crate (its colour is drawn at random, unseen)."""

    square: str


class ChooseShip(
    msgspec.Struct, frozen=True, tag="choose_ship", tag_field="type", forbid_unknown_fields=True
):
    colour: Colour


class PlaceWorker(
    msgspec.Struct, frozen=True, tag="place_worker", tag_field="type", forbid_unknown_fields=True
):
    worker: str
    square: str


class ReturnWorker(
    msgspec.Struct, frozen=True, tag="return_worker", tag_field="type", forbid_unknown_fields=True
):
    """Start of turn: bring a worker back from the water (onto one of your loading squares) or a
    Dockhand back from the Doctor (onto any edge square)."""

    worker: str
    square: str


class Move(msgspec.Struct, frozen=True, tag="move", tag_field="type", forbid_unknown_fields=True):
    """One worker's whole action — or a stack of your Dockhands moving together."""

    workers: list[str]
    steps: list[Step]


class PlaceHeldCrate(
    msgspec.Struct,
    frozen=True,
    tag="place_held_crate",
    tag_field="type",
    forbid_unknown_fields=True,
):
    """Put back a crate that arrived on your loading area (not your colour)."""

    colour: Colour
    square: str


class EndTurn(
    msgspec.Struct, frozen=True, tag="end_turn", tag_field="type", forbid_unknown_fields=True
):
    """Stop moving workers for this turn."""


Command = PlaceCrate | ChooseShip | PlaceWorker | ReturnWorker | Move | PlaceHeldCrate | EndTurn
