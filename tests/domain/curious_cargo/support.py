"""Helpers: tables from positions, commands by JSON, quick looks at a seat."""

from __future__ import annotations

from typing import Any

import pytest

from domain.curious_cargo import CURIOUS_CARGO as G
from domain.curious_cargo.components import BOARDS
from domain.curious_cargo.lines import active_docks, layout
from domain.curious_cargo.state import Player, State
from domain.kernel import LocalGame, RuleError

AnyGame = LocalGame[Any, Any, Any, Any, Any]
SEED = bytes(range(32))


def at(position: dict[str, Any], seed: bytes = SEED) -> AnyGame:
    """A table from a position; players default to empty seats."""
    position = {"at": "turn", **position}
    position.setdefault("players", [{}, {}])
    return LocalGame.from_position(G, seed, G.decode_position(position))


def send(table: AnyGame, seat: int, **command: Any) -> list[Any]:
    return table.submit(seat, G.decode_command(command))


def refused(table: AnyGame, seat: int, code: str, **command: Any) -> RuleError:
    before = table.version
    with pytest.raises(RuleError) as info:
        send(table, seat, **command)
    assert info.value.code == code, info.value
    assert table.version == before
    return info.value


def docks(p: Player) -> dict[str, str]:
    return active_docks(BOARDS[1], layout(p.board).top)


def state(table: AnyGame) -> State:
    s: State = table.state
    return s


def kinds(events: list[Any]) -> list[str]:
    return [type(e).__name__ for e in events]
