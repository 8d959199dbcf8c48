"""CARGO as a picture: the 8×8 dock north up, the four ships off its edges, crates by colour (or
face down, as the view shows them), workers by kind and owner, and beside the dock the players,
the Doctor, the water and the sea. Draws a view (``views.view`` for some viewer), never a state.

Pieces carry their facts as attributes: ``class="crate" data-colour="red" data-square="c3"``
(``class="crate face-down"`` with no colour when the viewer may not see it),
``class="worker" data-worker="red-D1" data-kind="dockhand" data-square="c4"``, ``class="ship"``,
``class="doctor-worker"``, ``class="water-worker"``.
"""

from __future__ import annotations

from typing import Any

from domain.kernel.svg import NO_NAMES, Picture, Players, colour, side_panel

from . import board
from .pieces import kind
from .views import JollyCargoView

CELL = 52
MARGIN = 92
DOCK = CELL * board.SIZE
PANEL_X = MARGIN * 2 + DOCK + 8
WIDTH = PANEL_X + 262
HEIGHT = MARGIN * 2 + DOCK

_SEA = "#6fa8cf"
_WOOD = ("#dcc8a0", "#cfb88d")
_FACE_DOWN = "#6b4a2b"
_LETTER = {"dockhand": "D", "burly": "B", "mule": "M", "elephant": "E"}
_RADIUS = {"dockhand": 9.0, "burly": 12.0, "mule": 12.0, "elephant": 14.0}


def _origin(square: str) -> tuple[float, float]:
    """Top-left corner of a square (north up)."""
    index = board.INDEX[square]
    file, rank = index % board.SIZE, index // board.SIZE
    return MARGIN + file * CELL, MARGIN + (board.SIZE - 1 - rank) * CELL


def _worker(pic: Picture, cls: str, worker: str, x: float, y: float, r: float, **data: Any) -> None:
    owner = worker.split("-", 1)[0]
    what = kind(worker)
    pic.open("g", class_=cls, data_worker=worker, data_kind=what, data_owner=owner, **data)
    pic.add("circle", cx=x, cy=y, r=r, fill=colour(owner), stroke="#1d1d1d", stroke_width=1.5)
    ink = "#1d1d1d" if owner == "yellow" else "#ffffff"
    pic.text(x, y + r * 0.38, _LETTER[what], font_size=round(r * 1.1), font_weight="bold", fill=ink)
    pic.add("title", worker)
    pic.close("g")


def _ships(pic: Picture, view: JollyCargoView, players: Players) -> None:
    for ship in view.ships:
        side, fill = ship.side, colour(ship.colour)
        long, short = CELL * 2 + 36.0, 46.0
        mid = MARGIN + DOCK / 2
        if side in ("N", "S"):
            w, h = long, short
            x = mid - w / 2
            y = MARGIN - short - 20 if side == "N" else MARGIN + DOCK + 20
        else:
            w, h = short, long
            y = mid - h / 2
            x = MARGIN + DOCK + 20 if side == "E" else MARGIN - short - 20
        seat = ship.seat
        pic.open("g", class_="ship", data_colour=ship.colour, data_seat=seat)
        pic.add(
            "rect",
            x=x,
            y=y,
            width=w,
            height=h,
            rx=short / 2,
            fill=fill,
            stroke="#1d1d1d",
            stroke_width=2,
        )
        label = ship.colour if seat is None else players.name(seat, 10)
        ink = "#1d1d1d" if ship.colour == "yellow" else "#ffffff"
        if side in ("N", "S"):
            pic.text(x + w / 2, y + h / 2 + 5, label, font_size=14, fill=ink)
        else:
            cx, cy = x + w / 2, y + h / 2
            pic.text(
                cx, cy + 5, label, font_size=14, fill=ink, transform=f"rotate(-90 {cx:g} {cy:g})"
            )
        pic.close("g")


