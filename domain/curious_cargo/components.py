"""The original components of Curious Cargo, read once from ``data/components.json``.

Geometry: files a–h are x 0–7 (west → east), ranks 1–10 are y 1–10 (south → north). A square is
a :data:`Square`, its name like ``d3``, everywhere in the game — state, layouts, commands, events
and views — and turns into (x, y) only for arithmetic (:func:`xy`, :func:`square_at`); the state is
stored as JSON keyed by these names, so the name is the one coherent type (no int form).
:func:`parse_square` checks a name from outside. A segment is a colour and the edges
(``N E S W``) of its cell it joins.
Rotations turn clockwise: a cell offset (dx, dy) becomes (dy, −dx) and every edge moves
N → E → S → W, per 90°.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any, Literal

import msgspec

from .options import Options

Colour = Literal["red", "teal", "purple"]
#: The conveyor colours (every tile is red or teal) and the two-colour game's goods.
COLOURS: tuple[Colour, ...] = ("red", "teal")
#: The 3-colour variant's colour: purple splitters and goods, no purple tile or port.
PURPLE: Colour = "purple"
SPLITTER_COLOURS: tuple[Colour, ...] = ("red", "teal", "purple")
ROTATIONS = (0, 90, 180, 270)
EDGES = "NESW"
STEP = {"N": (0, 1), "E": (1, 0), "S": (0, -1), "W": (-1, 0)}
OPPOSITE = {"N": "S", "S": "N", "E": "W", "W": "E"}


def _read(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        resources.files(__package__).joinpath(f"data/{name}.json").read_text("utf-8")
    )
    return data


_DATA = _read("components")
#: What every player board shares: the grid, the docks, scaffolding and storage.
BOARD = _DATA["board"]
FILES: str = BOARD["files"]
RANKS: int = BOARD["ranks"]
#: A square of the board, by name: file letter then rank, ``a1`` to ``h10``.
Square = str
SQUARES: list[Square] = [f"{f}{r}" for r in range(1, RANKS + 1) for f in FILES]


def xy(square: Square) -> tuple[int, int] | None:
    """(x, y) of a square name, None when it is not a board square.

    >>> xy("a1"), xy("d3"), xy("h10")
    ((0, 1), (3, 3), (7, 10))
    >>> xy("a0"), xy("a01"), xy("i1"), xy("h11")
    (None, None, None, None)
    """
    if len(square) < 2 or square[0] not in FILES or not square[1:].isdigit():
        return None
    y = int(square[1:])
    if not 1 <= y <= RANKS or square[1:] != str(y):
        return None
    return FILES.index(square[0]), y


def square_at(x: int, y: int) -> Square | None:
    """The square at (x, y), None off the board.

    >>> square_at(3, 3), square_at(7, 10), square_at(8, 1), square_at(0, 0)
    ('d3', 'h10', None, None)
    """
    if 0 <= x < len(FILES) and 1 <= y <= RANKS:
        return f"{FILES[x]}{y}"
    return None


def parse_square(text: str) -> Square:
    """``text`` as a square; ValueError if it names no square of the board.

    >>> parse_square("c7")
    'c7'
    >>> parse_square("c07")
    Traceback (most recent call last):
    ...
    ValueError: 'c07' is not a square of the board (a1–h10)
    >>> all(parse_square(s) == square_at(*xy(s)) for s in SQUARES)
    True
    """
    if xy(text) is None:
        raise ValueError(f"{text!r} is not a square of the board (a1–h10)")
    return text


def neighbour(square: Square, edge: str) -> Square | None:
    """The square across ``edge`` (``N E S W``), None off the board.

    >>> neighbour("d3", "N"), neighbour("d3", "E"), neighbour("a1", "W"), neighbour("h10", "N")
    ('d4', 'e3', None, None)
    """
    at = xy(square)
    if at is None:
        return None
    dx, dy = STEP[edge]
    return square_at(at[0] + dx, at[1] + dy)


def turn_edge(edge: str, rot: int) -> str:
    return EDGES[(EDGES.index(edge) + rot // 90) % 4]


def turn_offset(dx: int, dy: int, rot: int) -> tuple[int, int]:
    for _ in range(rot // 90):
        dx, dy = dy, -dx
    return dx, dy


class Segment(msgspec.Struct, frozen=True):
    colour: Colour
    edges: str  # e.g. "WE", in N E S W order


Cell = tuple[Segment, ...]


class Piece(msgspec.Struct, frozen=True):
    """A tile or splitter: cell offsets from the anchor and each cell's segments (rotation 0)."""

    id: str
    kind: str  # tile type (``S2``…) or ``splitter``
    offsets: tuple[tuple[int, int], ...]
    cells: tuple[Cell, ...]


