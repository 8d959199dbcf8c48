"""Helpers for Empire Builder tests: tables from positions, and mileposts found by what they are
(the map's ids are generated, so tests look them up instead of hard-coding them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from domain.empire_builder import EMPIRE_BUILDER
from domain.empire_builder.board import CARDS, MAP, edge_key
from domain.kernel import LocalGame, RuleError

SEED = bytes(range(32))
AnyGame = LocalGame[Any, Any, Any, Any, Any]


def at(position: dict[str, Any], seed: bytes = SEED) -> AnyGame:
    """A table that starts from ``position`` (the documented JSON form). Players default to
    in their building turns (``turns`` 1) unless they have a train, with cards 0–2, 3–5, ...;
    ``turn_number`` defaults to 3 rounds done (turns in seat order from ``first``)."""
    players = position.get("players", [{}, {}])
    filled = [{"cards": [3 * i, 3 * i + 1, 3 * i + 2], **({} if "train" in p else {"turns": 1}),
               **p} for i, p in enumerate(players)]
    # turn_number defaults to the first turn after the building rounds (the second of which goes
    # in reverse order), so turns go in seat order from ``first`` whatever the test plays
    pos = {"turn_number": 3 * len(players), **position, "players": filled}
    return LocalGame.from_position(EMPIRE_BUILDER, seed, EMPIRE_BUILDER.decode_position(pos))


def rejects(table: AnyGame, seat: int, command: Any, code: str) -> RuleError:
    """Assert the command is refused with ``code`` and that nothing changed."""
    if isinstance(command, dict):
        command = EMPIRE_BUILDER.decode_command(command)
    before = (table.version, msgspec.json.encode(table.state))
    with pytest.raises(RuleError) as caught:
        table.submit(seat, command)
    assert caught.value.code == code, caught.value.message
    assert caught.value.message
    assert (table.version, msgspec.json.encode(table.state)) == before
    return caught.value


def play(table: AnyGame, seat: int, command: dict[str, Any]) -> list[Any]:
    return table.submit(seat, EMPIRE_BUILDER.decode_command(command))


def types(events: list[Any]) -> list[str]:
    return [msgspec.to_builtins(e)["type"] for e in events]


def centre(city: str) -> int:
    return MAP.cities[city].mileposts[0]


def ring(city: str) -> list[int]:
    return list(MAP.cities[city].mileposts[1:])


def plain(a: int, b: int) -> bool:
    """a–b is buildable without a river or inlet crossing."""
    return b in MAP.adjacent[a] and MAP.adjacent[a][b] == 0


def edge(test: Callable[[int, int], bool]) -> tuple[int, int]:
    """The first buildable edge (a, b) with ``test(a, b)``, where a is a clear, non-city
    milepost with a plain neighbour not in any city (to lay own track up to a)."""
    for a in range(MAP.size):
        if MAP.terrain[a] != 0 or feeder(a) is None:
            continue
        for b in sorted(MAP.adjacent[a]):
            if test(a, b):
                return a, b
    raise LookupError("no such edge on the map")


def feeder(a: int, avoid: tuple[int, ...] = ()) -> int | None:
    """A clear non-city neighbour of ``a`` joined to it without a crossing."""
    for n in sorted(MAP.adjacent[a]):
        if MAP.terrain[n] == 0 and plain(a, n) and n not in avoid:
            return n
    return None


def track_to(a: int, avoid: tuple[int, ...] = ()) -> list[int]:
    """A one-section track ending at ``a``."""
    n = feeder(a, avoid)
    assert n is not None
    return [n, a]


def route(a: int, b: int) -> list[int]:
    """A shortest buildable path from a to b (breadth first over the map's edges)."""
    back = {a: a}
    todo = [a]
    while todo and b not in back:
        nxt = []
        for m in todo:
            for n in sorted(MAP.adjacent[m]):
                if n not in back:
                    back[n] = m
                    nxt.append(n)
        todo = nxt
    path = [b]
    while path[-1] != a:
        path.append(back[path[-1]])
    return path[::-1]


def card_with(city: str, load: str) -> tuple[int, int]:
    """A demand card id and the index of its demand for ``load`` in ``city``, if any."""
    for cid, card in enumerate(CARDS):
        for i, d in enumerate(card):
            if d.city == city and d.load == load:
                return cid, i
    raise LookupError(f"no card wants {load} in {city}")


def owner(table: AnyGame, a: int, b: int) -> int | None:
    track: dict[int, int] = table.state.track
    return track.get(edge_key(a, b))
