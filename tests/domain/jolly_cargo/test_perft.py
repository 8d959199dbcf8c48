"""Perft for CARGO: how many commands ``legal`` lists in fixed positions.

The counts are written down once, worked out by hand below from the rules (not taken from the
code that generates moves), so a change in move generation shows up as a changed number. Each
position has only the spare crates in the corners (a8, h8) besides what it names, red to move
with 3 moves left; every list ends with ``end_turn``. The dock is 8 × 8 (a1 … h8)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from domain.jolly_cargo import JOLLY_CARGO

from .support import SPARE, at

CASES: list[tuple[str, dict[str, Any], int, dict[str, int]]] = [
    # A lone Dockhand (1 step) in open dock: 4 moves + end_turn.
    ("dockhand", {"workers": {"d4": ["red-D1"]}}, 5, {"move": 4}),
    # A lone Burly Worker (1 step): the same 4 moves.
    ("burly", {"workers": {"d4": ["red-B"]}}, 5, {"move": 4}),
    # A lone Mule (2 steps): 4 one-step actions, then from each of the 4 squares 4 more steps
    # (stepping back onto d4 included): 4 + 16 = 20 actions.
    ("mule", {"workers": {"d4": ["red-M"]}}, 21, {"move": 20}),
    # The Elephant moves like the Mule when there is nothing to push or pull.
    ("elephant", {"workers": {"d4": ["red-E"]}}, 21, {"move": 20}),
    # A Mule in the corner a1: N or E first (2); from a2 then N, E or back S (3); from b1 N, E
    # or back W (3): 2 + 3 + 3 = 8.
    ("mule in a corner", {"workers": {"a1": ["red-M"]}}, 9, {"move": 8}),
    # A Mule on d4 with a crate on e4 (e4 … h4 otherwise empty):
    #   one step: move N, S, W; push E; pull W (the crate follows onto d4) = 5;
    #   after N (d5) or S (d3) or W (c4): 4 plain moves each, nothing to push or pull = 12;
    #   after push E (Mule e4, crate f4): move N, S, W; push E again; pull W (same crate) = 5;
    #   after pull W (Mule c4, crate d4): move N, S, W; push E; pull W again = 5.
    #   5 + 12 + 5 + 5 = 27.
    ("mule and a crate", {"crates": {"e4": "green"}, "workers": {"d4": ["red-M"]}}, 28,
     {"move": 27}),
    # Two Dockhands on d4 under a Burly Worker on d5: D1 alone E, S, W (the Burly blocks N) = 3;
    # D2 alone = 3; the stack D1+D2 = 3; the Burly N, E, W (Dockhands below it do not share with
    # a Burly) = 3. 12 actions; workers cannot push workers, so no push at all.
    ("stack", {"workers": {"d4": ["red-D1", "red-D2"], "d5": ["red-B"]}}, 13, {"move": 12}),
]


@pytest.mark.parametrize(("name", "position", "total", "by_type"), CASES,
                         ids=[c[0] for c in CASES])
def test_legal_counts_in_fixed_positions(
    name: str, position: dict[str, Any], total: int, by_type: dict[str, int]
) -> None:
    crates = {**SPARE, **position.get("crates", {})}
    table = at({**position, "crates": crates})
    listed = JOLLY_CARGO.legal(table.state, 0)
    assert len(listed) == total
    kinds = Counter(JOLLY_CARGO.to_builtins(c)["type"] for c in listed)
    assert kinds == Counter({**by_type, "end_turn": 1})
    assert JOLLY_CARGO.legal(table.state, 1) == []  # not green's turn


def test_the_mule_and_crate_actions_are_exactly_these() -> None:
    """The 27 actions of the Mule beside a crate, spelled out."""
    table = at({"crates": {**SPARE, "e4": "green"}, "workers": {"d4": ["red-M"]}})
    seen = sorted(
        " ".join(f"{s['dir']}:{s['kind']}" for s in JOLLY_CARGO.to_builtins(c)["steps"])
        for c in JOLLY_CARGO.legal(table.state, 0)
        if JOLLY_CARGO.to_builtins(c)["type"] == "move"
    )
    plain = [f"{a}:move {b}:move" for a in "NSW" for b in "NESW"]
    expected = sorted([
        "N:move", "S:move", "W:move", "E:push", "W:pull", *plain,
        "E:push N:move", "E:push S:move", "E:push W:move", "E:push E:push", "E:push W:pull",
        "W:pull N:move", "W:pull S:move", "W:pull W:move", "W:pull E:push", "W:pull W:pull",
    ])
    assert seen == expected
