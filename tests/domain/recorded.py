"""Recorded games: the commands of whole games and a digest of the events each command caused,
as the code of the day decided them (``tests/domain/data/recorded_games.json``).

Stored games are re-adjudicated by the audit, so a change to how a game's ``decide`` is written
must leave what it emits unchanged: ``test_recorded_games.py`` replays every recorded command and
checks each digest, the opening's and the final state's. The commands are stored, not re-chosen
by the bots, so a change to ``legal`` or a bot's taste does not change what is replayed.

Re-record (only when a rules change is meant to change the events, and say so in the commit)::

    .venv/bin/python -m tests.domain.recorded
"""

from __future__ import annotations

import hashlib
import importlib
import json
import sys
from pathlib import Path
from typing import Any

import msgspec

from domain.kernel import LocalGame, Rng
from domain.registry import get_game

FIXTURE = Path(__file__).with_name("data") / "recorded_games.json"

#: (game, seats, options as JSON, who plays: "random" or "greedy", the game's number)
PLAN: list[tuple[str, int, dict[str, Any] | None, str, int]] = [
    ("jolly-cargo", 2, {"crate_placement": "random"}, "random", 0),
    ("jolly-cargo", 3, None, "greedy", 0),
    ("jolly-cargo", 4, {"crate_placement": "random"}, "greedy", 0),
    ("cargo-empire", 1, None, "random", 0),
    ("cargo-empire", 3, {"starting_posts": "random"}, "random", 0),
    ("cargo-empire", 2, None, "greedy", 0),
    ("cargo-empire", 5, {"starting_posts": "random"}, "greedy", 0),
    # long enough for trade-ins, event cards, lost turns and a reshuffled discard pile
    ("empire-builder", 3, {"turn_limit": 80}, "random", 1),
    ("empire-builder", 3, {"turn_limit": 30}, "greedy", 0),
    ("empire-builder", 2, {"turn_limit": 60, "money_to_win": 120}, "greedy", 0),
    ("curious-cargo", 2, None, "greedy", 0),
    ("curious-cargo", 2, {"draft": False}, "greedy", 0),
    ("curious-cargo", 2, {"draft": False}, "random", 12),  # tokens over the cap returned
]


def digest(value: Any) -> str:
    return hashlib.sha256(msgspec.json.encode(value)).hexdigest()[:20]


def _bots(game_id: str, seats: int, seed: bytes) -> list[Any]:
    """Each seat's greedy bot (``domain/<game>/greedy.py``)."""
    greedy = importlib.import_module(f"domain.{game_id.replace('-', '_')}.greedy")
    if game_id == "empire-builder":
        return [greedy.GreedyBot() for _ in range(seats)]
    return [greedy.GreedyBot(Rng(seed, 1_000_000 + seat)) for seat in range(seats)]


def play(game_id: str, seats: int, options: dict[str, Any] | None, who: str, n: int) -> Any:
    """One whole game, recorded."""
    game = get_game(game_id)
    seed = hashlib.sha256(f"recorded/{game_id}/{seats}/{who}/{n}/{options}".encode()).digest()
    table = LocalGame.new(game, seed, seats, game.decode_options(options))
    opening = digest(table.events)
    chooser = Rng(seed, 2_000_000)
    bots = _bots(game_id, seats, seed) if who == "greedy" else []
    commands: list[Any] = []
    for _ in range(20_000):
        waiting = game.to_act(table.state)
        if not waiting:
            break
        if who == "greedy":
            seat = waiting[0]
            command = bots[seat].choose(table.state, seat)
        else:
            seat = chooser.choice(waiting)
            command = chooser.choice(game.legal(table.state, seat))
        events = table.submit(seat, command)
        commands.append([seat, msgspec.to_builtins(command), digest(events)])
    return {
        "game": game_id,
        "seed": seed.hex(),
        "seats": seats,
        "options": options,
        "opening": opening,
        "commands": commands,
        "events": len(table.events),
        "state": digest(table.state),
    }


def record() -> list[Any]:
    return [play(game_id, seats, options, who, n) for game_id, seats, options, who, n in PLAN]


def main(argv: list[str]) -> None:
    out = Path(argv[0]) if argv else FIXTURE
    out.parent.mkdir(exist_ok=True)
    games = record()
    lines = ",\n".join(json.dumps(g, separators=(",", ":")) for g in games)
    out.write_text(f"[\n{lines}\n]\n")  # a game a line
    print(f"wrote {out}: {len(games)} games, {sum(len(g['commands']) for g in games)} commands")


if __name__ == "__main__":
    main(sys.argv[1:])
