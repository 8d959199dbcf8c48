"""What each viewer sees. A face-down crate shows as face down to everyone but an auditor, in
views and in the events a viewer reads."""

from __future__ import annotations

from collections import Counter
from typing import Any

import msgspec

from domain.kernel import Secret, Viewer, sees_everything

from . import board
from . import events as ev
from .board import LOADING, SHIP_SIDE
from .rules import recovered
from .state import State

#: A ship's loading squares by name (the board never changes).
_LOADING_NAMES: dict[str, list[str]] = {
    colour: [board.square_name(s) for s in squares] for colour, squares in LOADING.items()
}


def view(state: State, viewer: Viewer) -> dict[str, Any]:
    hidden = state.crates_face_down and not sees_everything(viewer)
    on_dock = Counter(state.crates.values())
    crates = [
        {"square": sq, "colour": None if hidden else colour, "face_down": state.crates_face_down}
        for sq, colour in sorted(state.crates.items())
    ]
    stacks: dict[str, list[str]] = {}
    for worker, square in sorted(state.workers.items()):
        stacks.setdefault(square, []).append(worker)
    players = []
    for seat, p in enumerate(state.players):
        players.append(
            {
                "seat": seat,
                "colour": p.colour,
                "score": p.score,
                "loaded": p.loaded,
                "captured": p.captured,
                "collected": p.collected,
                "turns": p.turns,
                "crates_on_dock": None if hidden or p.colour is None else on_dock[p.colour],
                "doctor_ready": recovered(state, seat) if state.phase == "play" else [],
            }
        )
    return {
        "phase": state.phase,
        "board": {"files": board.FILES, "ranks": board.SIZE},
        "ships": [
            {
                "colour": colour,
                "side": SHIP_SIDE[colour],
                "loading": list(_LOADING_NAMES[colour]),
                "seat": state.seat_of_colour(colour),
            }
            for colour in state.colours
        ],
        "crates": crates,
        "crates_to_place": state.seats * state.crates_per_player - len(state.crates)
        if state.phase == "crates"
        else 0,
        "workers": stacks,
        "water": sorted(state.water),
        "doctor": dict(sorted(state.doctor.items())),
        "removed": sorted(state.removed),
        "held": [msgspec.to_builtins(h) for h in state.held],
        "sea": {colour: state.sea.count(colour) for colour in state.colours},
        "players": players,
        "order": state.order,
        "first_player": state.first_player,
        "current": state.current,
        "turn": state.turn,
        "moves_left": state.moves_left,
        "used": state.used,
        "winners": state.winners,
        "options": msgspec.to_builtins(state.options),
    }


def event_view(event: ev.E, viewer: Viewer) -> dict[str, Any]:
    data: dict[str, Any] = msgspec.to_builtins(event)
    if sees_everything(viewer):
        return data
    if isinstance(event, ev.CratePlaced):
        data["colour"] = None  # face down until the ships are chosen
    return data


def hidden(event: ev.E) -> list[Secret]:
    """A placed crate's colour: face down, read by nobody until the game is over (the crates
    turned up later show every colour on the board, not which placement drew which)."""
    if isinstance(event, ev.CratePlaced):
        return [Secret(("colour",))]
    return []


def render(state: State) -> str:
    """A text diagram of the dock, north up: crates as colour initials in capitals
    (``?`` face down), workers as lower-case kind letters (``d`` for Dockhands, with the count
    of a stack), ``.`` empty."""
    rows = []
    for rank in range(board.SIZE - 1, -1, -1):
        cells = []
        for file in range(board.SIZE):
            sq = board.square_name(rank * board.SIZE + file)
            if sq in state.crates:
                cells.append(" ?" if state.crates_face_down else " " + state.crates[sq][0].upper())
                continue
            here = [w for w, s in state.workers.items() if s == sq]
            if not here:
                cells.append(" .")
            elif len(here) > 1:
                cells.append(f"{len(here)}d")
            else:
                cells.append(" " + here[0].split("-")[1][0].lower())
        rows.append(f"{rank + 1} " + "".join(cells))
    rows.append("   " + " ".join(board.FILES))
    return "\n".join(rows)
