"""Draw the map, and a game's tracks, trains and loads, as SVG (pure: a string from values).

``svg(view, players, load)`` is the game's picture hook: it draws what one viewer's typed view
holds (``views.view``: every seat's track sections, train, loads and money, the seats called by
``players``' names) over the shipped map the view names by hash, and with ``load`` rings round
the cities that supply that load; a view of another map gives None (no picture).
``render_position`` draws a position through the same code, as a spectator's view. Every drawn
piece carries a ``class`` and ``data-*`` attributes (``class="track" data-seat="0"
data-from="12" data-to="13"``, ``class="train"``, ``class="loads"``, ``class="supply"``).

``python -m domain.empire_builder.render [OUT.svg] [--position POSITION.json]`` writes the map
(to stdout without OUT), with the tracks and trains of a position (the documented JSON form) when
one is given.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from domain.kernel.svg import NO_NAMES, Players

from .board import LOADS, MAJOR, MAP, MAP_HASH, MEDIUM, MOUNTAIN, SMALL, edge_ends
from .views import EmpireBuilderView

SCALE = 22.0
#: Seat colours, each far from the water's blues (sea, rivers, inlets: WATER) and from the
#: others; seat 1 was a blue (#1f77b4) that read as a river (tests/domain/test_seat_names.py).
PLAYER_COLOURS = ("#d62728", "#e7298a", "#2ca02c", "#9467bd", "#ff7f0e", "#1a1a1a")
#: City labels by the city's terrain: (font size, weight).
CITY_LABEL = {MAJOR: (15, "bold"), MEDIUM: (11, "normal"), SMALL: (10, "normal")}
#: The map's water: the sea, rivers, inlets.
WATER = ("#dbe9f4", "#3a7bd5", "#7fb2e5")
#: The ring round a city that supplies the load the picture was asked to show.
SUPPLY_MARK = "#00a3a3"
_WEST = min(lon for lon, _ in MAP.lonlat) - 0.6
_NORTH = max(lat for _, lat in MAP.lonlat) + 0.6
_COS = math.cos(math.radians(40.0))


def _xy(m: int) -> tuple[float, float]:
    lon, lat = MAP.lonlat[m]
    return round((lon - _WEST) * _COS * SCALE, 1), round((_NORTH - lat) * SCALE, 1)


def render(tracks: dict[int, int] | None = None, trains: dict[int, int] | None = None) -> str:
    """The SVG text: ``tracks`` maps an edge key to its owner's seat, ``trains`` a seat to its
    milepost."""
    sections = [(seat, *edge_ends(key)) for key, seat in sorted((tracks or {}).items())]
    return _draw(sections, [(seat, m, []) for seat, m in sorted((trains or {}).items())], [])


def svg(
    view: EmpireBuilderView, players: Players = NO_NAMES, load: str | None = None
) -> str | None:
    """The picture of one viewer's view; None for a view of a map other than the shipped one.
    With ``load`` (one of :data:`~.board.LOADS`) the picture marks the cities that supply it
    (``class="supply" data-load=… data-city=…``), as the manual shows when a load is clicked."""
    if view.map.hash != MAP_HASH:
        return None
    if load is not None and load not in LOADS:
        raise ValueError(f"no load {load!r}")
    sections = [(seat, a, b) for seat, owned in enumerate(view.tracks) for a, b in sorted(owned)]
    trains = [(p.seat, p.train, p.loads) for p in view.players if p.train is not None]
    lines = [
        f"{players.name(p.seat, unnamed='Seat {}')}: {p.money}M, "
        f"loads: {', '.join(p.loads) or '-'}"
        f"{'' if p.train is not None else ', train not placed'}"
        for p in view.players
    ]
    lines.append(f"phase {view.phase}, turn {view.turn_number}")
    if view.phase == "finished":  # the winners, by name, and why the game ended
        won = " and ".join(players.name(w) for w in view.winners) or "nobody"
        lines.append(f"won by {won} ({view.reason or 'the end'})")
    supply = [] if load is None else sorted(LOADS[load].supply)
    if load is not None:
        lines.append(f"{load} is supplied at {', '.join(supply) or 'no city'}")
    return _draw(sections, trains, lines, [p.seat for p in view.players],
                 [(load, city) for city in supply] if load is not None else [])


@functools.cache
def _layers() -> tuple[list[tuple[float, float]], float, float, str, str]:
    """The map's mileposts' coordinates, its size, and its two constant layers — land, roads
    and rivers under the track; terrain marks and cities over it — drawn once per process."""
    xs = [_xy(m) for m in range(MAP.size)]
    width = max(x for x, _ in xs) + 20
    map_height = max(y for _, y in xs) + 20
    under = [
        f'<rect width="{width:.0f}" height="{map_height:.0f}" fill="{WATER[0]}"/>',
        '<g stroke="#f4efe1" stroke-width="15" stroke-linecap="round">',
    ]
    for a in range(MAP.size):
        for b in MAP.adjacent[a]:
            if a < b:
                (x1, y1), (x2, y2) = xs[a], xs[b]
                under.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}"/>')
        for b in MAP.inside[a]:
            if a < b:
                (x1, y1), (x2, y2) = xs[a], xs[b]
                under.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}"/>')
    under.append("</g>")
    for key, colour in [(k, WATER[1]) for k in MAP.river] + [(k, WATER[2]) for k in MAP.inlet]:
        a, b = edge_ends(key)
        (x1, y1), (x2, y2) = xs[a], xs[b]
        mx, my, dx, dy = (x1 + x2) / 2, (y1 + y2) / 2, (y2 - y1) / 2.5, (x1 - x2) / 2.5
        under.append(f'<line x1="{mx - dx:.1f}" y1="{my - dy:.1f}" x2="{mx + dx:.1f}"'
                     f' y2="{my + dy:.1f}" stroke="{colour}" stroke-width="2.5"/>')
    over = []
    for m, (x, y) in enumerate(xs):
        t = MAP.terrain[m]
        if t == MOUNTAIN:
            over.append(f'<path d="M{x - 3.5} {y + 3}L{x} {y - 3.5}L{x + 3.5} {y + 3}Z"/>')
        elif t == 0:
            over.append(f'<circle cx="{x}" cy="{y}" r="1.3"/>')
    for city in sorted(MAP.cities.values(), key=lambda c: c.name):
        x, y = xs[city.mileposts[0]]
        if city.size == "major":
            r = SCALE * 0.75
            pts = " ".join(f"{x + r * math.cos(math.radians(30 + 60 * i)):.1f},"
                           f"{y + r * math.sin(math.radians(30 + 60 * i)):.1f}" for i in range(6))
            over.append(f'<polygon points="{pts}" fill="#f28c28" fill-opacity="0.8"'
                        ' stroke="#a0521d"/>')
        else:
            fill = "#f28c28" if MAP.terrain[city.mileposts[0]] == MEDIUM else "#f5d142"
            over.append(f'<circle cx="{x}" cy="{y}" r="5" fill="{fill}" stroke="#555"/>')
        # Readable where the viewer shows the map at ~0.75: majors 15 px bold, others 10-11 px,
        # on a white halo over track and terrain.
        terrain = MAP.terrain[city.mileposts[0]]
        size, weight = CITY_LABEL.get(terrain, (10, "normal"))
        over.append(f'<text class="city-name" x="{x + 6}" y="{y - 6}" font-family="sans-serif"'
                    f' font-size="{size}" font-weight="{weight}" fill="#222" stroke="#fff"'
                    f' stroke-width="3" stroke-opacity="0.85" paint-order="stroke">'
                    f'{city.name}</text>')
    return xs, width, map_height, "\n".join(under), "\n".join(over)


def _draw(
    sections: Iterable[tuple[int, int, int]],
    trains: Iterable[tuple[int, int, list[str]]],
    lines: list[str],
    keys: Sequence[int | None] = (),
    supply: Sequence[tuple[str, str]] = (),
) -> str:
    """The map, then track ``sections`` (seat, milepost, milepost), ``trains`` (seat, milepost,
    loads) and text ``lines`` in a panel below the map, each after a swatch of the colour of
    the seat ``keys`` gives for it (the legend of the tracks and trains); a ring round each
    city of ``supply`` (load, city) that supplies the load."""
    xs, width, map_height, under, over = _layers()
    height = map_height + (16 * len(lines) + 10 if lines else 0)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}"'
        f' viewBox="0 0 {width:.0f} {height:.0f}">',
        under,
    ]
    for seat, a, b in sections:
        (x1, y1), (x2, y2) = xs[a], xs[b]
        out.append(f'<line class="track" data-seat="{seat}" data-from="{a}" data-to="{b}"'
                   f' x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke-width="3"'
                   f' stroke="{PLAYER_COLOURS[seat % 6]}"/>')
    out.append(over)
    for load, city in supply:
        x, y = xs[MAP.cities[city].mileposts[0]]
        out.append(f'<circle class="supply" data-load={quoteattr(load)}'
                   f' data-city={quoteattr(city)} cx="{x}" cy="{y}" r="{SCALE * 0.95:.1f}"'
                   f' fill="none" stroke="{SUPPLY_MARK}" stroke-width="3.5"/>')
    for seat, m, loads in trains:
        x, y = xs[m]
        out.append(f'<rect class="train" data-seat="{seat}" data-milepost="{m}"'
                   f' data-loads={quoteattr(",".join(loads))} x="{x - 4}" y="{y - 4}"'
                   f' width="8" height="8" stroke="#000" fill="{PLAYER_COLOURS[seat % 6]}"/>')
        if loads:
            out.append(f'<text class="loads" data-seat="{seat}" x="{x + 6}" y="{y + 12}"'
                       f' font-family="sans-serif" font-size="8" fill="#000">'
                       f"{escape(', '.join(loads))}</text>")
    for i, line in enumerate(lines):
        y = map_height + 16 * (i + 1)
        key = keys[i] if i < len(keys) else None
        x = 10 if key is None else 26
        if key is not None:
            out.append(f'<rect class="legend" data-seat="{key}" x="10" y="{y - 10:.0f}"'
                       f' width="11" height="11" stroke="#000"'
                       f' fill="{PLAYER_COLOURS[key % 6]}"/>')
        out.append(f'<text class="panel" x="{x}" y="{y:.0f}"'
                   f' font-family="sans-serif" font-size="12" fill="#222">{escape(line)}</text>')
    out.append("</svg>\n")
    return "\n".join(out)


def render_position(raw: bytes) -> str:
    """The map with the tracks and trains of a position (JSON bytes)."""
    from domain.kernel import SpectatorViewer

    from .game import EMPIRE_BUILDER
    from .position import state_from_position
    from .views import view

    state = state_from_position(EMPIRE_BUILDER.decode_position(raw))
    picture = svg(view(state, SpectatorViewer()))
    if picture is None:  # pragma: no cover - a view of this package's state names its own map
        raise ValueError("the view names another map")
    return picture


def main(argv: list[str]) -> None:
    args = list(argv)
    svg = render()
    if "--position" in args:
        at = args.index("--position")
        svg = render_position(Path(args[at + 1]).read_bytes())
        del args[at : at + 2]
    if args:
        Path(args[0]).write_text(svg)
    else:
        sys.stdout.write(svg)


if __name__ == "__main__":
    main(sys.argv[1:])


__all__ = ["SMALL", "render", "svg"]