def _dock(pic: Picture, view: JollyCargoView) -> None:
    loading = {sq: ship.colour for ship in view.ships for sq in ship.loading}
    for square, index in board.INDEX.items():
        x, y = _origin(square)
        shade = _WOOD[(index % board.SIZE + index // board.SIZE) % 2]
        pic.add(
            "rect",
            class_="square",
            data_square=square,
            x=x,
            y=y,
            width=CELL,
            height=CELL,
            fill=shade,
            stroke="#a88e60",
            stroke_width=0.5,
        )
        if square in loading:
            pic.add(
                "rect",
                class_="loading",
                data_square=square,
                data_colour=loading[square],
                x=x + 2,
                y=y + 2,
                width=CELL - 4,
                height=CELL - 4,
                fill="none",
                stroke=colour(loading[square]),
                stroke_width=4,
                stroke_dasharray="6 3",
            )
    for i, file in enumerate(board.FILES):
        cx = MARGIN + i * CELL + CELL / 2
        pic.text(cx, MARGIN + DOCK + 14, file, font_size=11, fill="#0d3550")
        pic.text(cx, MARGIN - 5, file, font_size=11, fill="#0d3550")
    for rank in range(board.SIZE):
        cy = MARGIN + (board.SIZE - 1 - rank) * CELL + CELL / 2 + 4
        pic.text(MARGIN - 9, cy, str(rank + 1), font_size=11, fill="#0d3550")
        pic.text(MARGIN + DOCK + 9, cy, str(rank + 1), font_size=11, fill="#0d3550")


def _crates(pic: Picture, view: JollyCargoView) -> None:
    inset = 7
    side = CELL - 2 * inset
    for crate in view.crates:
        x, y = _origin(crate.square)
        hue = crate.colour
        if hue is None:
            pic.open("g", class_="crate face-down", data_square=crate.square)
        else:
            pic.open(
                "g",
                class_="crate",
                data_square=crate.square,
                data_colour=hue,
                data_face_down="true" if crate.face_down else None,
            )
        pic.add(
            "rect",
            x=x + inset,
            y=y + inset,
            width=side,
            height=side,
            rx=3,
            fill=_FACE_DOWN if hue is None else colour(hue),
            stroke="#2e1d0e",
            stroke_width=2,
            stroke_dasharray="4 2" if hue is not None and crate.face_down else None,
        )
        if hue is None:
            pic.text(
                x + CELL / 2,
                y + CELL / 2 + 7,
                "?",
                font_size=20,
                font_weight="bold",
                fill="#f2e3c6",
            )
        else:
            for x1, x2 in ((x + inset, x + CELL - inset), (x + CELL - inset, x + inset)):
                pic.add(
                    "line",
                    x1=x1,
                    y1=y + inset,
                    x2=x2,
                    y2=y + CELL - inset,
                    stroke="#2e1d0e",
                    stroke_width=1,
                    opacity=0.5,
                )
        pic.add("title", f"crate {hue or 'face down'} on {crate.square}")
        pic.close("g")


def _workers(pic: Picture, view: JollyCargoView) -> None:
    slots = ((0.5, 0.5),), ((0.3, 0.3), (0.7, 0.7)), ((0.3, 0.3), (0.7, 0.3), (0.5, 0.72))
    for square, stack in sorted(view.workers.items()):
        x, y = _origin(square)
        n = len(stack)
        places = (
            slots[n - 1]
            if n <= 3
            else [(0.28 + 0.44 * (i % 2), 0.28 + 0.44 * (i // 2 % 2)) for i in range(n)]
        )
        for worker, (fx, fy) in zip(stack, places, strict=True):
            r = _RADIUS[kind(worker)] if n == 1 else 9.0
            _worker(pic, "worker", worker, x + fx * CELL, y + fy * CELL, r, data_square=square)


def _panel(pic: Picture, view: JollyCargoView, players: Players) -> None:
    x, y = PANEL_X, 24.0
    side_panel(pic, x)
    pic.text(x + 4, y + 4, "CARGO", font_size=20, font_weight="bold", text_anchor="start")
    phase = view.phase
    status = f"{phase} · turn {view.turn}"
    if phase == "play":
        status += f" · {view.moves_left} moves left"
    elif phase == "crates":
        status += f" · {view.crates_to_place} crates to place"
    pic.text(x + 4, y + 24, status, font_size=12, text_anchor="start", fill="#444444")
    y += 46
    current, winners = view.current, set(view.winners)
    for p in view.players:
        seat = p.seat
        pic.open(
            "g",
            class_="player",
            data_seat=seat,
            data_colour=p.colour,
            data_current="true" if seat == current else None,
        )
        if seat == current:
            pic.add(
                "rect",
                x=x - 4,
                y=y - 4,
                width=WIDTH - x - 8,
                height=38,
                rx=5,
                fill="#fff1b8",
                stroke="#d4b43a",
            )
        pic.add(
            "rect",
            x=x,
            y=y,
            width=14,
            height=14,
            rx=2,
            fill=colour(p.colour),
            stroke="#1d1d1d",
        )
        name = players.name(seat) + (" ★ winner" if seat in winners else "")
        pic.text(x + 22, y + 12, name, font_size=13, font_weight="bold", text_anchor="start")
        pic.text(
            x + WIDTH - x - 20, y + 12, f"{p.score} pts", font_size=13, text_anchor="end"
        )
        on_dock = p.crates_on_dock
        detail = f"loaded {p.loaded} · captured {p.captured}"
        detail += f" · on dock {'?' if on_dock is None else on_dock}"
        pic.text(x + 22, y + 28, detail, font_size=11, text_anchor="start", fill="#555555")
        pic.close("g")
        y += 44
    y += 6
    y = _holding(pic, "Doctor", "doctor-worker", sorted(view.doctor.items()), x, y)
    y = _holding(
        pic, "In the water", "water-worker", [(w, None) for w in view.water], x, y
    )
    sea = view.sea
    pic.text(x + 4, y + 12, "Lost at sea", font_size=13, font_weight="bold", text_anchor="start")
    y += 20
    for i, (hue, count) in enumerate(sorted(sea.items())):
        cx = x + 4 + i * 58
        pic.open("g", class_="sea", data_colour=hue, data_count=count)
        pic.add("rect", x=cx, y=y, width=16, height=16, rx=2, fill=colour(hue), stroke="#2e1d0e")
        pic.text(cx + 22, y + 13, f"× {count}", font_size=12, text_anchor="start")
        pic.close("g")
    y += 26
    held = view.held
    if held:
        text = ", ".join(f"{h.colour} ({players.name(h.seat)})" for h in held)
        pic.text(x + 4, y + 12, f"Held: {text}", font_size=11, text_anchor="start")
        y += 18
    removed = view.removed
    if removed:
        pic.text(
            x + 4, y + 12, f"Out of the game: {len(removed)}", font_size=11, text_anchor="start"
        )
        y += 18
    # what the letters on the workers mean
    pic.text(x + 4, y + 12, "Workers", font_size=13, font_weight="bold", text_anchor="start")
    for i, (name, letter) in enumerate(_LETTER.items()):
        pic.text(
            x + 4 + (i % 2) * 110,
            y + 30 + (i // 2) * 16,
            f"{letter} = {name}",
            font_size=11,
            text_anchor="start",
            class_="key",
        )


def _holding(
    pic: Picture, title: str, cls: str, workers: list[tuple[str, Any]], x: float, y: float
) -> float:
    pic.text(x + 4, y + 12, title, font_size=13, font_weight="bold", text_anchor="start")
    y += 20
    if not workers:
        pic.text(x + 4, y + 12, "nobody", font_size=11, text_anchor="start", fill="#777777")
        return y + 24
    for i, (worker, back) in enumerate(workers):
        cx = x + 14 + (i % 8) * 28
        cy = y + 12 + (i // 8) * 28
        extra = {} if back is None else {"data_back_on_turn": back}
        _worker(pic, cls, worker, cx, cy, 11.0, **extra)
    rows = (len(workers) + 7) // 8
    return y + rows * 28 + 8


def svg(view: JollyCargoView, players: Players = NO_NAMES) -> str:
    """The view as an SVG document, the seats called by their ``players``' names."""
    pic = Picture(WIDTH, HEIGHT, "Tom Jolly's CARGO")
    pic.add("rect", class_="water", x=0, y=0, width=MARGIN * 2 + DOCK, height=HEIGHT, fill=_SEA)
    _ships(pic, view, players)
    _dock(pic, view)
    _crates(pic, view)
    _workers(pic, view)
    _panel(pic, view, players)
    return str(pic)
