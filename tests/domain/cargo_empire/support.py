"""Helpers for Cargo Empire tests: a table from a position in one call, terse deliveries."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from domain.cargo_empire import CARGO_EMPIRE
from domain.cargo_empire.commands import Deliver, Leg, Moves
from domain.kernel import CommandError, LocalGame, RuleError

SEED = bytes(range(32))
AnyGame = LocalGame[Any, Any, Any, Any, Any]

#: Enough cards for any route.
RICH = {"truck": 8, "train": 4, "ship": 3}


def at(position: dict[str, Any], seed: bytes = SEED) -> AnyGame:
    """A table that starts from ``position`` (the documented JSON form)."""
    pos: dict[str, Any] = {"players": [{"hand": RICH}, {"hand": RICH}], **position}
    return LocalGame.from_position(CARGO_EMPIRE, seed, CARGO_EMPIRE.decode_position(pos))


def invalid(position: dict[str, Any]) -> str:
    """Assert ``position`` is refused as ``position.invalid`` (or ``position.out_of_range``,
    a number outside its field's documented range); the message saying why."""
    with pytest.raises(CommandError) as caught:
        at(position)
    assert caught.value.code in ("position.invalid", "position.out_of_range")
    return caught.value.message


def deliver(origin: str, destination: str, cargo: str, *legs: str, **bonus: int) -> Deliver:
    """``deliver("Lisboa", "Paris", "brown", "truck:Madrid", "truck:Paris", truck=1)``."""
    route = [Leg(*leg.split(":")) for leg in legs]  # type: ignore[arg-type]
    return Deliver(origin, destination, cargo, route, Moves(**bonus))  # type: ignore[arg-type]


def rejects(table: AnyGame, seat: int, command: Any, code: str) -> RuleError:
    """Assert the command is refused with ``code`` and that nothing changed."""
    before = (table.version, msgspec.json.encode(table.state))
    with pytest.raises(RuleError) as caught:
        table.submit(seat, command)
    assert caught.value.code == code, caught.value.message
    assert caught.value.message
    assert (table.version, msgspec.json.encode(table.state)) == before
    return caught.value


def types(events: list[Any]) -> list[str]:
    return [msgspec.to_builtins(e)["type"] for e in events]
