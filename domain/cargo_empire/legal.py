"""Every command a seat may send now: every delivery with every payment and bonus split, the
gather actions, or the starting posts. Routes come precomputed from ``board.ROUTES``; only the
hand, the cubes and the demand spaces are checked here, so this stays fast."""

from __future__ import annotations

from functools import cache

from . import commands as cmd
from .board import CITIES, NAMES, ROUTES, VEHICLES, Route, Vehicle
from .rules import bonus_reasons
from .state import State

#: (origin, destination) → every allowed route with its legs as command values.
_LEGS: dict[tuple[str, str], list[tuple[Route, list[cmd.Leg]]]] = {
    pair: [(r, [cmd.Leg(card, to) for card, to in r.legs]) for r in routes]
    for pair, routes in ROUTES.items()
}


@cache
def splits(moved: tuple[Vehicle, ...], bonus: int) -> list[cmd.Moves]:
    """Every way to give ``bonus`` moves to the vehicles in ``moved``."""
    out: list[cmd.Moves] = []

    def go(i: int, left: int, given: dict[str, int]) -> None:
        if i == len(moved) - 1:
            out.append(cmd.Moves(**{**given, moved[i]: left}))
            return
        for n in range(left + 1):
            go(i + 1, left - n, {**given, moved[i]: n})

    go(0, bonus, {})
    return out


def legal(state: State, seat: int) -> list[cmd.Command]:
    if state.phase == "finished" or state.current() != seat:
        return []
    if state.phase == "setup":
        return [cmd.PlacePost(n) for n in NAMES if not state.posts_in(n)]
    out: list[cmd.Command] = []
    out += deliveries(state, seat)
    out.append(cmd.Gather(None))
    out += [cmd.Gather(i) for i in range(len(state.market))]
    return out


def deliveries(state: State, seat: int) -> list[cmd.Command]:
    player = state.players[seat]
    if player.supply == 0:
        return []
    hand = player.hand
    have = (hand.truck, hand.train, hand.ship)
    out: list[cmd.Command] = []
    for origin in NAMES:
        o = state.cities[origin]
        if o.level == 3 or o.cubes == 0 or not state.has_post(seat, origin):
            continue
        cargo = (CITIES[origin].lv1 if o.level == 1 else CITIES[origin].lv2).cargo
        for destination in NAMES:
            d = state.cities[destination]
            if destination == origin or cargo not in d.demand or d.demand[cargo] is not None:
                continue
            bonus = len(bonus_reasons(state, seat, origin, destination, cargo))
            for route, legs in _LEGS[(origin, destination)]:
                if route.truck > have[0] or route.train > have[1] or route.ship > have[2]:
                    continue
                for split in splits(route.moved, bonus):
                    out.append(cmd.Deliver(origin, destination, cargo, legs, split))
    return out


__all__ = ["VEHICLES", "deliveries", "legal", "splits"]
