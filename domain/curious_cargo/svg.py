"""A pure SVG picture of a view: both boards (heights, coloured lines, active docks), the lanes
with their trucks and goods, the shipping boards, tokens and the track.

``svg(view, players)`` draws what one viewer's typed view holds (``views.view``; the game's
``svg`` hook), the seats called by ``players``' names, so nothing hidden from that viewer can
appear: truck cards in hand are drawn by name only where the
view shows them (the seat's own, an auditor's), as a count otherwise. ``render(state)`` draws a
position as a spectator sees it, through the same code. Every drawn thing carries ``data-*``
attributes naming what it shows (square, piece, dock, truck card, good), so tests and viewers can
read it back."""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from domain.kernel import SpectatorViewer
from domain.kernel.svg import NO_NAMES, Players

from .components import (
    BOARDS,
    COLUMNS,
    DOCKS,
    FILES,
    RANKS,
    RECEIVING_SLOTS,
    STEP,
    STREET_MAX,
    TRUCKS,
    xy,
)
from .state import State
from .views import CuriousCargoPlayer, CuriousCargoView, TruckView
from .views import view as view_of

CELL = 36
LANE = 30
INK = {"red": "#d1362f", "teal": "#138f87", "purple": "#7b3fa0"}
BOARD_W = LANE + len(FILES) * CELL + LANE
WIDTH = 2 * BOARD_W + 60
HEIGHT = 60 + RANKS * CELL + 142


def _attrs(attrs: dict[str, object]) -> str:
    """``data_x`` becomes ``data-x``, ``stroke_width`` ``stroke-width``."""
    return " ".join(f"{k.replace('_', '-')}={quoteattr(str(v))}" for k, v in attrs.items())


def _el(tag: str, text: str | None = None, **attrs: object) -> str:
    body = _attrs(attrs)
    return f"<{tag} {body}/>" if text is None else f"<{tag} {body}>{escape(text)}</{tag}>"


def _open(tag: str, **attrs: object) -> str:
    return f"<{tag} {_attrs(attrs)}>"


def _square_xy(ox: int, square: str) -> tuple[int, int]:
    at = xy(square)
    if at is None:  # pragma: no cover - only board squares are drawn
        raise ValueError(square)
    return ox + LANE + at[0] * CELL, 40 + (RANKS - at[1]) * CELL


def _street_y(street: int) -> int:
    return 40 + (RANKS - street) * CELL


def _board(
    out: list[str], ox: int, seat: int, p: CuriousCargoPlayer, name: str, number: int
) -> None:
    board = BOARDS[number]
    squares = p.squares
    docks = p.docks
    out.append(_open("g", data_seat=seat))
    title = f"{name}: forklift {p.forklift}, stars {p.stars}, scaffolds {p.scaffolds}"
    out.append(_el("text", title, x=ox + LANE, y=24, font_size=14))
    for r in range(1, RANKS + 1):
        for f in FILES:
            sq = f"{f}{r}"
            x, y = _square_xy(ox, sq)
            machine, wall = sq in board.machine_squares, sq in board.walls
            fill = "#555" if machine else "#222" if wall else "#cfe8e4"
            out.append(_el("rect", x=x, y=y, width=CELL, height=CELL, fill=fill, stroke="#8ab"))
            if sq in board.gears and sq not in squares:
                out.append(
                    _el(
                        "circle",
                        cx=x + CELL // 2,
                        cy=y + CELL // 2,
                        r=6,
                        fill="none",
                        stroke="#777",
                        data_gear=sq,
                    )
                )
    for port in board.ports:
        x, y = _square_xy(ox, port.square)
        dx, dy = STEP[port.edge]
        cx, cy = x + CELL // 2 + dx * (CELL // 2 - 3), y + CELL // 2 - dy * (CELL // 2 - 3)
        out.append(_el("circle", cx=cx, cy=cy, r=4, fill=INK[port.colour]))
    for dock in DOCKS:
        x, y = _square_xy(ox, dock.square)
        shown = docks.get(dock.id)
        active = shown is not None and shown.active
        out.append(
            _el(
                "rect",
                x=x + 2,
                y=y + 2,
                width=CELL - 4,
                height=CELL - 4,
                fill="#ffd54a" if active else "#eee",
                stroke="#333",
                data_dock=dock.id,
                data_active=str(active).lower(),
            )
        )
        out.append(_el("text", str(dock.street), x=x + 10, y=y + 23, font_size=13))
    for sq in sorted(squares):
        x, y = _square_xy(ox, sq)
        cx, cy = x + CELL // 2, y + CELL // 2
        square = squares[sq]
        out.append(
            _open("g", data_square=sq, data_piece=square.piece, data_height=square.height)
        )
        out.append(
            _el(
                "rect",
                x=x + 1,
                y=y + 1,
                width=CELL - 2,
                height=CELL - 2,
                fill="#e9d9a6",
                stroke="#a08850",
            )
        )
        for seg in square.segments:
            path = " ".join(
                f"M{cx},{cy} L{cx + STEP[e][0] * CELL // 2},{cy - STEP[e][1] * CELL // 2}"
                for e in seg.edges
            )
            out.append(
                _el(
                    "path",
                    d=path,
                    stroke=INK[seg.colour],
                    stroke_width=6,
                    stroke_linecap="round",
                    data_colour=seg.colour,
                )
            )
        out.append(_el("text", str(square.height), x=x + 3, y=y + 11, font_size=9))
        out.append("</g>")
    _lane(out, ox, "shipping", p.shipping_lane)
    _lane(out, ox + LANE + len(FILES) * CELL, "receiving", p.receiving_lane)
    _shipping_board(out, ox, p, list(p.shipped))
    out.append("</g>")


