"""Reading a board from above: heights, the top cell of every square, and the active docks.

Only the top piece of a square counts (scaffolds lie under pieces). Two neighbouring top
segments join where both show the same colour on their shared edge, at any heights (D5); a
port joins the segment of its colour facing it; a dock joins the segment on its inward edge and
takes its colour. A dock is active when its line reaches a port (D7: active connections =
active docks).

A purple splitter (the 3-colour variant, D31) shows no line colour of its own: each of its
edges joins a neighbour's segment or a port of any colour, and a line that reaches it goes on
through its other edges in the same colour (it branches red and teal lines alike). A dock it
faces directly is purple, and active while any port's line reaches the splitter."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from .components import (
    BOARDS,
    DOCKS,
    OPPOSITE,
    PURPLE,
    Board,
    Cell,
    Colour,
    footprint,
    neighbour,
    piece,
    turned_cell,
)
from .state import Placed


class Layout:
    """Heights and top cells of one board, built by replaying its placements in order."""

    __slots__ = ("heights", "top", "top_piece")

    def __init__(self) -> None:
        self.heights: dict[str, int] = {}
        self.top: dict[str, Cell] = {}
        self.top_piece: dict[str, str] = {}

    def scaffolds_for(self, squares: list[str]) -> tuple[int, dict[str, int]]:
        """The level a piece on ``squares`` lies at and the scaffolds each square needs."""
        high = max(self.heights.get(sq, 0) for sq in squares)
        need = {sq: high - self.heights.get(sq, 0) for sq in squares}
        return high + 1, {sq: n for sq, n in need.items() if n}

    def put(self, placed: Placed) -> None:
        p = piece(placed.piece)
        if p is None:
            return
        squares = [sq for sq in footprint(p, placed.at, placed.rot) if sq is not None]
        level, _ = self.scaffolds_for(squares)
        for sq, cell in zip(squares, p.cells, strict=False):
            self.heights[sq] = level
            self.top[sq] = turned_cell(cell, placed.rot)
            self.top_piece[sq] = placed.piece

    def copy(self) -> Layout:
        out = Layout()
        out.heights = dict(self.heights)
        out.top = dict(self.top)
        out.top_piece = dict(self.top_piece)
        return out


def layout(board: Iterable[Placed]) -> Layout:
    """The layout of a board (shared: callers that add pieces ``copy()`` it first)."""
    return _layout(tuple(board))


@lru_cache(maxsize=1024)
def _layout(board: tuple[Placed, ...]) -> Layout:
    if not board:
        return Layout()
    out = _layout(board[:-1]).copy()
    out.put(board[-1])
    return out


def active_docks(board: Board, top: dict[str, Cell]) -> dict[str, Colour]:
    """Active dock id → the colour of its line."""
    return dict(_active(board.number, tuple(sorted(top.items()))))


@lru_cache(maxsize=1024)
def _active(number: int, cells: tuple[tuple[str, Cell], ...]) -> tuple[tuple[str, Colour], ...]:
    return tuple(trace(BOARDS[number], dict(cells))[0].items())


def trace(
    board: Board, top: dict[str, Cell]
) -> tuple[dict[str, Colour], list[tuple[str, Colour, str]]]:
    """The active docks (dock id → the colour of its line) and the open ends of the port lines:
    each square a line points into without being joined there (not a blocked one), the line's
    colour and the edge it enters by (a bot's reading of where a line can grow)."""
    #: (square, segment index, the colour flowing in it): a purple segment carries any colour.
    seen: set[tuple[str, int, Colour]] = set()
    frontier: list[tuple[str, int, Colour]] = []
    ends: list[tuple[str, Colour, str]] = []

    def join(square: str | None, edge: str, colour: Colour) -> None:
        if square is None:
            return
        joined = False
        for i, seg in enumerate(top.get(square, ())):
            if seg.colour in (colour, PURPLE) and edge in seg.edges:
                joined = True
                if (square, i, colour) not in seen:
                    seen.add((square, i, colour))
                    frontier.append((square, i, colour))
        if not joined and square not in board.blocked:
            ends.append((square, colour, edge))

    for port in board.ports:
        join(neighbour(port.square, port.edge), OPPOSITE[port.edge], port.colour)
    while frontier:
        square, i, colour = frontier.pop()
        for edge in top[square][i].edges:
            join(neighbour(square, edge), OPPOSITE[edge], colour)
    reached = {(square, i): colour for square, i, colour in seen}
    docks: dict[str, Colour] = {}
    for dock in DOCKS:
        for i, seg in enumerate(top.get(dock.inward, ())):
            if dock.edge not in seg.edges:
                continue
            if seg.colour == PURPLE and (dock.inward, i) in reached:
                docks[dock.id] = PURPLE
            elif (dock.inward, i, seg.colour) in seen:
                docks[dock.id] = seg.colour
    return docks, ends


def line_colours(top: dict[str, Cell]) -> dict[str, Colour]:
    """Every dock joined to a segment (active or not) → that segment's colour."""
    out: dict[str, Colour] = {}
    for dock in DOCKS:
        for seg in top.get(dock.inward, ()):
            if dock.edge in seg.edges:
                out[dock.id] = seg.colour
    return out
