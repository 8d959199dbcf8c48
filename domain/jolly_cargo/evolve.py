"""Folding events into state. Total and deterministic: no checks, no chance."""

from __future__ import annotations

from functools import singledispatch

from domain.kernel import Folder

from . import events as ev
from .pieces import colour_of
from .position import state_from_position
from .state import HeldCrate, Player, State


def _started(e: ev.GameStarted) -> State:
    return State(
        seats=e.seats,
        options=e.options,
        phase="crates",
        players=[Player() for _ in range(e.seats)],
        colours=list(e.colours),
        crates_per_player=e.crates_per_player,
        crates={},
        crates_face_down=True,
        workers={},
        water=[],
        doctor={},
        removed=[],
        held=[],
        sea=[],
        order=list(range(e.seats)),
    )


@singledispatch
def _apply(event: ev.E, s: State) -> None:
    raise TypeError(f"CARGO cannot fold {type(event).__name__}")


@_apply.register
def _(e: ev.CratePlaced, s: State) -> None:
    s.crates[e.square] = e.colour
    s.placed += 1


@_apply.register
def _(e: ev.DiceRolled, s: State) -> None:
    if e.purpose == "ships":
        s.phase = "ships"
        s.order = [(e.winner + i) % s.seats for i in range(s.seats)]
        s.placed = 0
    else:
        s.first_player = e.winner


@_apply.register
def _(e: ev.ShipChosen, s: State) -> None:
    s.players[e.seat].colour = e.colour
    s.placed += 1


@_apply.register
def _(e: ev.CratesTurnedUp, s: State) -> None:
    s.crates_face_down = False
    s.phase = "workers"
    s.placed = 0


@_apply.register
def _(e: ev.WorkerPlaced, s: State) -> None:
    s.workers[e.worker] = e.square
    s.placed += 1


@_apply.register
def _(e: ev.TurnBegan, s: State) -> None:
    s.phase = "play"
    s.current = e.seat
    s.turn = e.number
    s.moves_left = e.moves
    s.used = []
    s.acted = False
    s.players[e.seat].turns += 1


@_apply.register
def _(e: ev.WorkerReturned, s: State) -> None:
    if e.source == "water":
        s.water.remove(e.worker)
    else:
        del s.doctor[e.worker]
    s.workers[e.worker] = e.square


@_apply.register
def _(e: ev.WorkersMoved, s: State) -> None:
    s.acted = True
    s.used.extend(e.workers)
    s.moves_left -= len(e.workers)
    actor = s.players[e.seat]
    for op in e.ops:
        if isinstance(op, ev.WorkerShift):
            if op.to is not None:
                s.workers[op.worker] = op.to
            else:
                del s.workers[op.worker]
                (s.removed if s.options.fast_variant else s.water).append(op.worker)
        elif isinstance(op, ev.CrateShift):
            del s.crates[op.frm]
            if op.to is not None:
                s.crates[op.to] = op.colour
            else:
                s.sea.append(op.colour)
                if op.colour != actor.colour:
                    actor.captured += 1
        elif isinstance(op, ev.Squish):
            del s.workers[op.worker]
            owner = None if s.options.fast_variant else s.seat_of_colour(colour_of(op.worker))
            if owner is None:  # the fast variant (an owner is always found otherwise)
                s.removed.append(op.worker)
            else:
                # Out for the owner's next turn; back from the one after.
                s.doctor[op.worker] = s.players[owner].turns + 2
        elif isinstance(op, ev.Load):
            del s.crates[op.square]
            s.players[op.seat].loaded += 1
        else:  # Hold
            del s.crates[op.square]
            s.held.append(HeldCrate(op.seat, op.colour))
    for seat, points in enumerate(e.points):
        s.players[seat].score += points


@_apply.register
def _(e: ev.HeldCratePlaced, s: State) -> None:
    s.held.remove(HeldCrate(e.seat, e.colour))
    s.crates[e.square] = e.colour


@_apply.register
def _(e: ev.StoppedMoving, s: State) -> None:
    s.moves_left = 0


@_apply.register
def _(e: ev.TurnEnded, s: State) -> None:
    s.moves_left = 0


@_apply.register
def _(e: ev.GameEnded, s: State) -> None:
    s.phase = "finished"
    s.current = None
    s.winners = list(e.winners)


evolve: Folder[State] = Folder(
    {ev.GameStarted: _started, ev.PositionLoaded: lambda e: state_from_position(e.position)},
    _apply,
    State.copy,
)