def _lane(out: list[str], x: int, kind: str, lane: list[TruckView]) -> None:
    out.append(
        _el(
            "rect",
            x=x,
            y=_street_y(STREET_MAX),
            width=LANE - 2,
            height=STREET_MAX * CELL,
            fill="#444",
            data_lane=kind,
        )
    )
    for t in lane:
        truck = TRUCKS[t.card]
        goods = t.goods
        out.append(_open("g", data_truck=t.card, data_rear=t.rear, data_lane=kind))
        for slot, space in enumerate(truck.layout):
            y = _street_y(t.rear + slot)
            out.append(
                _el(
                    "rect",
                    x=x + 2,
                    y=y + 2,
                    width=LANE - 6,
                    height=CELL - 4,
                    fill="#89a" if space == "C" else "#fafafa",
                    stroke="#222",
                )
            )
            if space == "X":
                out.append(
                    _el("path", d=f"M{x + 4},{y + 4} L{x + LANE - 6},{y + CELL - 4}", stroke="#222")
                )
            good = goods.get(str(slot))
            if good is not None:
                out.append(
                    _el(
                        "circle",
                        cx=x + LANE // 2 - 1,
                        cy=y + CELL // 2,
                        r=8,
                        fill=INK[good],
                        data_good=good,
                        data_slot=slot,
                    )
                )
        out.append("</g>")


def _shipping_board(out: list[str], ox: int, p: CuriousCargoPlayer, colours: list[str]) -> None:
    y0 = 60 + RANKS * CELL
    for row, colour in enumerate(colours):
        y = y0 + row * 26
        # shipping: a shipped good empties its circle; receiving: a received good fills its slot
        for x, values, side, count, mark, filled_when_done in (
            (20, COLUMNS, "shipping", p.shipped, "shipped", False),
            (190, RECEIVING_SLOTS, "receiving", p.received, "filled", True),
        ):
            for i, value in enumerate(values):
                done = i < count.get(colour, 0)
                data: dict[str, object] = {f"data_{side}": colour, "data_value": value}
                data[f"data_{mark}"] = str(done).lower()
                out.append(
                    _el(
                        "circle",
                        None,
                        cx=ox + x + i * 24,
                        cy=y,
                        r=9,
                        fill=INK[colour] if done == filled_when_done else "none",
                        stroke=INK[colour],
                        **data,
                    )
                )
    storage = " · ".join(
        f"{i}: {', '.join(s) or 'empty'}" for i, s in enumerate(p.storage, 1)
    )
    tokens, splitters = p.tokens, p.splitters
    # truck cards by name only where this view shows them; hidden ones as a count
    cards = p.card_count if p.cards is None else ", ".join(p.cards) or "none"
    lines = [
        "circles: goods shipped (left, emptied) and received (right, filled)",
        f"tokens: construction {tokens.construction} · trucking {tokens.trucking}"
        "; splitters: " + " · ".join(f"{c} {n}" for c, n in splitters.items()),
        f"tiles in hand: {', '.join(p.hand) or 'none'}; truck cards: {cards}",
        f"storage stacks: {storage}",
    ]
    below = y0 + 64 + 26 * (len(colours) - 2)
    for i, text in enumerate(lines):
        out.append(_el("text", text, x=ox, y=below + i * 16, font_size=11))


def svg(view: CuriousCargoView, players: Players = NO_NAMES) -> str:
    """The picture of one viewer's typed view (the game's ``svg`` hook), the seats called by
    their ``players``' names."""
    number = view.board.number
    colours = list(view.shipping_board.colours)  # the board side's goods
    height = HEIGHT + 26 * (len(colours) - 2)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif">',
        _el("rect", width=WIDTH, height=height, fill="#fff"),
    ]
    for p in view.players:
        name = players.name(p.seat, unnamed="Seat {}")
        _board(out, 10 + p.seat * (BOARD_W + 40), p.seat, p, name, number)
    footer = f"round {view.round}, {view.phase}; bag {view.bag_size}, deck {view.deck_size}"
    out.append(_el("text", footer, x=10, y=height - 8, font_size=11))
    out.append("</svg>")
    return "\n".join(out)


def render(state: State) -> str:
    """A position drawn as a spectator sees it (the README picture)."""
    return svg(view_of(state, SpectatorViewer()))
