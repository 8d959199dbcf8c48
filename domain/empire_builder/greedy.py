"""A scripted greedy player: it picks the demand that pays best for the track it needs, builds
the cheapest route (own network or a major city → the supply city → the demand city), places its
train at the supply city, runs the load over its own track and delivers, then plans again.

Pure and deterministic (no randomness at all); it keeps its plan between commands, so use one
:class:`GreedyBot` per seat and game. ``choose(state, seat)`` returns a command the rules accept.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from . import commands as cmd
from .board import CARDS, LOADS, MAP, edge_key
from .rules import MAJOR_STARTS, move_problem, step_moves, step_problem, struck
from .state import BUILDING_TURNS, State

_MAJOR_MILEPOSTS = tuple(m for name in MAP.majors for m in MAP.cities[name].mileposts)
_FAR = 1 << 30
#: per milepost: (neighbour, building cost into it, edge key) for every buildable edge
_EDGES = [tuple((n, MAP.entry_cost(m, n), edge_key(m, n)) for n in MAP.adjacent[m])
          for m in range(MAP.size)]


@dataclass(frozen=True)
class Plan:
    slot: int
    demand: int
    card: int
    load: str
    supply: str
    city: str


def _costs(state: State, seat: int, sources: list[int]) -> tuple[list[int], list[int]]:
    """Cheapest building cost from ``sources`` to every milepost (own track and major free zones
    free, others' track closed), with the predecessor of each milepost."""
    dist = [_FAR] * MAP.size
    prev = [-1] * MAP.size
    heap = [(0, s) for s in sources]
    for s in sources:
        dist[s] = 0
    heapq.heapify(heap)
    track = state.track
    while heap:
        d, m = heapq.heappop(heap)
        if d > dist[m]:
            continue
        for n in MAP.inside[m]:
            if d < dist[n]:
                dist[n], prev[n] = d, m
                heapq.heappush(heap, (d, n))
        for n, price, key in _EDGES[m]:
            owner = track.get(key)
            if owner is not None:
                if owner != seat:
                    continue
                price = 0
            if d + price < dist[n]:
                dist[n], prev[n] = d + price, m
                heapq.heappush(heap, (d + price, n))
    return dist, prev


def _own_component(state: State, seat: int, start: int) -> set[int]:
    seen, todo = {start}, [start]
    while todo:
        m = todo.pop()
        for n in (*MAP.inside[m], *MAP.adjacent[m]):
            if n in seen:
                continue
            if n in MAP.inside[m] or state.track.get(edge_key(m, n)) == seat:
                seen.add(n)
                todo.append(n)
    return seen


def _own_path(state: State, seat: int, start: int, goal: set[int]) -> list[int] | None:
    """The shortest path over own track and free zones from ``start`` into ``goal``."""
    back = {start: start}
    todo = [start]
    while todo:
        nxt = []
        for m in todo:
            if m in goal:
                path = [m]
                while path[-1] != start:
                    path.append(back[path[-1]])
                return path[::-1][1:]
            for n in (*MAP.inside[m], *MAP.adjacent[m]):
                if n not in back and (n in MAP.inside[m]
                                      or state.track.get(edge_key(m, n)) == seat):
                    back[n] = m
                    nxt.append(n)
        todo = nxt
    return None


def _movable(state: State, seat: int, at: int, path: list[int]) -> list[int]:
    """The longest start of ``path`` the rules let the train run now (moves, fees, strikes,
    snow)."""
    fees: list[int] = []
    used = 0
    for i, b in enumerate(path):
        found = move_problem(state, seat, at, b, used, fees)
        if isinstance(found, tuple):
            return path[:i]
        if found is not None:
            fees.append(found)
        used += step_moves(state, b)
        at = b
    return path


class GreedyBot:
    def __init__(self) -> None:
        self.plan: Plan | None = None

    def choose(self, state: State, seat: int) -> cmd.Command:
        p = state.players[seat]
        if seat in state.pending:  # a lost load card: lose the first load
            return cmd.LoseLoad(p.loads[0])
        if self.plan is None or p.cards[self.plan.slot] != self.plan.card:
            self.plan = self._replan(state, seat)
        plan = self.plan
        if p.turns >= BUILDING_TURNS and p.train is None:
            return cmd.PlaceTrain(plan.supply if plan else MAP.majors[0])
        if plan is None:
            return cmd.EndTurn()
        supply = set(MAP.cities[plan.supply].mileposts)
        target = set(MAP.cities[plan.city].mileposts)
        if p.train is not None and not state.turn.built:
            here = MAP.city_at[p.train]
            if struck(state, p.train) is not None:
                here = None  # a strike: no pick-up or delivery here
            if plan.load in p.loads and here == plan.city:
                self.plan = None
                return cmd.Deliver(plan.slot, plan.demand)
            if (plan.load not in p.loads and here == plan.supply and len(p.loads) < p.capacity
                    and state.chips_out(plan.load) < LOADS[plan.load].chips):
                return cmd.PickUp(plan.load)
            if len(p.loads) >= p.capacity and plan.load not in p.loads:
                return cmd.Dump(p.loads[0])
            left = p.speed - state.turn.moved
            goal = target if plan.load in p.loads else supply
            path = _own_path(state, seat, p.train, goal) if left > 0 else None
            path = _movable(state, seat, p.train, path or [])
            if path:
                return cmd.Move(path)
        build = self._build(state, seat, plan)
        return build if build is not None else cmd.EndTurn()

    def _replan(self, state: State, seat: int) -> Plan | None:
        p = state.players[seat]
        own = sorted({m for k, o in state.track.items() if o == seat for m in divmod(k, 4096)})
        base = own + ([p.train] if p.train is not None else []) + list(_MAJOR_MILEPOSTS)
        from_network, _ = _costs(state, seat, base)
        best: tuple[int, Plan] | None = None
        for slot, card in enumerate(p.cards):
            if card < 0:
                continue
            for i, demand in enumerate(CARDS[card]):
                dist, _ = _costs(state, seat, list(MAP.cities[demand.city].mileposts))
                for supply in LOADS[demand.load].supply:
                    s = MAP.cities[supply].mileposts[0]
                    cost = dist[s] + min(from_network[s], from_network[
                        MAP.cities[demand.city].mileposts[0]])
                    if demand.load in p.loads:
                        cost = dist[p.train] if p.train is not None else cost
                    score = demand.payoff - cost
                    plan = Plan(slot, i, card, demand.load, supply, demand.city)
                    if best is None or score > best[0]:
                        best = (score, plan)
        return None if best is None else best[1]

    def _build(self, state: State, seat: int, plan: Plan) -> cmd.Command | None:
        p = state.players[seat]
        budget = min(20 - state.turn.spent, p.money)
        if budget <= 0:
            return None
        supply = MAP.cities[plan.supply].mileposts[0]
        city = MAP.cities[plan.city].mileposts[0]
        own = {m for k, o in state.track.items() if o == seat for m in divmod(k, 4096)}
        majors = list(_MAJOR_MILEPOSTS) if state.turn.major_starts < MAJOR_STARTS else []
        if supply in _own_component(state, seat, supply) and (own & _own_component(
                state, seat, supply) or MAP.terrain[supply] == 4):
            sources = sorted(_own_component(state, seat, supply))
            goal = city
            if goal in sources:
                return None
        else:
            sources = sorted(own) + majors
            goal = supply
        dist, prev = _costs(state, seat, sources)
        if dist[goal] >= _FAR:
            return None
        path = [goal]
        while dist[path[-1]] > 0:
            path.append(prev[path[-1]])
        path.reverse()
        # the first unbuilt stretch of the route, within the money and the rules
        start = 0
        while start + 1 < len(path) and (
                path[start + 1] in MAP.inside[path[start]]
                or state.track.get(edge_key(path[start], path[start + 1])) == seat):
            start += 1
        steps = [path[start]]
        new: dict[int, int] = {}
        cost = 0
        for b in path[start + 1:]:
            a = steps[-1]
            found = step_problem(state, seat, a, b, new, cost)
            if isinstance(found, tuple):
                break
            new[edge_key(a, b)] = seat
            cost += found
            steps.append(b)
        if len(steps) < 2:
            return None
        if steps[0] not in own and not MAP.is_major(steps[0]):
            return None
        if steps[0] not in own and state.turn.major_starts >= MAJOR_STARTS:
            return None
        return cmd.Build(steps)
