"""The demand deck generator: ``python -m domain.empire_builder.decks`` writes
``data/demands.json`` from the map and ``data/loads.json``. Pure and deterministic: its choices
come from the kernel's generator with a fixed seed, so anyone can re-run it (a test does).

Each card has three demands for three different loads in three different cities; a demand's city
never supplies its load and lies at least ``MIN_DISTANCE`` mileposts from the load's nearest
supply city. Payoff ($M) = ``BASE + PER_MILEPOST × distance`` rounded, where distance is the
fewest mileposts from the nearest supply city to the demand city over the map's lattice (majors
crossed through their free zone).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from domain.kernel import Rng

DATA = Path(__file__).with_name("data")
CARDS = 120
BASE, PER_MILEPOST = 4, 0.8
MIN_DISTANCE = 8
SEED = hashlib.sha256(b"manifest empire-builder demand deck v1").digest()


def distances_from(sources: list[int]) -> list[int]:
    from .board import MAP

    far = [-1] * MAP.size
    frontier = list(sources)
    for s in sources:
        far[s] = 0
    while frontier:
        nxt = []
        for m in frontier:
            for n in [*MAP.adjacent[m], *MAP.inside[m]]:
                if far[n] < 0:
                    far[n] = far[m] + 1
                    nxt.append(n)
        frontier = nxt
    return far


def payoff(distance: int) -> int:
    return int(BASE + PER_MILEPOST * distance + 0.5)


def generate() -> dict[str, Any]:
    from .board import MAP

    loads = json.loads((DATA / "loads.json").read_bytes())["loads"]
    options: dict[str, list[tuple[str, int]]] = {}
    for load in loads:
        far = distances_from([m for c in load["supply"] for m in MAP.cities[c].mileposts])
        options[load["name"]] = [
            (name, far[MAP.cities[name].mileposts[0]]) for name in sorted(MAP.cities)
            if name not in load["supply"] and far[MAP.cities[name].mileposts[0]] >= MIN_DISTANCE
        ]
    rng = Rng(SEED, 0)
    names = sorted(options)
    cards = []
    for _ in range(CARDS):
        chosen = rng.shuffled(names)[:3]
        used: set[str] = set()
        card = []
        for load in chosen:
            city, distance = rng.choice([o for o in options[load] if o[0] not in used])
            used.add(city)
            card.append([city, load, payoff(distance)])
        cards.append(card)
    return {"version": 1, "formula": {"base": BASE, "per_milepost": PER_MILEPOST,
                                      "min_distance": MIN_DISTANCE}, "cards": cards}


def encode(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


def main(argv: list[str]) -> None:
    out = Path(argv[0]) if argv else DATA / "demands.json"
    raw = encode(generate())
    out.write_bytes(raw)
    print(f"wrote {out}: {len(raw)} bytes")


if __name__ == "__main__":
    main(sys.argv[1:])
