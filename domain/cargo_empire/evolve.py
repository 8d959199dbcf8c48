"""Folding events into state. Total and deterministic: no checks, no chance."""

from __future__ import annotations

from functools import singledispatch

from domain.kernel import Folder

from . import events as ev
from .board import CITIES, COLOURS, COMPONENTS, NAMES
from .position import fresh_city, state_from_position
from .state import Cards, Player, State


def _started(e: ev.GameStarted) -> State:
    d = COMPONENTS.deck
    return State(
        seats=e.seats,
        options=e.options,
        phase="setup",
        cities={n: fresh_city(n) for n in NAMES},
        players=[
            Player(Cards(), [], e.posts_per_player, {"truck": 0, "train": 0, "ship": 0})
            for _ in range(e.seats)
        ],
        public=list(e.public),
        deck=Cards(d.truck, d.train, d.ship),
        discard=Cards(),
        market=[],
        posts_per_player=e.posts_per_player,
        turns_per_round=e.turns_per_round,
        order=list(e.order),
        cubes_delivered={c: 0 for c in COLOURS},
        cubes_removed={c: 0 for c in COLOURS},
    )


@singledispatch
def _apply(event: ev.E, s: State) -> None:
    raise TypeError(f"Cargo Empire cannot fold {type(event).__name__}")


@_apply.register
def _(e: ev.CitiesDealt, s: State) -> None:
    s.players[e.seat].private = list(e.cities)


@_apply.register
def _(e: ev.CardsDrawn, s: State) -> None:
    for card in e.cards:
        s.deck.add(card, -1)
        s.players[e.seat].hand.add(card)


@_apply.register
def _(e: ev.MarketFilled, s: State) -> None:
    for card in e.cards:
        s.deck.add(card, -1)
        s.market.append(card)


@_apply.register
def _(e: ev.DiscardRecycled, s: State) -> None:
    for kind in ("truck", "train", "ship"):
        s.deck.add(kind, s.discard.get(kind))
    s.discard = Cards()


@_apply.register
def _(e: ev.PostPlaced, s: State) -> None:
    s.cities[e.city].posts.append(e.seat)
    s.players[e.seat].supply -= 1
    s.placed += 1


@_apply.register
def _(e: ev.PlayBegan, s: State) -> None:
    s.phase = "play"


@_apply.register
def _(e: ev.Delivered, s: State) -> None:
    p = s.players[e.seat]
    for leg in e.route:
        p.hand.add(leg.card, -1)
        s.discard.add(leg.card)
    origin = s.cities[e.origin]
    origin.cubes -= 1
    s.cubes_delivered[e.cargo] += 1
    s.cities[e.destination].demand[e.cargo] = e.seat
    p.supply -= 1
    p.deliveries += 1
    if e.cargo not in p.delivered:
        p.delivered = sorted([*p.delivered, e.cargo])
    for vehicle in ("truck", "train", "ship"):
        last = len(COMPONENTS.development.of(vehicle).vp) - 1
        p.markers[vehicle] = min(last, p.markers[vehicle] + getattr(e.moves, vehicle))


@_apply.register
def _(e: ev.CityUpgraded, s: State) -> None:
    city = s.cities[e.city]
    city.posts.extend(e.moved)
    old = CITIES[e.city].lv1 if city.level == 1 else CITIES[e.city].lv2
    s.cubes_removed[old.cargo] += city.cubes
    city.level = e.level
    if e.level == 2:
        tile = CITIES[e.city].lv2
        city.cubes = tile.cubes
        city.demand = {colour: None for colour in tile.demand}
    else:
        city.cubes = 0
        city.demand = {}


@_apply.register
def _(e: ev.MarketTaken, s: State) -> None:
    del s.market[e.slot]
    s.players[e.seat].hand.add(e.card)


@_apply.register
def _(e: ev.PostRetired, s: State) -> None:
    s.players[e.seat].supply -= 1


@_apply.register
def _(e: ev.TurnEnded, s: State) -> None:
    s.turn += 1
    if s.turn >= s.turns_per_round * s.seats and s.round < COMPONENTS.rounds:
        s.round += 1
        s.turn = 0


@_apply.register
def _(e: ev.GameEnded, s: State) -> None:
    s.phase = "finished"
    s.scores = list(e.scores)
    s.winners = list(e.winners)


evolve: Folder[State] = Folder(
    {ev.GameStarted: _started, ev.PositionLoaded: lambda e: state_from_position(e.position)},
    _apply,
    State.copy,
)
