"""Cargo Empire as a picture: the map of Europe with its railroad tracks and cities (level, port,
cargo cubes, demand spaces, trading posts), and beside it the players, the Transport market and
the development track. Draws a view (``views.view`` for some viewer), never a state: a hand or a
private city card the viewer may not see is drawn as a count only.

Pieces carry their facts as attributes: ``class="city" data-city="Paris" data-level="2"``,
``class="cube" data-colour="grey"``, ``class="post" data-seat="1"``,
``class="demand" data-colour="white" data-seat=""``, ``class="marker" data-seat="0"
data-vehicle="ship" data-step="4"``, ``class="market-card" data-vehicle="train"``.
"""

from __future__ import annotations

import math

from domain.kernel.svg import NO_NAMES, Picture, Players, colour, seat_colour, side_panel

from .board import VEHICLES
from .views import CargoEmpireView, CityView

MAP_W = 640
HEIGHT = 620
PANEL_X = MAP_W + 16
WIDTH = PANEL_X + 380

#: Where each city of ``data/map.json`` is drawn (layout only, roughly geographic).
PLACES: dict[str, tuple[float, float]] = {
    "Lisboa": (60, 470),
    "Madrid": (165, 455),
    "Barcelona": (285, 440),
    "Marseille": (345, 355),
    "Paris": (275, 215),
    "London": (180, 105),
    "Amsterdam": (345, 120),
    "Hamburg": (440, 60),
    "Berlin": (545, 115),
    "Wien": (580, 290),
    "Milano": (450, 330),
    "Napoli": (560, 480),
}
_VEHICLE_MARK = {"truck": "T", "train": "R", "ship": "S"}


def _places(cities: list[CityView]) -> dict[str, tuple[float, float]]:
    """Known cities where PLACES says; any other on a ring, so a new map still draws."""
    out: dict[str, tuple[float, float]] = {}
    unknown = [c.name for c in cities if c.name not in PLACES]
    for c in cities:
        if c.name in PLACES:
            out[c.name] = PLACES[c.name]
    for i, name in enumerate(unknown):
        angle = 2 * math.pi * i / len(unknown)
        out[name] = (MAP_W / 2 + 230 * math.cos(angle), 300 + 230 * math.sin(angle))
    return out


def _city(pic: Picture, city: CityView, x: float, y: float) -> None:
    level, cargo = city.level, city.cargo
    pic.open(
        "g",
        class_="city",
        data_city=city.name,
        data_level=level,
        data_port="true" if city.port else None,
    )
    if city.port:
        pic.add(
            "circle",
            cx=x,
            cy=y,
            r=31,
            fill="none",
            stroke="#2f6fd1",
            stroke_width=3,
            stroke_dasharray="5 3",
        )
    fill = "#f1d36b" if level == 3 else "#fffaf0"
    pic.add("circle", cx=x, cy=y, r=26, fill=fill, stroke="#3a3a3a", stroke_width=2)
    pic.text(
        x,
        y - 32 - (4 if city.port else 0),
        city.name,
        font_size=13,
        font_weight="bold",
        fill="#1d1d1d",
    )
    pic.text(x, y - 10, f"L{level}", font_size=11, font_weight="bold", fill="#3a3a3a")
    cubes = city.cubes
    for i in range(cubes):
        cx = x - (cubes * 12) / 2 + i * 12 + 1
        pic.add(
            "rect",
            class_="cube",
            data_colour=cargo,
            x=cx,
            y=y - 4,
            width=10,
            height=10,
            fill=colour(cargo),
            stroke="#1d1d1d",
            stroke_width=1,
        )
    demand = city.demand
    for i, space in enumerate(demand):
        cx = x - (len(demand) - 1) * 8 + i * 16
        seat = space.seat
        pic.add(
            "circle",
            class_="demand",
            data_colour=space.colour,
            data_seat="" if seat is None else seat,
            cx=cx,
            cy=y + 16,
            r=6,
            fill=colour(space.colour) if seat is None else seat_colour(seat),
            stroke=colour(space.colour),
            stroke_width=3,
        )
    posts, spaces = city.posts, city.post_spaces
    for i in range(max(spaces, len(posts))):
        angle = math.pi * (0.15 + 0.7 * i / max(1, max(spaces, len(posts)) - 1))
        px, py = x + 40 * math.cos(angle), y + 40 * math.sin(angle)
        if i < len(posts):
            pic.add(
                "rect",
                class_="post",
                data_seat=posts[i],
                x=px - 5,
                y=py - 5,
                width=10,
                height=10,
                fill=seat_colour(posts[i]),
                stroke="#1d1d1d",
                stroke_width=1,
            )
        else:
            pic.add(
                "rect",
                class_="post-space",
                x=px - 4,
                y=py - 4,
                width=8,
                height=8,
                fill="none",
                stroke="#9a9a9a",
                stroke_width=1,
            )
    pic.add("title", f"{city.name}: level {level}, {cubes} {cargo or ''} cubes")
    pic.close("g")


