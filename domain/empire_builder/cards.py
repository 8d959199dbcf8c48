"""The event cards (``data/events.json``), shuffled into the demand deck: card id
``EVENT_BASE + i`` is event card ``i`` (``EVENT_BASE`` = the number of demand cards).

Kinds: ``flood`` (a river: track crossing it is erased, and nobody builds across it while the
flood lasts), ``derailment`` (trains inside the area lose their next turn and a load),
``lost_load`` (trains inside the area lose one load, chosen by their owners), ``strike`` (no
pick-up or delivery inside the area), ``rail_strike`` (no train moves on the drawer's track and the
drawer builds none), ``tax`` (every player pays by the brackets of ``TAX``), ``snow`` (every step
into the area costs two moves, and nobody builds there). An area is every milepost within
``radius`` steps of the card's cities. Floods, strikes and snow last until the end of the drawing
player's next turn; the others act once, when drawn."""

from __future__ import annotations

import json
from dataclasses import dataclass

from .board import CARDS, DATA, MAP

EVENT_BASE = len(CARDS)
LASTING = frozenset({"flood", "strike", "rail_strike", "snow"})
#: (cash at least, tax) from the highest bracket down: the excess profit tax
TAX = ((200, 25), (150, 20), (100, 15), (50, 10))


@dataclass(frozen=True)
class EventCard:
    id: int
    kind: str
    name: str
    river: str | None
    cities: tuple[str, ...]
    #: the mileposts of the area (empty for floods, taxes and rail strikes)
    area: frozenset[int]
    #: the edge keys a flood erases and blocks
    edges: frozenset[int]


def _area(cities: tuple[str, ...], radius: int) -> frozenset[int]:
    far = {m: 0 for c in cities for m in MAP.cities[c].mileposts}
    frontier = list(far)
    for step in range(1, radius + 1):
        nxt = []
        for m in frontier:
            for n in [*MAP.adjacent[m], *MAP.inside[m]]:
                if n not in far:
                    far[n] = step
                    nxt.append(n)
        frontier = nxt
    return frozenset(far)


def _load() -> list[EventCard]:
    raw = json.loads((DATA / "events.json").read_bytes())
    out = []
    for i, c in enumerate(raw["cards"]):
        cities = tuple(c.get("cities", ()))
        river = c.get("river")
        out.append(EventCard(
            EVENT_BASE + i, c["kind"], c["name"], river, cities,
            _area(cities, raw["radius"]) if cities else frozenset(),
            frozenset(k for k, names in MAP.river.items() if river in names),
        ))
    return out


EVENTS: list[EventCard] = _load()
ALL_CARDS = EVENT_BASE + len(EVENTS)


def event_card(card: int) -> EventCard | None:
    """The event card with id ``card``; None for a demand card or an id of no card."""
    return EVENTS[card - EVENT_BASE] if EVENT_BASE <= card < ALL_CARDS else None


def tax(money: int) -> int:
    return next((t for floor, t in TAX if money >= floor), 0)
