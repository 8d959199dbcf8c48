"""The components, loaded once from ``data/*.json``, and the route geometry derived from them.

``map.json`` holds the 12 cities (port or not, post spaces, LV1 and LV2 tiles) and the railroad
tracks; ``components.json`` the Transport deck, the development track, the city cards, the goals,
the round structure and the solo target. Nothing here is random or mutable.

Route geometry: ``LAND[a][b]`` is the fewest railroad steps from ``a`` to ``b``; ``BEST[a][b]`` the
fewest steps when a Ship leg (port to port) also counts as one step. ``ROUTES[(a, b)]`` lists every
route the rules allow from ``a`` to ``b`` (shortest, or the shortest land route when a sea route is
shorter; never overpaid), as legs of (card, city reached).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from importlib import resources
from typing import Literal

import msgspec

Colour = Literal["brown", "white", "grey", "orange"]
Vehicle = Literal["truck", "train", "ship"]
VEHICLES: tuple[Vehicle, ...] = ("truck", "train", "ship")
GoalKind = Literal[
    "cities_with_posts",
    "lv3_cities_with_posts",
    "colours_delivered",
    "every_marker_at_least",
    "ship_marker_at_least",
]


class Tile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    cargo: Colour
    cubes: int
    demand: list[Colour]


class City(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: str
    port: bool
    post_spaces: int
    lv1: Tile
    lv2: Tile


class MapData(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    colours: list[Colour]
    cities: list[City]
    tracks: list[tuple[str, str]]


class Deck(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    truck: int
    train: int
    ship: int


class VehicleTrack(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    advance: int
    vp: list[int]


class Development(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    truck: VehicleTrack
    train: VehicleTrack
    ship: VehicleTrack

    def of(self, vehicle: str) -> VehicleTrack:
        track: VehicleTrack = getattr(self, vehicle)
        return track


class CityCards(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    public: int
    private_per_player: int
    private_vp: int


class Goal(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    id: str
    title: str
    kind: GoalKind
    threshold: int
    vp: int


class Components(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    deck: Deck
    starting_hand: int
    market_size: int
    draw_after_delivery: int
    development: Development
    city_cards: CityCards
    lv3_post_vp: int
    rounds: int
    turns_per_round: dict[str, int]
    starting_posts: int
    goals: list[Goal]
    solo_target: int


def _load(name: str, kind: type[msgspec.Struct]) -> msgspec.Struct:
    raw = resources.files("domain.cargo_empire").joinpath(f"data/{name}").read_bytes()
    return msgspec.json.decode(raw, type=kind)


MAP: MapData = _load("map.json", MapData)  # type: ignore[assignment]
COMPONENTS: Components = _load("components.json", Components)  # type: ignore[assignment]

COLOURS: tuple[Colour, ...] = tuple(MAP.colours)
#: A place on the map: one of the 12 cities, by its name (``"Paris"``). The game has no squares;
#: a city's name is its one type everywhere — state (stored as JSON keyed by it), commands,
#: events, positions and views — so there is no other form to convert to.
CityName = str
CITIES: dict[CityName, City] = {c.name: c for c in MAP.cities}
NAMES: tuple[CityName, ...] = tuple(c.name for c in MAP.cities)


def parse_city(text: str) -> CityName:
    """``text`` as a city of the map; ValueError if the map has no such city (names are
    case-sensitive, as recorded).

    >>> parse_city("Paris")
    'Paris'
    >>> parse_city("paris")
    Traceback (most recent call last):
    ...
    ValueError: 'paris' is not a city of the map
    >>> [parse_city(n) for n in NAMES] == list(NAMES) and len(NAMES)
    12
    """
    if text not in CITIES:
        raise ValueError(f"{text!r} is not a city of the map")
    return text
PORTS: frozenset[str] = frozenset(c.name for c in MAP.cities if c.port)
ADJACENT: dict[str, frozenset[str]] = {
    n: frozenset({b for a, b in MAP.tracks if a == n} | {a for a, b in MAP.tracks if b == n})
    for n in NAMES
}


def turns_per_round(seats: int) -> int:
    return COMPONENTS.turns_per_round[str(seats)]


def posts_per_player(seats: int) -> int:
    """Two starting posts plus one for every turn of the game."""
    return COMPONENTS.starting_posts + COMPONENTS.rounds * turns_per_round(seats)


def _distances(neighbours: dict[str, frozenset[str]]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for source in NAMES:
        seen = {source: 0}
        queue = deque([source])
        while queue:
            here = queue.popleft()
            for there in sorted(neighbours[here]):
                if there not in seen:
                    seen[there] = seen[here] + 1
                    queue.append(there)
        out[source] = seen
    return out


LAND: dict[str, dict[str, int]] = _distances(ADJACENT)
BEST: dict[str, dict[str, int]] = _distances(
    {n: ADJACENT[n] | (PORTS - {n} if n in PORTS else frozenset()) for n in NAMES}
)


def leg_steps(card: str, frm: str, to: str) -> int | None:
    """Steps a leg covers, or None if that card cannot make that leg."""
    if frm == to or to not in CITIES:
        return None
    if card == "truck":
        return 1 if to in ADJACENT[frm] else None
    if card == "train":
        d = LAND[frm].get(to)
        return d if d is not None and d <= 2 else None
    if card == "ship":
        return 1 if frm in PORTS and to in PORTS else None
    return None


def _pays(stretches: tuple[int, ...], trains: int, trucks: int) -> bool:
    """Whether ``trains`` Trains and ``trucks`` Trucks can pay for land stretches of these step
    counts: each stretch of ``s`` steps gets ``t`` Trains and ``k`` Trucks with
    ``t + k <= s <= 2t + k`` (every card covers one step, a Train at most two)."""
    if not stretches:
        return trains == 0 and trucks == 0
    first, rest = stretches[0], stretches[1:]
    for t in range(min(trains, first) + 1):
        for k in range(min(trucks, first - t) + 1):
            if 2 * t + k >= first and _pays(rest, trains - t, trucks - k):
                return True
    return False


def overpaid(cards: Sequence[str], steps: Sequence[int]) -> bool:
    """A payment overpays when a strict subset of its cards could pay for the same path. Ships
    are needed one per sea leg, so only land cards can be spared: the route is judged as a
    whole, its land legs grouped into stretches between Ship legs (a single-step Train before a
    Ship and Trucks after it overpay too, e.g. Train 1 + Ship + Truck + Truck, where Truck + Ship
    + Train pays)."""
    stretches: list[int] = []
    run = 0
    for card, n in zip(cards, steps, strict=True):
        if card == "ship":
            if run:
                stretches.append(run)
            run = 0
        else:
            run += n
    if run:
        stretches.append(run)
    trains, trucks = list(cards).count("train"), list(cards).count("truck")
    shape = tuple(stretches)
    return any(
        _pays(shape, t, k)
        for t in range(trains + 1)
        for k in range(trucks + 1)
        if (t, k) != (trains, trucks)
    )


class Route(msgspec.Struct, frozen=True):
    """One allowed way from a city to another: the legs, and the cards it needs."""

    legs: tuple[tuple[Vehicle, str], ...]
    truck: int
    train: int
    ship: int

    @property
    def moved(self) -> tuple[Vehicle, ...]:
        return tuple(v for v in VEHICLES if getattr(self, v))


def _routes(a: str, b: str) -> list[Route]:
    found: list[Route] = []

    def walk(here: str, left: int, land_only: bool, legs: list[tuple[Vehicle, str]]) -> None:
        if here == b:
            if left == 0:
                cards = [c for c, _ in legs]
                steps = []
                at = a
                for card, to in legs:
                    steps.append(leg_steps(card, at, to) or 0)
                    at = to
                if not overpaid(list(cards), steps):
                    found.append(
                        Route(
                            tuple(legs),
                            cards.count("truck"),
                            cards.count("train"),
                            cards.count("ship"),
                        )
                    )
            return
        table = LAND if land_only else BEST
        for card in VEHICLES:
            if land_only and card == "ship":
                continue
            for to in NAMES:
                n = leg_steps(card, here, to)
                if n is None or n > left or table[to][b] > left - n:
                    continue
                walk(to, left - n, land_only, [*legs, (card, to)])

    walk(a, BEST[a][b], False, [])
    if LAND[a][b] > BEST[a][b]:
        walk(a, LAND[a][b], True, [])
    return found


ROUTES: dict[tuple[str, str], list[Route]] = {
    (a, b): _routes(a, b) for a in NAMES for b in NAMES if a != b
}


def _require(fact: bool, why: str) -> None:
    if not fact:
        raise ValueError(f"Cargo Empire component data: {why}")


def _check() -> None:
    """The data is coherent: a connected map, tiles that make sense, room for every post."""
    _require(len(NAMES) == 12 and len(set(NAMES)) == 12, "12 cities, each named once")
    _require(all(len(LAND[n]) == 12 for n in NAMES), "the railroad connects every city")
    for c in MAP.cities:
        for tile in (c.lv1, c.lv2):
            _require(
                tile.cargo not in tile.demand and len(set(tile.demand)) == len(tile.demand),
                f"{c.name}: a tile demands other colours than its cargo, each once",
            )
        _require(
            c.post_spaces >= 1 + len(c.lv1.demand) + len(c.lv2.demand),
            f"{c.name}: room on the post spaces for a starting post and every demand space",
        )
    _require({LAND[a][b] for a in NAMES for b in NAMES} >= {1, 2, 3, 4}, "routes of 1-4 steps")
    _require(any(LAND[a][b] >= 3 for a in PORTS for b in PORTS), "ports far apart by land")
    _require(
        COMPONENTS.city_cards.public + 5 * COMPONENTS.city_cards.private_per_player <= 12,
        "enough city cards for five players",
    )


_check()
