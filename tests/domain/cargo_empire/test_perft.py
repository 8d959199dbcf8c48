"""Perft for Cargo Empire: how many commands ``legal`` lists in fixed positions.

The counts are written down once, worked out by hand from the map (``docs/rules/cargo-empire.md``)
and the rules — not taken from the code that generates moves. In each position seat 0 has its
only post in Madrid (LV1 tile: white cargo, 2 cubes) and every other city is fresh. Madrid's
rail neighbours are Lisboa, Barcelona and Paris; the LV1 tiles demanding white are Barcelona,
Marseille, Paris, Amsterdam, Berlin and Napoli. Madrid is not a port."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from domain.cargo_empire import CARGO_EMPIRE

from .support import at

MADRID = {"Madrid": {"posts": [0]}}

CASES: list[tuple[str, dict[str, Any], int, int]] = [
    # One Truck: a single step, so Barcelona and Paris (1 step each; Lisboa demands no white):
    # 2 deliveries, no bonus. Gathers: from the deck, or one of the 2 market cards = 3.
    ("one truck", {"players": [{"hand": {"truck": 1}}, {"hand": {}}],
                   "market": ["truck", "train"]}, 2, 3),
    # A Truck and a Train:
    #   Barcelona, Paris (1 step): the Truck or the Train alone (no strict subset pays) = 4;
    #   Marseille, Amsterdam (2 steps): one Train; Truck + Train would overpay = 2;
    #   Berlin (3 steps by land, and 3 by sea via Barcelona–Hamburg, so land is allowed):
    #     Truck to Paris + Train to Berlin, or Train to Amsterdam + Truck to Berlin = 2;
    #   Napoli (2 steps by sea, 4 by land): no Ship, and 2 cards cover at most 3 land steps = 0.
    #   8 deliveries; gathers 3.
    ("truck and train", {"players": [{"hand": {"truck": 1, "train": 1}}, {"hand": {}}],
                         "market": ["truck", "train"]}, 8, 3),
    # The same hand with Madrid a public city card: every delivery earns 1 bonus move, given to
    # a vehicle whose card was used: 1 way for the 6 one-card routes, 2 ways for the 2 Berlin
    # routes = 6 + 4 = 10. An empty market leaves the one gather from the deck.
    ("public origin", {"players": [{"hand": {"truck": 1, "train": 1}}, {"hand": {}}],
                       "public": ["Madrid"], "market": []}, 10, 1),
    # No post left: no delivery at all; the gathers stay.
    ("no posts", {"players": [{"hand": {"truck": 1, "train": 1}, "supply": 0}, {"hand": {}}],
                  "market": ["ship"]}, 0, 2),
]


@pytest.mark.parametrize(("name", "position", "deliveries", "gathers"), CASES,
                         ids=[c[0] for c in CASES])
def test_legal_counts_in_fixed_positions(
    name: str, position: dict[str, Any], deliveries: int, gathers: int
) -> None:
    table = at({**position, "cities": MADRID})
    listed = CARGO_EMPIRE.legal(table.state, 0)
    kinds = Counter(CARGO_EMPIRE.to_builtins(c)["type"] for c in listed)
    assert kinds == Counter({"deliver": deliveries, "gather": gathers})  # zero counts compare equal
    assert CARGO_EMPIRE.legal(table.state, 1) == []  # not seat 1's turn


def test_the_truck_and_train_deliveries_are_exactly_these() -> None:
    table = at({"cities": MADRID, "players": [{"hand": {"truck": 1, "train": 1}}, {"hand": {}}]})
    routes = sorted(
        (d["destination"], tuple(f"{leg['card']}:{leg['to']}" for leg in d["route"]))
        for d in map(CARGO_EMPIRE.to_builtins, CARGO_EMPIRE.legal(table.state, 0))
        if d["type"] == "deliver"
    )
    assert routes == sorted([
        ("Barcelona", ("truck:Barcelona",)), ("Barcelona", ("train:Barcelona",)),
        ("Paris", ("truck:Paris",)), ("Paris", ("train:Paris",)),
        ("Marseille", ("train:Marseille",)), ("Amsterdam", ("train:Amsterdam",)),
        ("Berlin", ("truck:Paris", "train:Berlin")),
        ("Berlin", ("train:Amsterdam", "truck:Berlin")),
    ])
