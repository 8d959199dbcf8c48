"""The map (``data/map.json``, written by ``mapgen``) and the component data (``data/loads.json``,
``data/demands.json``), read once at import. A place on the map is a :data:`Milepost`, an int
(its index in the map's list), in every module and on the wire alike (commands, events, positions
and views carry the same ids), so it is the game's one square type; :func:`parse_milepost` checks
one from outside. An edge is a pair of neighbouring mileposts, keyed ``min * 4096 + max``."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA = Path(__file__).with_name("data")
MAP_BYTES = (DATA / "map.json").read_bytes()
#: The map in views: hex SHA-256 of the file served at /v1/rules/empire-builder/assets/map
MAP_HASH = hashlib.sha256(MAP_BYTES).hexdigest()

CLEAR, MOUNTAIN, SMALL, MEDIUM, MAJOR = 0, 1, 2, 3, 4
TERRAIN_NAMES = ("clear", "mountain", "small", "medium", "major")
#: Cost in $M of building into a milepost, by terrain (the manual's table).
ENTRY_COST = (1, 2, 3, 3, 5)
RIVER_COST, INLET_COST = 2, 3


#: A milepost of the map: its index in ``data/map.json``'s list, 0 to ``MAP.size - 1``.
Milepost = int


def edge_key(a: Milepost, b: Milepost) -> int:
    """The key of the edge between two mileposts, the same either way round.

    >>> edge_key(5, 700), edge_key(700, 5)
    (21180, 21180)
    """
    return a * 4096 + b if a < b else b * 4096 + a


def edge_ends(key: int) -> tuple[Milepost, Milepost]:
    """The two mileposts of an edge key, the lower first.

    >>> edge_ends(edge_key(700, 5))
    (5, 700)
    """
    return key // 4096, key % 4096


@dataclass(frozen=True)
class City:
    name: str
    size: str  # major, medium, small
    mileposts: tuple[int, ...]  # a major's centre first


@dataclass(frozen=True)
class Load:
    name: str
    chips: int
    supply: tuple[str, ...]


@dataclass(frozen=True)
class Demand:
    city: str
    load: str
    payoff: int


class Board:
    def __init__(self, raw: dict[str, Any]) -> None:
        posts = raw["mileposts"]
        self.size = len(posts)
        self.rowcol: list[tuple[int, int]] = [(p[0], p[1]) for p in posts]
        self.lonlat: list[tuple[float, float]] = [(p[2], p[3]) for p in posts]
        self.terrain: list[int] = [p[4] for p in posts]
        #: edge key → every river the edge crosses (an edge may cross two)
        self.river: dict[int, tuple[str, ...]] = {}
        for name, es in sorted(raw["rivers"].items()):
            for a, b in es:
                k = edge_key(a, b)
                self.river[k] = (*self.river.get(k, ()), name)
        self.inlet: set[int] = {edge_key(a, b) for a, b in raw["inlets"]}
        #: buildable neighbours of each milepost → the cost of the edge's crossing
        self.adjacent: list[dict[int, int]] = [{} for _ in posts]
        for a, b in raw["edges"]:
            k = edge_key(a, b)
            extra = (RIVER_COST * len(self.river.get(k, ()))
                     + (INLET_COST if k in self.inlet else 0))
            self.adjacent[a][b] = extra
            self.adjacent[b][a] = extra
        self.cities: dict[str, City] = {
            c["name"]: City(c["name"], c["size"], tuple(c["mileposts"])) for c in raw["cities"]
        }
        self.city_at: list[str | None] = [None] * self.size
        for c in self.cities.values():
            for m in c.mileposts:
                self.city_at[m] = c.name
        self.majors = sorted(n for n, c in self.cities.items() if c.size == "major")
        #: moves inside a major city's free zone: each of its mileposts to its lattice neighbours
        #: in the same city
        self.inside: list[tuple[int, ...]] = [() for _ in posts]
        by_rc = {rc: i for i, rc in enumerate(self.rowcol)}
        for name in self.majors:
            ms = set(self.cities[name].mileposts)
            for m in ms:
                row, col = self.rowcol[m]
                self.inside[m] = tuple(sorted(
                    j for j in (by_rc.get(n) for n in _lattice_neighbours(row, col))
                    if j is not None and j in ms
                ))

    def entry_cost(self, a: int, b: int) -> int:
        """$M to build the section from ``a`` into ``b`` (neighbours)."""
        return ENTRY_COST[self.terrain[b]] + self.adjacent[a][b]

    def is_major(self, m: int) -> bool:
        return self.terrain[m] == MAJOR


def _lattice_neighbours(r: int, c: int) -> list[tuple[int, int]]:
    shift = 0 if r % 2 else -1
    return [(r, c - 1), (r, c + 1), (r - 1, c + shift), (r - 1, c + shift + 1),
            (r + 1, c + shift), (r + 1, c + shift + 1)]


MAP = Board(json.loads(MAP_BYTES))


def parse_milepost(value: int) -> Milepost:
    """``value`` as a milepost of the map; ValueError if the map has no such milepost.

    >>> parse_milepost(0)
    0
    >>> parse_milepost(-1)
    Traceback (most recent call last):
    ...
    ValueError: -1 is not a milepost of the map
    >>> parse_milepost(MAP.size)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ... is not a milepost of the map
    """
    if not 0 <= value < MAP.size:
        raise ValueError(f"{value} is not a milepost of the map")
    return value


def _loads() -> dict[str, Load]:
    raw = json.loads((DATA / "loads.json").read_bytes())["loads"]
    return {x["name"]: Load(x["name"], x["chips"], tuple(x["supply"])) for x in raw}


LOADS = _loads()
#: city → the loads it supplies, sorted
SUPPLIES: dict[str, tuple[str, ...]] = {
    city: tuple(sorted(n for n, load in LOADS.items() if city in load.supply))
    for city in MAP.cities
}
#: The demand deck: card id (index) → its three demands.
CARDS: list[tuple[Demand, Demand, Demand]] = [
    (Demand(*a), Demand(*b), Demand(*c))
    for a, b, c in json.loads((DATA / "demands.json").read_bytes())["cards"]
]

START_MONEY = 60
#: $M a player may spend in a turn, all spending included (the wire code stays
#: ``rule.turn_limit``; not the option ``turn_limit``, a number of turns).
SPEND_LIMIT = 20
UPGRADE_COST = 20
FEE = 4  # $M to an opponent for running on their track (once per opponent per turn)
CITY_PLAYERS = {"medium": 3, "small": 2}
CITY_SECTIONS = 3
BORROW_LIMIT = 20  # $M a player may borrow in one turn
#: The player card's faces (the manual's photo album); a seat's face is cosmetic.
FACES = ("tycoon", "banker", "engineer", "prospector", "heiress", "senator", "conductor",
         "rancher")
