"""A pure SVG picture of a position: both boards (heights, coloured lines, active docks), the
lanes with their trucks and goods, the shipping boards, tokens and the track.

``render(state)`` returns the SVG text; every drawn thing carries ``data-*`` attributes naming
what it shows (square, piece, dock, truck card, good), so tests and viewers can read it back.
No hidden information is drawn (truck cards in hand are shown as a count)."""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from .components import (
    COLOURS,
    COLUMNS,
    DOCKS,
    FILES,
    GEARS,
    MACHINE_SQUARES,
    PORTS,
    RANKS,
    RECEIVING_SLOTS,
    STEP,
    STREET_MAX,
    TRUCKS,
    WALLS,
    xy,
)
from .lines import active_docks, layout
from .state import Player, State, TruckInLane, stars

CELL = 36
LANE = 30
INK = {"red": "#d1362f", "teal": "#138f87"}
BOARD_W = LANE + len(FILES) * CELL + LANE
WIDTH = 2 * BOARD_W + 60
HEIGHT = 60 + RANKS * CELL + 170


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


def _board(out: list[str], ox: int, seat: int, p: Player) -> None:
    lay = layout(p.board)
    active = active_docks(lay.top)
    out.append(_open("g", data_seat=seat))
    title = f"Seat {seat}: forklift {p.forklift}, stars {stars(p)}, scaffolds {p.scaffolds}"
    out.append(_el("text", title, x=ox + LANE, y=24, font_size=14))
    for r in range(1, RANKS + 1):
        for f in FILES:
            sq = f"{f}{r}"
            x, y = _square_xy(ox, sq)
            fill = "#555" if sq in MACHINE_SQUARES else "#222" if sq in WALLS else "#cfe8e4"
            out.append(_el("rect", x=x, y=y, width=CELL, height=CELL, fill=fill, stroke="#8ab"))
            if sq in GEARS and sq not in lay.heights:
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
    for port in PORTS:
        x, y = _square_xy(ox, port.square)
        dx, dy = STEP[port.edge]
        cx, cy = x + CELL // 2 + dx * (CELL // 2 - 3), y + CELL // 2 - dy * (CELL // 2 - 3)
        out.append(_el("circle", cx=cx, cy=cy, r=4, fill=INK[port.colour]))
    for dock in DOCKS:
        x, y = _square_xy(ox, dock.square)
        colour = active.get(dock.id)
        out.append(
            _el(
                "rect",
                x=x + 2,
                y=y + 2,
                width=CELL - 4,
                height=CELL - 4,
                fill="#ffd54a" if colour else "#eee",
                stroke="#333",
                data_dock=dock.id,
                data_active=str(colour is not None).lower(),
            )
        )
        out.append(_el("text", str(dock.street), x=x + 10, y=y + 23, font_size=13))
    for sq in sorted(lay.heights):
        x, y = _square_xy(ox, sq)
        cx, cy = x + CELL // 2, y + CELL // 2
        out.append(
            _open("g", data_square=sq, data_piece=lay.top_piece[sq], data_height=lay.heights[sq])
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
        for seg in lay.top[sq]:
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
        out.append(_el("text", str(lay.heights[sq]), x=x + 3, y=y + 11, font_size=9))
        out.append("</g>")
    _lane(out, ox, "shipping", p.shipping_lane)
    _lane(out, ox + LANE + len(FILES) * CELL, "receiving", p.receiving_lane)
    _shipping_board(out, ox, p)
    out.append("</g>")


def _lane(out: list[str], x: int, kind: str, lane: list[TruckInLane]) -> None:
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
            good = t.goods.get(slot)
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


def _shipping_board(out: list[str], ox: int, p: Player) -> None:
    y0 = 60 + RANKS * CELL
    for row, colour in enumerate(COLOURS):
        y = y0 + row * 26
        for i, value in enumerate(COLUMNS):
            shipped = i < p.shipped[colour]
            out.append(
                _el(
                    "circle",
                    cx=ox + 20 + i * 24,
                    cy=y,
                    r=9,
                    fill="none" if shipped else INK[colour],
                    stroke=INK[colour],
                    data_shipping=colour,
                    data_value=value,
                    data_shipped=str(shipped).lower(),
                )
            )
        for i, value in enumerate(RECEIVING_SLOTS):
            got = i < p.received[colour]
            out.append(
                _el(
                    "circle",
                    cx=ox + 190 + i * 24,
                    cy=y,
                    r=9,
                    fill=INK[colour] if got else "none",
                    stroke=INK[colour],
                    data_receiving=colour,
                    data_value=value,
                    data_filled=str(got).lower(),
                )
            )
    storage = " | ".join(",".join(s) or "-" for s in p.storage)
    lines = [
        f"tokens: construction {p.construction}, trucking {p.trucking}; splitters red "
        f"{p.splitters['red']}, teal {p.splitters['teal']}",
        f"hand: {', '.join(p.hand) or '-'}; cards: {len(p.cards)}",
        f"storage: {storage}",
    ]
    for i, text in enumerate(lines):
        out.append(_el("text", text, x=ox, y=y0 + 64 + i * 16, font_size=11))


def render(state: State) -> str:
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif">',
        _el("rect", width=WIDTH, height=HEIGHT, fill="#fff"),
    ]
    for seat, p in enumerate(state.players):
        _board(out, 10 + seat * (BOARD_W + 40), seat, p)
    footer = f"round {state.round}, {state.phase}; bag {len(state.bag)}, deck {len(state.deck)}"
    out.append(_el("text", footer, x=10, y=HEIGHT - 8, font_size=11))
    out.append("</svg>")
    return "\n".join(out)
