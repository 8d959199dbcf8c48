"""Folding events into state. Total and deterministic: no checks, no chance."""

from __future__ import annotations

from functools import singledispatch

from domain.kernel import Folder

from . import events as ev
from .board import edge_key
from .cards import EVENT_BASE, EVENTS, LASTING
from .position import state_from_position
from .state import Effect, Player, State, Turn


def _started(event: ev.GameStarted) -> State:
    return State(
        seats=event.seats,
        options=event.options,
        phase="play",
        order=list(event.order),
        players=[Player(event.money, [-1, -1, -1]) for _ in range(event.seats)],
        track={},
        deck=list(range(EVENT_BASE + len(EVENTS))),
        discard=[],
    )


@singledispatch
def _apply(event: ev.E, s: State) -> None:
    raise TypeError(f"Empire Builder cannot fold {type(event).__name__}")


@_apply.register
def _(e: ev.CardDrawn, s: State) -> None:
    s.deck.remove(e.card)
    s.players[e.seat].cards[e.slot] = e.card


@_apply.register
def _(e: ev.DiscardReshuffled, s: State) -> None:
    s.deck = sorted(s.deck + s.discard)
    s.discard = []


@_apply.register
def _(e: ev.Upgraded, s: State) -> None:
    p = s.players[e.seat]
    p.money -= e.cost
    if e.kind == "speed":
        p.speed = 12
    else:
        p.capacity = 3
    s.turn.spent += e.cost
    s.turn.acted = True


@_apply.register
def _(e: ev.TradedIn, s: State) -> None:
    s.discard = sorted(s.discard + e.cards)
    s.players[e.seat].cards = [-1, -1, -1]
    s.turn.acted = True


@_apply.register
def _(e: ev.TrackBuilt, s: State) -> None:
    for a, b in zip(e.path, e.path[1:], strict=False):
        s.track[edge_key(a, b)] = e.seat
    s.players[e.seat].money -= e.cost
    s.turn.spent += e.cost
    s.turn.built = True
    s.turn.acted = True
    s.turn.major_starts += e.major_start


@_apply.register
def _(e: ev.TrainPlaced, s: State) -> None:
    s.players[e.seat].train = e.milepost


@_apply.register
def _(e: ev.TrainMoved, s: State) -> None:
    p = s.players[e.seat]
    p.train = e.path[-1]
    s.turn.moved += len(e.path) if e.moves is None else e.moves
    s.turn.acted = True
    for fee in e.fees:
        p.money -= fee.amount
        s.players[fee.to].money += fee.amount
        s.turn.paid = sorted({*s.turn.paid, fee.to})


@_apply.register
def _(e: ev.LoadPickedUp, s: State) -> None:
    s.players[e.seat].loads.append(e.load)
    s.turn.acted = True


@_apply.register
def _(e: ev.LoadDelivered, s: State) -> None:
    p = s.players[e.seat]
    p.loads.remove(e.load)
    p.money += e.payoff - e.repaid
    p.debt -= e.repaid
    p.cards[e.slot] = -1
    s.discard = sorted([*s.discard, e.card])
    s.turn.acted = True


@_apply.register
def _(e: ev.LoadDumped, s: State) -> None:
    s.players[e.seat].loads.remove(e.load)
    s.turn.acted = True


@_apply.register
def _(e: ev.Borrowed, s: State) -> None:
    p = s.players[e.seat]
    p.money += e.amount
    p.debt += e.owed
    s.turn.borrowed += e.amount


@_apply.register
def _(e: ev.FaceChosen, s: State) -> None:
    s.players[e.seat].face = e.face


@_apply.register
def _(e: ev.EventCardDrawn, s: State) -> None:
    s.deck.remove(e.card)
    s.discard = sorted([*s.discard, e.card])
    for a, b, _owner in e.erased:
        s.track.pop(edge_key(a, b), None)
    for lost in [*e.derailed, *e.lost]:
        p = s.players[lost.seat]
        if lost.load is not None:
            p.loads.remove(lost.load)
    for lost in e.derailed:
        s.players[lost.seat].skip += 1
    for paid in e.taxes:
        s.players[paid.seat].money -= paid.amount
    s.pending = _owed(s, [*s.pending, *e.choosers])
    if e.kind in LASTING:
        s.effects = [*s.effects, Effect(e.card, e.seat, 2)]


def _owed(s: State, pending: list[int]) -> list[int]:
    """``pending`` (a seat once per load it must still choose to lose), sorted, each seat kept
    at most as often as its train has loads: an event that took loads from a seat that was still
    choosing leaves it fewer (none: it is waited for no more), so no seat is ever waited for with
    nothing to choose."""
    out: list[int] = []
    for x in sorted(pending):
        if out.count(x) < len(s.players[x].loads):
            out.append(x)
    return out


@_apply.register
def _(e: ev.LoadLost, s: State) -> None:
    s.players[e.seat].loads.remove(e.load)
    s.pending.remove(e.seat)


def _turn_over(seat: int, s: State) -> None:
    s.players[seat].turns += 1
    s.turn_number += 1
    s.turn = Turn()
    s.effects = [
        x if x.drawer != seat else Effect(x.card, x.drawer, x.turns_left - 1)
        for x in s.effects if x.drawer != seat or x.turns_left > 1
    ]


@_apply.register
def _(e: ev.TurnEnded, s: State) -> None:
    _turn_over(e.seat, s)


@_apply.register
def _(e: ev.TurnLost, s: State) -> None:
    s.players[e.seat].skip -= 1
    _turn_over(e.seat, s)


@_apply.register
def _(e: ev.GameEnded, s: State) -> None:
    s.phase = "finished"
    s.winners = list(e.winners)
    s.reason = e.reason



evolve: Folder[State] = Folder(
    {ev.GameStarted: _started, ev.PositionLoaded: lambda e: state_from_position(e.position)},
    _apply,
    State.copy,
)
