"""What each viewer sees. A face-down crate shows as face down to everyone but an auditor, in
views and in the events a viewer reads."""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any

import msgspec
from msgspec import Meta

from domain.kernel import Secret, Viewer, sees_everything
from domain.kernel.typed import union_with

from . import board
from . import events as ev
from .board import LOADING, SHIP_SIDE, Colour
from .options import Options
from .rules import recovered
from .state import HeldCrate, Phase, State

#: A ship's loading squares by name (the board never changes).
_LOADING_NAMES: dict[str, list[str]] = {
    colour: [board.square_name(s) for s in squares] for colour, squares in LOADING.items()
}


class CrateView(msgspec.Struct, frozen=True, kw_only=True):
    """A crate on the dock."""

    square: str
    colour: Annotated[
        Colour | None, Meta(description="None while the crates are face down (but to an auditor)")
    ]
    face_down: Annotated[bool, Meta(description="The crates have not been turned up yet")]


class ShipView(msgspec.Struct, frozen=True, kw_only=True):
    """A ship in play, off one side of the dock."""

    colour: Colour
    side: Annotated[str, Meta(description="The dock's edge it lies off: N, E, S or W")]
    loading: Annotated[list[str], Meta(description="Its two loading squares")]
    seat: Annotated[int | None, Meta(description="The seat that chose it; None before then")]


class JollyCargoPlayer(msgspec.Struct, frozen=True, kw_only=True):
    """One seat's player."""

    seat: int
    colour: Colour | None
    score: int
    loaded: Annotated[int, Meta(description="Own crates loaded onto the ship")]
    captured: Annotated[int, Meta(description="Opponents' crates pushed into the sea")]
    collected: Annotated[int, Meta(description="loaded + captured")]
    turns: Annotated[int, Meta(description="Turns begun (the Doctor counts in these)")]
    crates_on_dock: Annotated[
        int | None,
        Meta(description="Own crates still on the dock; None while face down or before ships"),
    ]
    doctor_ready: Annotated[
        list[str], Meta(description="Own Dockhands at the Doctor who may come back this turn")
    ]


class JollyCargoBoard(msgspec.Struct, frozen=True, kw_only=True):
    """The dock's size: file letters and the number of ranks."""

    files: str
    ranks: int


class JollyCargoView(msgspec.Struct, frozen=True, kw_only=True):
    """Tom Jolly's CARGO as one viewer sees it (seat, spectator or auditor: one shape, the
    hidden values null)."""

    phase: Phase
    board: JollyCargoBoard
    ships: list[ShipView]
    crates: list[CrateView]
    crates_to_place: Annotated[int, Meta(description="Crates still to place in the crates phase")]
    workers: Annotated[dict[str, list[str]], Meta(description="Square -> the workers on it")]
    water: Annotated[list[str], Meta(description="Workers in the water")]
    doctor: Annotated[
        dict[str, int], Meta(description="Dockhand at the Doctor -> owner's turn it may return")
    ]
    removed: Annotated[list[str], Meta(description="Workers out of the game")]
    held: Annotated[list[HeldCrate], Meta(description="Crates off the board until placed back")]
    sea: Annotated[dict[str, int], Meta(description="Crate colour -> how many were lost at sea")]
    players: list[JollyCargoPlayer]
    order: Annotated[list[int], Meta(description="Set-up: seats in the order they place")]
    first_player: int | None
    current: Annotated[int | None, Meta(description="The seat whose turn it is in play")]
    turn: int
    moves_left: int
    used: Annotated[list[str], Meta(description="Workers that moved this turn")]
    winners: list[int]
    options: Options


def view(state: State, viewer: Viewer) -> JollyCargoView:
    hidden = state.crates_face_down and not sees_everything(viewer)
    on_dock = Counter(state.crates.values())
    crates = [
        CrateView(square=sq, colour=None if hidden else colour, face_down=state.crates_face_down)
        for sq, colour in sorted(state.crates.items())
    ]
    stacks: dict[str, list[str]] = {}
    for worker, square in sorted(state.workers.items()):
        stacks.setdefault(square, []).append(worker)
    players = [
        JollyCargoPlayer(
            seat=seat,
            colour=p.colour,
            score=p.score,
            loaded=p.loaded,
            captured=p.captured,
            collected=p.collected,
            turns=p.turns,
            crates_on_dock=None if hidden or p.colour is None else on_dock[p.colour],
            doctor_ready=recovered(state, seat) if state.phase == "play" else [],
        )
        for seat, p in enumerate(state.players)
    ]
    return JollyCargoView(
        phase=state.phase,
        board=JollyCargoBoard(files=board.FILES, ranks=board.SIZE),
        ships=[
            ShipView(
                colour=colour,
                side=SHIP_SIDE[colour],
                loading=list(_LOADING_NAMES[colour]),
                seat=state.seat_of_colour(colour),
            )
            for colour in state.colours
        ],
        crates=crates,
        crates_to_place=state.seats * state.crates_per_player - len(state.crates)
        if state.phase == "crates"
        else 0,
        workers=stacks,
        water=sorted(state.water),
        doctor=dict(sorted(state.doctor.items())),
        removed=sorted(state.removed),
        held=list(state.held),
        sea={colour: state.sea.count(colour) for colour in state.colours},
        players=players,
        order=list(state.order),
        first_player=state.first_player,
        current=state.current,
        turn=state.turn,
        moves_left=state.moves_left,
        used=list(state.used),
        winners=list(state.winners),
        options=state.options,
    )


class CratePlacedSeen(msgspec.Struct, frozen=True, tag="crate_placed", tag_field="type"):
    """``crate_placed`` as a viewer reads it: the colour is null but to an auditor (face down
    until the ships are chosen)."""

    seat: int | None
    square: str
    colour: Colour | None


#: What ``event_view`` returns: the events, ``crate_placed`` read as :class:`CratePlacedSeen`.
EventView: Any = union_with(ev.Event, CratePlacedSeen)


def event_view(event: ev.E, viewer: Viewer) -> Any:
    if isinstance(event, ev.CratePlaced):
        shown = event.colour if sees_everything(viewer) else None
        return CratePlacedSeen(seat=event.seat, square=event.square, colour=shown)
    return event


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
