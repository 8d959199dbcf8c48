"""Helpers for CARGO tests: set up a position in one call, write steps tersely, read the board."""

from __future__ import annotations

from typing import Any

import pytest

from domain.jolly_cargo import JOLLY_CARGO
from domain.jolly_cargo.commands import Move, Step
from domain.jolly_cargo.state import State
from domain.kernel import LocalGame, RuleError

SEED = bytes(range(32))

#: A red crate tucked in a corner, so the red player is never out of crates by accident.
SPARE = {"a8": "red", "h8": "green"}


def at(position: dict[str, Any], seed: bytes = SEED) -> LocalGame[Any, Any, Any, Any, Any]:
    """A table that starts from ``position`` (the documented JSON form)."""
    pos: dict[str, Any] = {"players": [{"colour": "red"}, {"colour": "green"}], **position}
    return LocalGame.from_position(JOLLY_CARGO, seed, JOLLY_CARGO.decode_position(pos))


def steps(*spec: str) -> list[Step]:
    """``steps("E:push", "N")`` → steps; the kind defaults to ``move``."""
    out = []
    for item in spec:
        d, _, kind = item.partition(":")
        out.append(Step(d, kind or "move"))  # type: ignore[arg-type]
    return out


def move(workers: str | list[str], *spec: str) -> Move:
    return Move([workers] if isinstance(workers, str) else workers, steps(*spec))


def board(state: State) -> dict[str, Any]:
    """The dock as plain data: crates by square, sorted worker stacks by square."""
    stacks: dict[str, list[str]] = {}
    for worker, square in state.workers.items():
        stacks.setdefault(square, []).append(worker)
    return {"crates": dict(state.crates), "workers": {sq: sorted(ws) for sq, ws in stacks.items()}}


def rejects(
    table: LocalGame[Any, Any, Any, Any, Any], seat: int, command: Any, code: str
) -> RuleError:
    """Assert the command is refused with ``code`` and that nothing changed."""
    before = (table.version, board(table.state))
    with pytest.raises(RuleError) as caught:
        table.submit(seat, command)
    assert caught.value.code == code, caught.value.message
    assert (table.version, board(table.state)) == before
    return caught.value
