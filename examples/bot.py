"""A bot that plays any game on a Manifest server through ``GET /legal``: whichever seat is to
act picks one of its legal commands at random and sends it with ``expected_version``.

    python -m examples.bot http://127.0.0.1:8000 jolly-cargo --seats 3 [--delay 0.2]

It creates the game with one bot per seat and plays it to the end, printing the result.
"""

from __future__ import annotations

import argparse
import random
import time

from .client import ApiError, Created, GameDoc, ManifestClient


def play(
    api: ManifestClient,
    created: Created,
    *,
    rng: random.Random | None = None,
    delay: float = 0.0,
    max_commands: int = 20_000,
) -> GameDoc:
    """Play ``created`` (every seat held by this bot) to its end; returns the final document."""
    rng = rng or random.Random()
    seats = [api.seat(created, s.seat) for s in created.seats]
    for _ in range(max_commands):
        doc = api.game(created.id)
        if doc.status == "finished":
            return doc
        if not doc.to_act:
            raise RuntimeError(f"game {created.id} is {doc.status} with nobody to act")
        me = seats[rng.choice(doc.to_act)]
        legal = me.legal(created.id)
        if not legal.commands:
            continue  # the turn moved on between the two reads
        try:
            me.command(created.id, rng.choice(legal.commands), expected_version=legal.version)
        except ApiError as error:
            if error.code != "version.conflict":
                raise
        if delay:
            time.sleep(delay)
    raise RuntimeError(f"game {created.id} did not end in {max_commands} commands")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("url")
    parser.add_argument("game")
    parser.add_argument("--seats", type=int, default=2)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    with ManifestClient(args.url) as api:
        created = api.create(args.game, players=[f"bot{i}" for i in range(args.seats)])
        print(f"game {created.id}: {args.url}/viewer/#/games/{created.id}")
        doc = play(api, created, rng=random.Random(args.seed), delay=args.delay)
        print(f"finished at version {doc.version}: {doc.result}")


if __name__ == "__main__":
    main()
