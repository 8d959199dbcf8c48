"""A scripted greedy player that plays to the game's real ending: $250M and five major cities.

Every command it sends is decided afresh from the state and from where its train is:

* **Plan**: the demand that pays best per turn it takes (payoff less the track still to build,
  over the turns of travel and building), counted from the train's own network: the train runs
  to a supply city, picks up, runs to the demand city and delivers. A load it already carries is
  counted from the train alone; a demand whose track costs more than its cash only when no other
  is within it. The plan is kept until its card is gone, then made again.
* **Rescue** (start of a turn): when the track the plan still needs costs more than its cash, a
  loan if the payoff repays it twice over and it owes nothing yet, else another plan within the
  cash, else a trade-in for new cards.
* **Run**: deliver anything the train carries that a card wants here, pick up the plan's load
  (and a load another card wants, while a place is left for the plan's), dump a load no card
  wants any more or (at the supply city) the least wanted when the plan's load needs the place,
  then move over own track (and the majors' free zones) toward the next stop, as far as the
  moves, strikes and snow allow. The speed upgrade once $60M is left after paying for it, then
  the capacity upgrade once $120M is.
* **Build**: the cheapest track (own track free, others' closed) from the train's own network to
  the next stop that it cannot reach, then on to the demand city; once it has money to spare,
  the cheapest track joining its main network to the nearest major city it lacks, until it has
  the majors to win. A stretch is built from whichever end the rules let it start at.

The train is always placed on its own network (at the plan's supply city when the network
reaches it), and it only runs on own track, so after any re-plan the route is built from where
the train is: it never sits off its network waiting for track that is built elsewhere.

Pure and deterministic (no randomness at all); it keeps its plan between commands, so use one
:class:`GreedyBot` per seat and game. ``choose(state, seat)`` returns a command the rules accept.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from . import commands as cmd
from .board import BORROW_LIMIT, CARDS, LOADS, MAP, SPEND_LIMIT, SUPPLIES, UPGRADE_COST, edge_key
from .rules import connected_majors, move_problem, start_problem, step_moves, step_problem, struck
from .state import BUILDING_TURNS, State

_MAJOR_MILEPOSTS = frozenset(m for name in MAP.majors for m in MAP.cities[name].mileposts)
_FAR = 1 << 30
#: per milepost: (neighbour, building cost into it, edge key) for every buildable edge
_EDGES = [tuple((n, MAP.entry_cost(m, n), edge_key(m, n)) for n in MAP.adjacent[m])
          for m in range(MAP.size)]
#: cash kept back from building toward the majors while the plan's route still needs track
_RESERVE = 30


@dataclass(frozen=True)
class Plan:
    slot: int
    demand: int
    card: int
    load: str
    supply: str
    city: str
    #: the track it needed when planned ($M, estimated)
    build: int = 0
    payoff: int = 0


def _costs(state: State, seat: int, sources: list[int] | set[int]) -> tuple[list[int], list[int]]:
    """Cheapest building cost from ``sources`` to every milepost (own track and major free zones
    free, others' track closed), with the predecessor of each milepost."""
    dist = [_FAR] * MAP.size
    prev = [-1] * MAP.size
    heap = [(0, s) for s in sorted(sources)]
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


def _hops(sources: list[int]) -> list[int]:
    """Fewest mileposts from ``sources`` to every milepost over the lattice (track or not)."""
    far = [_FAR] * MAP.size
    for s in sources:
        far[s] = 0
    todo = list(sources)
    while todo:
        nxt = []
        for m in todo:
            for n in (*MAP.inside[m], *MAP.adjacent[m]):
                if far[n] == _FAR:
                    far[n] = far[m] + 1
                    nxt.append(n)
        todo = nxt
    return far


def _component(state: State, seat: int, start: int) -> set[int]:
    """The mileposts the train can reach from ``start`` over own track and free zones."""
    seen, todo = {start}, [start]
    while todo:
        m = todo.pop()
        for n in (*MAP.inside[m], *MAP.adjacent[m]):
            if n not in seen and (n in MAP.inside[m]
                                  or state.track.get(edge_key(m, n)) == seat):
                seen.add(n)
                todo.append(n)
    return seen


def _own_mileposts(state: State, seat: int) -> set[int]:
    return {m for k, o in state.track.items() if o == seat for m in divmod(k, 4096)}


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


def _stretch(state: State, seat: int, path: list[int]) -> list[int] | None:
    """The first stretch of ``path`` not yet built, as a legal build path within the money and
    the rules: from its start when a build may start there, else (only then) from its far end
    backwards; None when neither end may start a build or its first section is out of reach."""
    start = 0
    while start + 1 < len(path) and (
            path[start + 1] in MAP.inside[path[start]]
            or state.track.get(edge_key(path[start], path[start + 1])) == seat):
        start += 1
    end = start
    while end + 1 < len(path) and path[end + 1] not in MAP.inside[path[end]] and (
            state.track.get(edge_key(path[end], path[end + 1])) is None):
        end += 1
    if end == start:
        return None
    stretch = path[start:end + 1]
    way = stretch
    if isinstance(start_problem(state, seat, stretch[0]), tuple):
        way = stretch[::-1]
        if isinstance(start_problem(state, seat, way[0]), tuple):
            return None
    steps = [way[0]]
    new: dict[int, int] = {}
    cost = 0
    for b in way[1:]:
        found = step_problem(state, seat, steps[-1], b, new, cost)
        if isinstance(found, tuple):
            break
        new[edge_key(steps[-1], b)] = seat
        cost += found
        steps.append(b)
    return steps if len(steps) >= 2 else None


def _route(prev: list[int], dist: list[int], goal: int) -> list[int]:
    path = [goal]
    while dist[path[-1]] > 0:
        path.append(prev[path[-1]])
    return path[::-1]


class GreedyBot:
    def __init__(self) -> None:
        self.plan: Plan | None = None

    # --- what to do now ------------------------------------------------------------------
    def choose(self, state: State, seat: int) -> cmd.Command:
        p = state.players[seat]
        if seat in state.pending:  # a lost load: keep the plan's load if it can
            keep = self.plan.load if self.plan is not None else None
            others = [x for x in p.loads if x != keep]
            return cmd.LoseLoad(others[0] if others else p.loads[0])
        if self.plan is None or p.cards[self.plan.slot] != self.plan.card:
            self.plan = self._replan(state, seat)
        plan = self.plan
        if p.turns >= BUILDING_TURNS and p.train is None:
            return cmd.PlaceTrain(self._placement(state, seat))
        if p.train is not None and not state.turn.built:
            if not state.turn.acted and self._upgrade_now(state, seat):
                return cmd.Upgrade("speed" if p.speed == 9 else "capacity")
            if not state.turn.acted:
                rescue = self._rescue(state, seat)
                if rescue is not None:
                    return rescue
                plan = self.plan
            run = self._run(state, seat, plan)
            if run is not None:
                return run
        build = self._build(state, seat, plan)
        return build if build is not None else cmd.EndTurn()

    def _rescue(self, state: State, seat: int) -> cmd.Command | None:
        """At the start of a turn, when the plan needs more track than the cash pays for: a
        loan that the plan's payoff repays twice over, else another plan, else new cards."""
        p = state.players[seat]
        plan = self.plan
        left = self._track_left(state, seat, plan) if plan is not None else _FAR
        cash = max(p.money, 0)  # a debt is repaid from the next payoff, not from the cash
        if left <= cash:
            return None
        if plan is not None and left < _FAR:
            loan = left - cash
            if (state.options.borrowing and p.debt == 0 and 0 < loan
                    <= BORROW_LIMIT - state.turn.borrowed and plan.payoff >= 2 * loan + left):
                return cmd.Borrow(loan)
        self.plan = self._replan(state, seat)
        if self.plan is not None and self._track_left(state, seat, self.plan) <= cash:
            return None
        return cmd.TradeIn()  # no demand its cash can build for: new cards

    def _track_left(self, state: State, seat: int, plan: Plan) -> int:
        """What the track the plan still needs costs (the cheapest, estimated)."""
        p = state.players[seat]
        network = self._network(state, seat)
        stops = [] if plan.load in p.loads else [plan.supply]
        total = 0
        for stop in [*stops, plan.city]:
            goal = set(MAP.cities[stop].mileposts)
            if goal & network:
                network = _component(state, seat, min(goal & network))
                continue
            dist, _ = _costs(state, seat, network)
            end = min(goal, key=lambda m: (dist[m], m))
            if dist[end] >= _FAR:
                return _FAR
            total += dist[end]
            network = _component(state, seat, end) | {end}
        return total

    def _run(self, state: State, seat: int, plan: Plan | None) -> cmd.Command | None:
        p = state.players[seat]
        at = p.train
        if at is None:
            raise ValueError(f"seat {seat} has no train on the map to run")
        here = MAP.city_at[at]
        if here is not None and struck(state, at) is not None:
            here = None  # a strike: no pick-up or delivery here
        if here is not None:
            best: tuple[int, int, int] | None = None
            for slot, card in enumerate(p.cards):
                if card < 0:
                    continue
                for i, d in enumerate(CARDS[card]):
                    if d.city == here and d.load in p.loads and (best is None or
                                                                  d.payoff > best[0]):
                        best = (d.payoff, slot, i)
            if best is not None:
                if plan is not None and best[1] == plan.slot:
                    self.plan = None
                return cmd.Deliver(best[1], best[2])
            need = plan is not None and plan.load not in p.loads
            if (plan is not None and need and here == plan.supply
                    and state.chips_out(plan.load) < LOADS[plan.load].chips):
                if len(p.loads) < p.capacity:
                    return cmd.PickUp(plan.load)
                return cmd.Dump(self._least_wanted(state, seat))
            room = p.capacity - len(p.loads) - (1 if need else 0)
            if room > 0:
                wanted = self._wanted(state, seat)
                for load in SUPPLIES[here]:
                    if (load in wanted and load not in p.loads
                            and state.chips_out(load) < LOADS[load].chips):
                        return cmd.PickUp(load)
        unwanted = [x for x in p.loads if x not in self._wanted(state, seat)]
        if unwanted:  # its card is gone: the place is worth more
            return cmd.Dump(unwanted[0])
        if plan is None:
            return None
        left = p.speed - state.turn.moved
        if left <= 0:
            return None
        stop = plan.city if plan.load in p.loads else plan.supply
        path = _own_path(state, seat, at, set(MAP.cities[stop].mileposts))
        path = _movable(state, seat, at, path or [])
        return cmd.Move(path) if path else None

    def _wanted(self, state: State, seat: int) -> set[str]:
        return {d.load for c in state.players[seat].cards if c >= 0 for d in CARDS[c]}

    def _least_wanted(self, state: State, seat: int) -> str:
        p = state.players[seat]
        pay: dict[str, int] = {}
        for c in p.cards:
            if c >= 0:
                for d in CARDS[c]:
                    pay[d.load] = max(pay.get(d.load, 0), d.payoff)
        keep = self.plan.load if self.plan is not None else None
        return min((x for x in p.loads if x != keep), key=lambda x: (pay.get(x, 0), x))

    def _upgrade_now(self, state: State, seat: int) -> bool:
        """Buy the speed upgrade, then the capacity one, once the cash spares it ($60M, then
        $120M, left after paying), at the start of a turn."""
        p = state.players[seat]
        if p.speed > 9 and p.capacity > 2:
            return False
        spare = p.money - p.debt - UPGRADE_COST
        return spare >= (60 if p.speed == 9 else 120) and state.turn.spent == 0

    def _placement(self, state: State, seat: int) -> str:
        """On own network: the plan's supply city when the network reaches it, else the city
        on the network nearest to it; with no track, the supply city."""
        own = _own_mileposts(state, seat)
        on_network = sorted({c for m in own if (c := MAP.city_at[m]) is not None})
        plan = self.plan
        if plan is None:
            return on_network[0] if on_network else MAP.majors[0]
        if not on_network or plan.supply in on_network:
            return plan.supply
        far = _hops(list(MAP.cities[plan.supply].mileposts))
        return min(on_network, key=lambda c: (far[MAP.cities[c].mileposts[0]], c))

    # --- choosing a demand -----------------------------------------------------------------
    def _network(self, state: State, seat: int) -> set[int]:
        """Where the route starts: the train's own network, or before it is placed, own track
        and every major city."""
        train = state.players[seat].train
        if train is not None:
            return _component(state, seat, train)
        return _own_mileposts(state, seat) | _MAJOR_MILEPOSTS

    def _replan(self, state: State, seat: int) -> Plan | None:
        p = state.players[seat]
        base = self._network(state, seat)
        from_network, _ = _costs(state, seat, base)
        start = [p.train] if p.train is not None else sorted(base)
        from_train = _hops(start)
        speed = p.speed
        best: tuple[float, Plan] | None = None
        for slot, card in enumerate(p.cards):
            if card < 0:
                continue
            for i, demand in enumerate(CARDS[card]):
                city = list(MAP.cities[demand.city].mileposts)
                carried = demand.load in p.loads
                if not carried and state.chips_out(demand.load) >= LOADS[demand.load].chips:
                    continue
                dist, _ = _costs(state, seat, city)
                hops = _hops(city)
                options = [(demand.load, "")] if carried else [
                    (demand.load, s) for s in LOADS[demand.load].supply]
                for load, supply in options:
                    if carried:
                        build = min(dist[m] for m in base)
                        travel = min(hops[m] for m in start)
                    else:
                        s = MAP.cities[supply].mileposts[0]
                        build = from_network[s] + dist[s]
                        travel = from_train[s] + hops[s]
                    if build >= _FAR:
                        continue
                    turns = 1 + travel / speed + build / SPEND_LIMIT
                    score = (demand.payoff - build) / turns
                    if build > max(p.money, 0):
                        score -= 1000  # out of reach of the cash: only if nothing else is
                    plan = Plan(slot, i, card, load, supply or demand.city, demand.city, build,
                                demand.payoff)
                    if best is None or score > best[0]:
                        best = (score, plan)
        return None if best is None else best[1]

    # --- building --------------------------------------------------------------------------
    def _build(self, state: State, seat: int, plan: Plan | None) -> cmd.Command | None:
        p = state.players[seat]
        if state.turn.spent >= SPEND_LIMIT:
            return None
        o = state.options
        if (p.money - p.debt >= o.money_to_win
                and connected_majors(state, seat) >= o.majors_to_win):
            return None  # the turn's end wins: spend nothing
        route = self._route_build(state, seat, plan) if plan is not None else None
        majors = self._majors_build(state, seat, route is not None)
        return majors if majors is not None else route

    def _route_build(self, state: State, seat: int, plan: Plan) -> cmd.Command | None:
        """Track the plan still needs: from the train's network to the supply city (unless the
        load is on the train), then to the demand city."""
        p = state.players[seat]
        network = self._network(state, seat)
        stops = [] if plan.load in p.loads else [plan.supply]
        for stop in [*stops, plan.city]:
            goal = set(MAP.cities[stop].mileposts)
            if goal & network:
                # on from the stop: the piece of own track (or free zone) that reaches it
                network = _component(state, seat, min(goal & network))
                continue
            dist, prev = _costs(state, seat, network)
            end = min(goal, key=lambda m: (dist[m], m))
            if dist[end] >= _FAR:
                return None
            steps = _stretch(state, seat, _route(prev, dist, end))
            if steps is None and p.train is not None and network == {p.train} and isinstance(
                    start_problem(state, seat, p.train), tuple):
                # the train stands where no build may start (its track was washed away): join
                # it to own track elsewhere
                others = (_own_mileposts(state, seat) | _MAJOR_MILEPOSTS) - network
                dist, prev = _costs(state, seat, others)
                end = min(network, key=lambda m: (dist[m], m))
                if dist[end] < _FAR:
                    steps = _stretch(state, seat, _route(prev, dist, end))
            return cmd.Build(steps) if steps is not None else None
        return None

    def _majors_build(self, state: State, seat: int, route_needed: bool) -> cmd.Command | None:
        """Track joining the main network to the nearest major city it lacks, once the cash
        spares it (keeping a reserve while the plan's route still needs track)."""
        p, o = state.players[seat], state.options
        worth = p.money - p.debt
        if p.train is None or worth < o.money_to_win * 0.5 + (_RESERVE if route_needed else 0):
            return None
        if connected_majors(state, seat) >= o.majors_to_win:
            return None
        main = self._main_network(state, seat)
        if not main:
            return None
        lacking = [m for name in MAP.majors if not set(MAP.cities[name].mileposts) & main
                   for m in MAP.cities[name].mileposts]
        dist, prev = _costs(state, seat, main)
        end = min(lacking, key=lambda m: (dist[m], m))
        if dist[end] >= _FAR:
            return None
        steps = _stretch(state, seat, _route(prev, dist, end))
        return cmd.Build(steps) if steps is not None else None

    def _main_network(self, state: State, seat: int) -> set[int]:
        """The piece of own track (with the free zones it reaches) joining the most majors;
        ties: the train's."""
        own = _own_mileposts(state, seat)
        train = state.players[seat].train
        pieces: list[set[int]] = []
        seen: set[int] = set()
        for m in sorted(own):
            if m not in seen:
                piece = _component(state, seat, m)
                seen |= piece
                pieces.append(piece)
        if not pieces:
            return set()

        def majors(piece: set[int]) -> tuple[int, bool]:
            count = sum(1 for name in MAP.majors if set(MAP.cities[name].mileposts) & piece)
            return count, train in piece

        return max(pieces, key=majors)
