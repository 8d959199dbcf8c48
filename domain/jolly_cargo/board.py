"""The dock: an 8×8 grid of squares named like a chessboard, and the four ships around it.

Files ``a``–``h`` run west to east, ranks ``1``–``8`` south to north. Internally a square is a
:data:`Square`, the index ``rank * 8 + file`` (``a1`` = 0, ``h8`` = 63); its name (``c4``) is the
notation of commands, events, positions, views and of the state's dicts (the state is stored as
JSON, so its keys stay in the recorded notation). :func:`square_name` and :func:`parse_square`
convert at that edge. Off the board is water.

Ships lie off the middle of each edge; a ship's loading area is the two edge squares nearest it:
red north (d8, e8), blue east (h4, h5), green south (d1, e1), yellow west (a4, a5).
"""

from __future__ import annotations

from typing import Literal

SIZE = 8
FILES = "abcdefgh"

Colour = Literal["red", "blue", "green", "yellow"]
COLOURS: tuple[Colour, ...] = ("red", "blue", "green", "yellow")

Direction = Literal["N", "E", "S", "W"]
DIRECTIONS: tuple[Direction, ...] = ("N", "E", "S", "W")
_DELTA: dict[str, tuple[int, int]] = {"N": (0, 1), "E": (1, 0), "S": (0, -1), "W": (-1, 0)}
OPPOSITE: dict[str, Direction] = {"N": "S", "S": "N", "E": "W", "W": "E"}


#: A square of the dock: ``rank * 8 + file``, 0 (``a1``) to 63 (``h8``).
Square = int


def square_name(square: Square) -> str:
    """The name of a square.

    >>> square_name(0), square_name(3), square_name(31), square_name(63)
    ('a1', 'd1', 'h4', 'h8')
    """
    return f"{FILES[square % SIZE]}{square // SIZE + 1}"


#: Square name → index, for all 64 squares.
INDEX: dict[str, Square] = {
    f"{f}{r + 1}": r * SIZE + i for r in range(SIZE) for i, f in enumerate(FILES)
}


def parse_square(text: str) -> Square:
    """The square a name like ``c4`` names; ValueError if it names no square of the dock.

    >>> parse_square("a1"), parse_square("e8"), parse_square("h4")
    (0, 60, 31)
    >>> parse_square("i9")
    Traceback (most recent call last):
    ...
    ValueError: 'i9' is not a square of the dock (a1–h8)
    >>> all(parse_square(square_name(s)) == s for s in range(64))
    True
    """
    square = INDEX.get(text)
    if square is None:
        raise ValueError(f"{text!r} is not a square of the dock (a1–h8)")
    return square


def _neighbour(square: Square, direction: str) -> Square | None:
    dx, dy = _DELTA[direction]
    x, y = square % SIZE + dx, square // SIZE + dy
    if 0 <= x < SIZE and 0 <= y < SIZE:
        return y * SIZE + x
    return None


#: NEIGHBOUR[direction][square] is the next square that way, or None for the water.
NEIGHBOUR: dict[str, tuple[Square | None, ...]] = {
    d: tuple(_neighbour(s, d) for s in range(SIZE * SIZE)) for d in DIRECTIONS
}

ALL_SQUARES: tuple[Square, ...] = tuple(range(SIZE * SIZE))
CORNERS: frozenset[Square] = frozenset({0, 7, 56, 63})
EDGE: frozenset[Square] = frozenset(
    s for s in ALL_SQUARES if s % SIZE in (0, SIZE - 1) or s // SIZE in (0, SIZE - 1)
)

#: The side each ship lies off, clockwise from north.
SHIP_SIDE: dict[Colour, str] = {"red": "N", "blue": "E", "green": "S", "yellow": "W"}
LOADING: dict[Colour, tuple[Square, Square]] = {
    "red": (59, 60),  # d8, e8
    "blue": (31, 39),  # h4, h5
    "green": (3, 4),  # d1, e1
    "yellow": (24, 32),  # a4, a5
}
#: Which ship's loading area a square belongs to (every ship, played or not).
LOADING_OWNER: dict[Square, Colour] = {
    sq: colour for colour, pair in LOADING.items() for sq in pair
}
