"""Every next step the player to act may take. A path command (``build``, ``move``) is listed
one step at a time: ``build {path: [a, b], cost}`` for every section the player may build next,
with its cost (from a major city or own track, within the money, the $20M and the city limits),
and ``move [b]`` for every milepost the train may enter next. A client chains steps into one
command; a path of listed steps that stays within the turn's money and moves is accepted. The
rest: ``place_train`` per city (only that, when the train is due), ``upgrade`` and
``trade_in`` (at the start of a turn), ``pick_up``, ``deliver`` and ``dump`` where the train is,
and ``end_turn``."""

from __future__ import annotations

from . import commands as cmd
from .board import (
    BORROW_LIMIT,
    CARDS,
    ENTRY_COST,
    LOADS,
    MAP,
    MEDIUM,
    SMALL,
    SPEND_LIMIT,
    SUPPLIES,
    UPGRADE_COST,
    edge_key,
)
from .rules import MAJOR_STARTS, move_problem, step_problem, struck
from .state import BUILDING_TURNS, State


def legal(state: State, seat: int) -> list[cmd.Command]:
    if state.phase != "play":
        return []
    p = state.players[seat]
    if seat in state.pending:
        return [cmd.LoseLoad(x) for x in sorted(set(p.loads))]
    if state.current() != seat:
        return []
    if p.turns >= BUILDING_TURNS and p.train is None:
        return [cmd.PlaceTrain(name) for name in sorted(MAP.cities)]
    out: list[cmd.Command] = []
    t = state.turn
    if not t.acted:
        if p.money >= UPGRADE_COST and t.spent + UPGRADE_COST <= SPEND_LIMIT:
            if p.speed == 9:
                out.append(cmd.Upgrade("speed"))
            if p.capacity == 2:
                out.append(cmd.Upgrade("capacity"))
        out.append(cmd.TradeIn())
    if p.train is not None and not t.built:
        out += moves(state, seat, p.train)
        out += loads(state, seat, p.train)
    out += builds(state, seat)
    if state.options.borrowing and t.borrowed < BORROW_LIMIT:
        out.append(cmd.Borrow(BORROW_LIMIT - t.borrowed))
    out.append(cmd.EndTurn())
    return out


def moves(state: State, seat: int, at: int) -> list[cmd.Command]:
    out: list[cmd.Command] = []
    for b in sorted({*MAP.inside[at], *MAP.adjacent[at]}):
        if not isinstance(move_problem(state, seat, at, b, 0, []), tuple):
            out.append(cmd.Move([b]))
            out.append(cmd.AutoMove(b))  # decide takes it wherever the step may go
    return out


def loads(state: State, seat: int, at: int) -> list[cmd.Command]:
    p = state.players[seat]
    out: list[cmd.Command] = []
    city = MAP.city_at[at]
    if state.effects and struck(state, at) is not None:
        city = None  # a strike: no pick-up or delivery here
    if city is not None and len(p.loads) < p.capacity:
        out += [cmd.PickUp(x) for x in SUPPLIES[city] if state.chips_out(x) < LOADS[x].chips]
    for slot, card in enumerate(p.cards):
        if card < 0:
            continue
        for i, demand in enumerate(CARDS[card]):
            if demand.city == city and demand.load in p.loads:
                out.append(cmd.Deliver(slot, i))
    out += [cmd.Dump(x) for x in sorted(set(p.loads))]
    return out


_TOWNS = frozenset((SMALL, MEDIUM))
_MAJOR_MILEPOSTS = frozenset(m for name in MAP.majors for m in MAP.cities[name].mileposts)


def build_starts(state: State, seat: int) -> list[int]:
    """Own track's mileposts and the other mileposts of the major cities it reaches, and every
    major's while a start out of a major is left (what ``rules.start_problem`` accepts, without
    asking it milepost by milepost)."""
    own = {m for k, o in state.track.items() if o == seat for m in divmod(k, 4096)}
    if state.turn.major_starts < MAJOR_STARTS:
        own |= _MAJOR_MILEPOSTS
    else:  # the free zone of a major city own track reaches joins all its mileposts
        own |= {
            x for m in own & _MAJOR_MILEPOSTS for x in MAP.cities[MAP.city_at[m] or ""].mileposts
        }
    return sorted(own)


def builds(state: State, seat: int) -> list[cmd.Command]:
    if state.turn.spent >= SPEND_LIMIT or state.players[seat].money <= 0:
        return []
    out: list[cmd.Command] = []
    budget = min(SPEND_LIMIT - state.turn.spent, state.players[seat].money)
    track, terrain = state.track, MAP.terrain
    for a in build_starts(state, seat):
        a_town = terrain[a] in _TOWNS
        for b, extra in MAP.adjacent[a].items():
            price = ENTRY_COST[terrain[b]] + extra
            if price > budget or edge_key(a, b) in track:
                continue
            # what is left to check is the limits of small and medium cities (and event cards)
            if a_town or terrain[b] in _TOWNS or state.effects:
                found = step_problem(state, seat, a, b, {}, 0)
                if isinstance(found, tuple):
                    continue
            out.append(cmd.Build([a, b], price))
    return out