def _segment(spec: str, main: Colour) -> Segment:
    colour, edges = spec.split(":")
    other: Colour = "teal" if main == "red" else "red"  # tiles only: a splitter has no "d"
    real: Colour = main if colour == "c" else other if colour == "d" else colour  # type: ignore[assignment]
    return Segment(real, "".join(e for e in EDGES if e in edges))


def _piece(
    pid: str, kind: str, offsets: list[list[int]], cells: list[list[str]], main: Colour
) -> Piece:
    return Piece(
        pid,
        kind,
        tuple((dx, dy) for dx, dy in offsets),
        tuple(tuple(_segment(s, main) for s in cell) for cell in cells),
    )


def _tiles() -> dict[str, Piece]:
    out: dict[str, Piece] = {}
    for t in _DATA["tiles"]:
        offsets = _DATA["shapes"][t["shape"]]
        if "plain" in t:
            for n in range(1, t["plain"] + 1):
                pid = f"{t['type']}-{n}"
                out[pid] = _piece(pid, t["type"], offsets, t["cells"], "red")
            continue
        for colour in COLOURS:
            for n in range(1, t[colour] + 1):
                pid = f"{t['type']}{colour[0]}{n}"
                out[pid] = _piece(pid, t["type"], offsets, t["cells"], colour)
    return out


TILES: dict[str, Piece] = _tiles()
TILE_IDS: list[str] = sorted(TILES)
SPLITTER_SUPPLY: dict[str, int] = dict(_DATA["splitter"]["supply"])
SPLITTERS: dict[str, Piece] = {
    c: _piece(f"splitter-{c}", "splitter", [[0, 0]], _DATA["splitter"]["cells"], c)
    for c in SPLITTER_COLOURS
}


def piece(pid: str) -> Piece | None:
    """A tile by id, or a splitter by ``splitter-<colour>``."""
    if pid.startswith("splitter-"):
        return SPLITTERS.get(pid.removeprefix("splitter-"))
    return TILES.get(pid)


def footprint(p: Piece, at: str, rot: int) -> list[str | None]:
    """The squares a piece covers (None for a cell off the board), cell by cell."""
    return list(_footprint(p.offsets, at, rot))


@cache
def _footprint(offsets: tuple[tuple[int, int], ...], at: str, rot: int) -> tuple[str | None, ...]:
    origin = xy(at)
    if origin is None:
        return tuple(None for _ in offsets)
    out: list[str | None] = []
    for dx, dy in offsets:
        rx, ry = turn_offset(dx, dy, rot)
        out.append(square_at(origin[0] + rx, origin[1] + ry))
    return tuple(out)


@cache
def turned_cell(cell: Cell, rot: int) -> Cell:
    return tuple(
        Segment(s.colour, "".join(e for e in EDGES if e in {turn_edge(x, rot) for x in s.edges}))
        for s in cell
    )


class Port(msgspec.Struct, frozen=True):
    machine: str
    square: str
    edge: str
    colour: Colour


class Dock(msgspec.Struct, frozen=True):
    """A numbered loading dock: ``S3`` (shipping, street 3) or ``R3`` (receiving)."""

    id: str
    kind: Literal["shipping", "receiving"]
    street: int
    square: str
    #: The square whose segment the dock joins, and that segment's edge facing the dock.
    inward: str
    edge: str


class Board(msgspec.Struct, frozen=True):
    """A player board (``data/boards.json``): its machines, walls and gears; the grid and the
    docks are every board's (``BOARD``)."""

    number: int
    name: str
    ports: tuple[Port, ...]
    machine_squares: frozenset[str]
    walls: frozenset[str]
    gears: frozenset[str]
    #: Where no piece may lie: machines, walls and docks.
    blocked: frozenset[str]


def _board(number: str, data: dict[str, Any]) -> Board:
    ports = tuple(
        Port(m, sq, edge, colour)
        for m, spec in data["machines"].items()
        for sq, edge, colour in spec["ports"]
    )
    machines = frozenset(sq for spec in data["machines"].values() for sq in spec["squares"])
    walls = frozenset(data["walls"])
    return Board(
        int(number),
        data["name"],
        ports,
        machines,
        walls,
        frozenset(data["gears"]),
        machines | walls | DOCK_SQUARES,
    )


