"""Curious Cargo engine throughput: events folded per second and legal-move generations per second.

    .venv/bin/python -m bench.curious_cargo [--games 30]

Plays a set of seeded bot games once (not timed), then times, over the recorded games:
folding every game's events from scratch, and generating ``legal`` for the seat to act at every
position of every game. Figures are printed; nothing is asserted.
"""

from __future__ import annotations

import argparse
import hashlib
import time
from typing import Any

from domain.curious_cargo import CURIOUS_CARGO
from domain.curious_cargo.options import Options
from domain.kernel import play_random_game


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10)
    args = parser.parse_args()

    logs: list[list[Any]] = []
    for n in range(args.games):
        seed = hashlib.sha256(f"bench/curious-cargo/{n}".encode()).digest()
        table, _ = play_random_game(CURIOUS_CARGO, seed, 2, Options(draft=n % 2 == 0))
        logs.append(table.events)
    events = sum(len(log) for log in logs)

    started = time.perf_counter()
    states = []
    for log in logs:
        state = None
        for event in log:
            state = CURIOUS_CARGO.evolve(state, event)
            states.append(state)
    fold_seconds = time.perf_counter() - started

    started = time.perf_counter()
    generated = 0
    for state in states:
        for seat in CURIOUS_CARGO.to_act(state):
            CURIOUS_CARGO.legal(state, seat)
            generated += 1
    legal_seconds = time.perf_counter() - started

    print(f"games: {len(logs)}  events: {events}  positions: {len(states)}")
    print(f"fold:  {events / fold_seconds:,.0f} events/s")
    print(f"legal: {generated / legal_seconds:,.0f} generations/s  ({generated} generations)")


if __name__ == "__main__":
    main()
