"""Empire Builder engine speed on a mid-game position of a 4-player game: ``legal`` generations
per second and events folded per second.

    .venv/bin/python -m bench.empire_builder [--turns 10] [--repeat 200]

The mid-game position: four players, each with a network joining three major cities (laid by
breadth-first routes that avoid the others' track), $80M, a train on its network and three
demand cards, at the start of seat 0's turn. ``legal`` is timed there (``--repeat`` times).
Folding is timed over a seeded random-bot game of 4 players played for ``--turns`` turns each.
Figures are printed; nothing is asserted.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import time
from typing import Any

from domain.empire_builder import EMPIRE_BUILDER
from domain.empire_builder.board import MAP, edge_key
from domain.empire_builder.options import Options
from domain.kernel import LocalGame, Rng

NETWORKS = [
    ["Seattle", "Chicago", "Toronto"],
    ["New York", "Atlanta", "Dallas"],
    ["Los Angeles", "Dallas", "Chicago"],
    ["Toronto", "New York", "Chicago"],
]


def _route(a: int, b: int, used: set[int]) -> list[int]:
    back = {a: a}
    todo = [a]
    while todo and b not in back:
        nxt = []
        for m in todo:
            for n in sorted(MAP.adjacent[m]):
                if n not in back and edge_key(m, n) not in used:
                    back[n] = m
                    nxt.append(n)
        todo = nxt
    path = [b]
    while path[-1] != a:
        path.append(back[path[-1]])
    return path[::-1]


def mid_game() -> Any:
    used: set[int] = set()
    players = []
    for seat, majors in enumerate(NETWORKS):
        paths = []
        for x, y in itertools.pairwise(majors):
            start = [m for m in MAP.cities[x].mileposts[1:] if MAP.adjacent[m]][seat % 2]
            end = [m for m in MAP.cities[y].mileposts[1:] if MAP.adjacent[m]][seat % 2]
            path = _route(start, end, used)
            used |= {edge_key(p, q) for p, q in itertools.pairwise(path)}
            paths.append(path)
        players.append(
            {
                "cards": [3 * seat, 3 * seat + 1, 3 * seat + 2],
                "money": 80,
                "train": paths[0][len(paths[0]) // 2],
                "turns": 10,
                "track": paths,
            }
        )
    position = EMPIRE_BUILDER.decode_position({"players": players, "turn_number": 40})
    return LocalGame.from_position(EMPIRE_BUILDER, bytes(32), position).state


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()

    state = mid_game()
    s = EMPIRE_BUILDER.to_act(state)[0]  # a lost load's chooser may wait too
    listed = EMPIRE_BUILDER.legal(state, s)
    started = time.perf_counter()
    for _ in range(args.repeat):
        EMPIRE_BUILDER.legal(state, s)
    legal_seconds = time.perf_counter() - started

    seed = hashlib.sha256(b"bench/empire-builder").digest()
    table: LocalGame[Any, Any, Any, Any, Any] = LocalGame.new(EMPIRE_BUILDER, seed, 4, Options())
    bot = Rng(seed, 0)
    while table.state.turn_number < 4 * args.turns:
        seat = EMPIRE_BUILDER.to_act(table.state)[0]  # a lost load's chooser may wait too
        table.submit(seat, bot.choice(EMPIRE_BUILDER.legal(table.state, seat)))
    events = table.events
    rounds = max(1, 20_000 // len(events))
    started = time.perf_counter()
    for _ in range(rounds):
        EMPIRE_BUILDER.fold(events)
    fold_seconds = time.perf_counter() - started

    print(
        f"mid-game position: 4 players, {len(state.track)} track sections,"
        f" {len(listed)} legal steps for seat {s}"
    )
    print(
        f"legal: {args.repeat / legal_seconds:,.0f} generations/s"
        f"  ({legal_seconds / args.repeat * 1e3:.2f} ms each)"
    )
    print(
        f"fold:  {rounds * len(events) / fold_seconds:,.0f} events/s"
        f"  (a 4-player bot game of {len(events)} events, {args.turns} turns each)"
    )


if __name__ == "__main__":
    main()