def _docks() -> list[Dock]:
    out: list[Dock] = []
    kinds: tuple[tuple[Literal["shipping", "receiving"], str, str], ...] = (
        ("shipping", "shipping_docks", "S"),
        ("receiving", "receiving_docks", "R"),
    )
    for kind, key, letter in kinds:
        spec = BOARD[key]
        for street in spec["streets"]:
            sq = f"{spec['file']}{street}"
            inward = neighbour(sq, spec["facing"])
            if inward is None:  # pragma: no cover - data error
                raise ValueError(f"dock {sq} faces off the board")
            out.append(
                Dock(f"{letter}{street}", kind, street, sq, inward, OPPOSITE[spec["facing"]])
            )
    return out


DOCKS: list[Dock] = _docks()
DOCK_BY_ID: dict[str, Dock] = {d.id: d for d in DOCKS}
DOCK_SQUARES: frozenset[str] = frozenset(d.square for d in DOCKS)
#: The player boards by number (option ``board``; 1 is the beginners' board).
BOARDS: dict[int, Board] = {int(n): _board(n, b) for n, b in _read("boards")["boards"].items()}


def board_of(options: Options) -> Board:
    """The player board a game plays on (both seats take the same, §3.1 "matching")."""
    return BOARDS[options.board_number()]


SCAFFOLDING: int = BOARD["scaffolding"]
STACKS: int = BOARD["storage_stacks"]


class Truck(msgspec.Struct, frozen=True):
    card: str
    layout: str  # rear → front: ``.`` cargo, ``X`` blocked, ``C`` cab
    ap: int
    tiles: int

    @property
    def length(self) -> int:
        return len(self.layout)


TRUCKS: dict[str, Truck] = {
    card: Truck(card, t["layout"], t["ap"], t["tiles"])
    for t in _DATA["trucks"]
    for card in t["cards"]
}
CARD_IDS: list[str] = sorted(TRUCKS)


class Side(msgspec.Struct, frozen=True):
    """A side of the shipping board: the two-colour side, or the 3-colour variant's."""

    colours: tuple[Colour, ...]
    #: Points of the shipping columns, left to right (one good of each colour per column).
    columns: tuple[int, ...]
    #: Goods shipped that end the game.
    goal: int
    #: Points for so many complete (emptied) columns.
    column_bonus: dict[int, int]
    #: Points of the receiving slots per colour, left to right.
    receiving_slots: tuple[int, ...]
    #: Splitters each seat takes at set-up (the variant's purple ones).
    splitters_each: dict[str, int]


def _side(data: dict[str, Any]) -> Side:
    return Side(
        tuple(data["colours"]),
        tuple(data["columns"]),
        data["goal"],
        {int(k): v for k, v in data["column_bonus"].items()},
        tuple(data["receiving_slots"]),
        dict(data["splitters_each"]),
    )


#: The shipping board's sides by colour count (option ``colours``).
SIDES: dict[int, Side] = {
    2: _side(_DATA["shipping_board"]),
    3: _side(_DATA["shipping_board_three_colour"]),
}
COLUMNS: list[int] = list(SIDES[2].columns)
RECEIVING_SLOTS: list[int] = list(SIDES[2].receiving_slots)
if any(
    x.columns != SIDES[2].columns or x.receiving_slots != SIDES[2].receiving_slots
    for x in SIDES.values()
):  # pragma: no cover - data error
    raise ValueError("both sides of the shipping board have the same columns and slots")


def side_of(options: Options) -> Side:
    """The shipping board side a game plays with."""
    return SIDES[options.colour_count()]


TRACK_POINTS: list[int] = _DATA["track"]["points"]
TRACK_BONUS: dict[int, str] = {int(k): v for k, v in _DATA["track"]["bonuses"].items()}
TRACK_MAX = len(TRACK_POINTS) - 1
SUPPLY: dict[str, int] = dict(_DATA["supply"])
RULES: dict[str, int] = dict(_DATA["rules"])
ACTIONS = RULES["actions"]
TOKEN_ACTIONS = RULES["token_actions"]
AP = RULES["ap"]
TOKEN_AP = RULES["token_ap"]
DEAL = RULES["deal"]
TOKEN_CAP = RULES["token_cap"]
STREET_MAX = RULES["street_max"]