def _map(pic: Picture, view: CargoEmpireView) -> None:
    cities = view.map.cities
    places = _places(cities)
    pic.add("rect", class_="sea", x=0, y=0, width=MAP_W, height=HEIGHT, fill="#a9cbe3")
    pic.add(
        "path",
        class_="land",
        fill="#e7dcc0",
        stroke="#b9a77e",
        stroke_width=1.5,
        d="M20 520 L30 400 L120 380 L230 390 L300 300 L240 250 L220 170 L260 150 "
        "L300 80 L400 70 L420 20 L620 20 L620 420 L600 520 L520 430 L470 360 "
        "L400 400 L330 480 L200 520 Z",
    )
    pic.add(
        "path",
        class_="land",
        fill="#e7dcc0",
        stroke="#b9a77e",
        stroke_width=1.5,
        d="M150 40 L215 30 L230 140 L160 150 L140 100 Z",
    )
    for a, b in view.map.tracks:
        if a in places and b in places:
            (x1, y1), (x2, y2) = places[a], places[b]
            pic.add(
                "line",
                class_="track",
                data_from=a,
                data_to=b,
                x1=x1,
                y1=y1,
                x2=x2,
                y2=y2,
                stroke="#5a4632",
                stroke_width=4,
                stroke_dasharray="10 4",
            )
    for city in cities:
        x, y = places[city.name]
        _city(pic, city, x, y)


def _development(pic: Picture, view: CargoEmpireView, x: float, y: float) -> float:
    pic.text(x, y, "Development", font_size=14, font_weight="bold", text_anchor="start")
    y += 10
    players = view.players
    for vehicle in VEHICLES:
        vps = view.development.of(vehicle).vp
        step = min(22.0, 340 / max(1, len(vps)))
        pic.text(
            x,
            y + 16,
            _VEHICLE_MARK.get(vehicle, vehicle[:1].upper()),
            font_size=12,
            font_weight="bold",
            text_anchor="start",
        )
        for i, vp in enumerate(vps):
            bx = x + 14 + i * step
            pic.add(
                "rect",
                class_="track-step",
                data_vehicle=vehicle,
                data_step=i,
                x=bx,
                y=y + 4,
                width=step - 2,
                height=16,
                fill="#ffffff",
                stroke="#b5ad9c",
            )
            pic.text(bx + (step - 2) / 2, y + 16, str(vp), font_size=9, fill="#555555")
        for p in players:
            at = p.markers.get(vehicle, 0)
            bx = x + 14 + at * step + 2 + p.seat * 3.5
            pic.add(
                "circle",
                class_="marker",
                data_seat=p.seat,
                data_vehicle=vehicle,
                data_step=at,
                cx=bx + 2,
                cy=y + 25,
                r=3.5,
                fill=seat_colour(p.seat),
                stroke="#1d1d1d",
                stroke_width=0.8,
            )
        y += 32
    return y


def _panel(pic: Picture, view: CargoEmpireView, names: Players) -> None:
    x, y = PANEL_X, 30.0
    side_panel(pic, x)
    pic.text(x, y, "Cargo Empire", font_size=20, font_weight="bold", text_anchor="start")
    status = f"{view.phase} · round {view.round}/{view.rounds}"
    # `turn` counts the turns of all seats together; turns_per_round is each seat's share
    per = view.turns_per_round * len(view.players)
    status += f" · turns played {view.turn}/{per or '?'}"
    pic.text(x, y + 20, status, font_size=12, text_anchor="start", fill="#444444")
    key = "key: blue dashed ring = port (Ships sail port to port) · L1-L3 = city level"
    pic.text(x, y + 34, key, font_size=9.5, text_anchor="start", fill="#666666", class_="key")
    y += 48
    current, winners = view.current, set(view.winners)
    scores = view.scores
    for p in view.players:
        seat = p.seat
        pic.open(
            "g", class_="player", data_seat=seat, data_current="true" if seat == current else None
        )
        if seat == current:
            pic.add(
                "rect",
                x=x - 4,
                y=y - 4,
                width=WIDTH - x - 8,
                height=52 if p.private else 38,
                rx=5,
                fill="#fff1b8",
                stroke="#d4b43a",
            )
        pic.add(
            "rect", x=x, y=y, width=14, height=14, rx=2, fill=seat_colour(seat), stroke="#1d1d1d"
        )
        name = names.name(seat) + (" ★ winner" if seat in winners else "")
        pic.text(x + 22, y + 12, name, font_size=13, font_weight="bold", text_anchor="start")
        if seat < len(scores):
            pic.text(
                WIDTH - 20,
                y + 12,
                f"{scores[seat].total} pts",
                font_size=13,
                text_anchor="end",
            )
        hand = p.hand
        cards = (
            f"{p.hand_size} cards"
            if hand is None
            else " ".join(f"{_VEHICLE_MARK[v]}{hand.get(v)}" for v in _VEHICLE_MARK)
        )
        detail = f"hand {cards} · posts left {p.supply}"
        detail += f" · deliveries {p.deliveries}"
        pic.text(x + 22, y + 28, detail, font_size=10.5, text_anchor="start", fill="#555555")
        private = p.private
        if private:
            pic.text(
                x + 22,
                y + 42,
                "private cities: " + ", ".join(private),
                font_size=10.5,
                text_anchor="start",
                fill="#555555",
                class_="private",
            )
            y += 14
        pic.close("g")
        y += 44
    y += 8
    pic.text(
        x,
        y,
        f"Market (deck {view.deck_size})",
        font_size=14,
        font_weight="bold",
        text_anchor="start",
    )
    y += 8
    for i, vehicle in enumerate(view.market):
        bx = x + i * 52
        pic.open("g", class_="market-card", data_vehicle=vehicle)
        pic.add("rect", x=bx, y=y, width=46, height=30, rx=4, fill="#ffffff", stroke="#6b5b3e")
        pic.text(bx + 23, y + 19, vehicle, font_size=11)
        pic.close("g")
    y += 50
    public = view.public
    if public:
        pic.text(x, y, "Public cities: " + ", ".join(public), font_size=11, text_anchor="start")
        y += 22
    y = _development(pic, view, x, y + 6)
    goals = view.goals
    if goals:
        pic.text(x, y + 8, "Goals", font_size=14, font_weight="bold", text_anchor="start")
        y += 24
        for goal in goals:
            pic.text(
                x,
                y,
                f"{goal.title}: {goal.vp} VP",
                font_size=11,
                text_anchor="start",
                class_="goal",
            )
            y += 15


def svg(view: CargoEmpireView, players: Players = NO_NAMES) -> str:
    """The view as an SVG document, the seats called by their ``players``' names."""
    pic = Picture(WIDTH, HEIGHT, "Cargo Empire")
    _map(pic, view)
    _panel(pic, view, players)
    return str(pic)
