"""``start`` and ``decide``: the set-up and every command, checked against the rules."""

from __future__ import annotations

from domain import kernel
from domain.kernel import Rng, RuleError

from . import commands as cmd
from . import events as ev
from .board import (
    BEST,
    CITIES,
    COMPONENTS,
    LAND,
    NAMES,
    VEHICLES,
    CityName,
    Vehicle,
    leg_steps,
    overpaid,
    parse_city,
    posts_per_player,
    turns_per_round,
)
from .evolve import evolve
from .options import Options
from .position import Position, validate
from .state import Score, State

MIN_SEATS, MAX_SEATS = 1, 5


#: a decision of Cargo Empire in progress (:class:`~domain.kernel.Run`)
Run = kernel.Run[State, ev.E]


# --- drawing cards -----------------------------------------------------------------------------
def draw(run: Run, rng: Rng, n: int) -> list[Vehicle]:
    """``n`` cards (fewer when the deck and the discard pile run out) drawn at random from the
    deck of ``run``'s state, less the cards drawn so far; an empty deck first takes the discard
    pile back (``discard_recycled``: ``evolve`` moves the cards, and the draw sees them there).
    The caller emits the cards drawn."""
    out: list[Vehicle] = []
    for _ in range(n):
        if run.state.deck.total() == len(out) and run.state.discard.total() > 0:
            run.emit(ev.DiscardRecycled())
        deck = run.state.deck
        left = {kind: deck.get(kind) - out.count(kind) for kind in VEHICLES}
        total = sum(left.values())
        if total == 0:
            break
        pick = rng.below(total)
        for kind in VEHICLES:
            if pick < left[kind]:
                out.append(kind)
                break
            pick -= left[kind]
    return out


def to_hand(run: Run, rng: Rng, seat: int, n: int) -> None:
    cards = draw(run, rng, n)
    if cards:
        run.emit(ev.CardsDrawn(seat, cards))


def to_market(run: Run, rng: Rng, n: int) -> None:
    cards = draw(run, rng, n)
    if cards:
        run.emit(ev.MarketFilled(cards))


# --- set-up ----------------------------------------------------------------------------------
def start(options: Options, seats: int, rng: Rng) -> list[ev.E]:
    if not MIN_SEATS <= seats <= MAX_SEATS:
        raise RuleError("rule.seats", f"Cargo Empire is for {MIN_SEATS} to {MAX_SEATS} players")
    cards = rng.shuffled(NAMES)
    public_n, private_n = COMPONENTS.city_cards.public, COMPONENTS.city_cards.private_per_player
    order = [*range(seats), *reversed(range(seats))]
    run = Run.opening(
        evolve,
        ev.GameStarted(
            seats, options, cards[:public_n], posts_per_player(seats), turns_per_round(seats), order
        ),
    )
    for seat in range(seats):
        at = public_n + seat * private_n
        run.emit(ev.CitiesDealt(seat, sorted(cards[at : at + private_n])))
    for seat in range(seats):
        to_hand(run, rng, seat, COMPONENTS.starting_hand)
    to_market(run, rng, COMPONENTS.market_size)
    if options.starting_posts == "random":
        taken: set[str] = set()
        for seat in order:
            city = rng.choice([n for n in NAMES if n not in taken])
            taken.add(city)
            run.emit(ev.PostPlaced(seat, city))
        run.emit(ev.PlayBegan())
    return run.events


def start_from_position(position: Position, rng: Rng) -> list[ev.E]:
    validate(position)  # raises position.invalid; folding the event checks nothing
    return [ev.PositionLoaded(position)]


# --- decide ----------------------------------------------------------------------------------
def decide(state: State, seat: int, command: cmd.Command, rng: Rng) -> list[ev.E]:
    """``command`` by ``seat``, the seat to act (the kernel checked that)."""
    run = Run(evolve, state)
    if isinstance(command, cmd.PlacePost):
        if state.phase != "setup":
            raise RuleError("rule.wrong_phase", "starting posts are placed during set-up only")
        _place_post(run, seat, command)
        return run.events
    if state.phase != "play":
        raise RuleError("rule.wrong_phase", "place your starting posts first")
    if isinstance(command, cmd.Deliver):
        for event in delivery_events(state, seat, command):
            run.emit(event)
        # the player draws after delivering (the cards spent are on the discard pile by now)
        to_hand(run, rng, seat, COMPONENTS.draw_after_delivery)
    else:
        _gather(run, seat, command, rng)
        if run.state.players[seat].supply > 0:
            # Every turn uses one post: a turn without a delivery retires one (see the rules doc).
            run.emit(ev.PostRetired(seat))
    _end_turn(run, seat)
    return run.events


def _city(text: str) -> CityName:
    try:
        return parse_city(text)
    except ValueError as e:
        raise RuleError("rule.no_such_city", str(e)) from None


def _place_post(run: Run, seat: int, c: cmd.PlacePost) -> None:
    _city(c.city)
    if run.state.posts_in(c.city):
        raise RuleError("rule.city_taken", f"{c.city} already holds a starting post")
    run.emit(ev.PostPlaced(seat, c.city))
    if run.state.placed == len(run.state.order):
        run.emit(ev.PlayBegan())


def bonus_reasons(state: State, seat: int, origin: str, destination: str, cargo: str) -> list[str]:
    """Why a delivery earns bonus moves (one per reason)."""
    favoured = set(state.public) | set(state.players[seat].private)
    reasons = []
    if origin in favoured:
        reasons.append("origin")
    if destination in favoured:
        reasons.append("destination")
    dest = state.cities[destination]
    if dest.cubes == 0 and all(s is not None for c, s in dest.demand.items() if c != cargo):
        reasons.append("perfect_upgrade")
    return reasons


def delivery_events(state: State, seat: int, c: cmd.Deliver) -> list[ev.E]:
    """Check a delivery against every rule; the ``delivered`` (and upgrade) events if legal."""
    player = state.players[seat]
    if player.supply == 0:
        raise RuleError("rule.no_posts_left", "you have no trading post left to place")
    for name in (c.origin, c.destination):
        _city(name)
    if not state.has_post(seat, c.origin):
        raise RuleError("rule.not_your_post", f"you have no trading post in {c.origin}")
    origin = state.cities[c.origin]
    tile = CITIES[c.origin].lv1 if origin.level == 1 else CITIES[c.origin].lv2
    if origin.level == 3 or origin.cubes == 0 or tile.cargo != c.cargo:
        raise RuleError("rule.no_such_cube", f"{c.origin} has no {c.cargo} cargo cube")
    if c.origin == c.destination:
        raise RuleError("rule.same_city", "a delivery goes to another city")
    dest = state.cities[c.destination]
    if c.cargo not in dest.demand or dest.demand[c.cargo] is not None:
        raise RuleError(
            "rule.no_free_demand_space", f"{c.destination} has no free {c.cargo} demand space"
        )
    _check_route(state, seat, c)
    reasons = bonus_reasons(state, seat, c.origin, c.destination, c.cargo)
    cards = [leg.card for leg in c.route]
    moved = [v for v in VEHICLES if v in cards]
    given = {v: getattr(c.bonus, v) for v in VEHICLES}
    if any(n < 0 for n in given.values()):
        raise RuleError("rule.bad_bonus", "bonus moves are never negative")
    for v, n in given.items():
        if n and v not in moved:
            raise RuleError(
                "rule.bonus_vehicle_not_moved", f"no {v} card was used, so no bonus for the {v}"
            )
    if sum(given.values()) != len(reasons):
        raise RuleError(
            "rule.bonus_total", f"split exactly {len(reasons)} bonus moves ({', '.join(reasons)})"
        )
    advance = {v: COMPONENTS.development.of(v).advance * cards.count(v) for v in VEHICLES}
    moves = cmd.Moves(*(advance[v] + given[v] for v in VEHICLES))
    events: list[ev.E] = [
        ev.Delivered(
            seat, c.origin, c.destination, c.cargo, list(c.route), moves, c.bonus, reasons
        )
    ]
    if all(s is not None for col, s in dest.demand.items() if col != c.cargo):
        moved_posts = [seat if col == c.cargo else s for col, s in dest.demand.items()]
        events.append(
            ev.CityUpgraded(
                c.destination,
                dest.level + 1,
                [s for s in moved_posts if s is not None],
                dest.cubes,
                dest.cubes == 0,
            )
        )
    return events


def _check_route(state: State, seat: int, c: cmd.Deliver) -> None:
    if not c.route:
        raise RuleError("rule.route_incomplete", "pay at least one Transport card")
    at = c.origin
    steps: list[int] = []
    for i, leg in enumerate(c.route):
        if leg.to not in CITIES:
            raise RuleError("rule.no_such_city", f"{leg.to!r} is not a city of the map")
        n = leg_steps(leg.card, at, leg.to)
        if n is None:
            why = {
                "truck": "a Truck moves to an adjacent city",
                "train": "a Train moves to a city 1 or 2 steps away",
                "ship": "a Ship moves between two ports",
            }.get(leg.card, "unknown card")
            raise RuleError(
                "rule.wrong_card_for_step", f"leg {i + 1}, {at} to {leg.to}: {why}", leg=i
            )
        steps.append(n)
        at = leg.to
    if at != c.destination:
        raise RuleError("rule.route_incomplete", f"the route ends in {at}, not {c.destination}")
    hand = state.players[seat].hand
    cards = [leg.card for leg in c.route]
    for kind in VEHICLES:
        if cards.count(kind) > hand.get(kind):
            raise RuleError("rule.cards_not_in_hand", f"you hold {hand.get(kind)} {kind} cards")
    length, best, land = sum(steps), BEST[c.origin][c.destination], LAND[c.origin][c.destination]
    land_only = "ship" not in cards
    if length != best:
        if land_only and land > best:
            if length != land:
                raise RuleError(
                    "rule.sea_exception_not_met",
                    f"a sea route takes {best} steps; a land route instead must be a shortest"
                    f" one ({land} steps), not {length}",
                )
        else:
            raise RuleError(
                "rule.route_not_shortest",
                f"the shortest route from {c.origin} to {c.destination} takes {best} steps,"
                f" not {length}",
            )
    if overpaid(cards, steps):
        raise RuleError(
            "rule.overpaid", "fewer of these cards would pay for this route (a Train used for a"
            " single step where Trucks or another Train could cover the steps, anywhere on the"
            " route)"
        )


def _gather(run: Run, seat: int, c: cmd.Gather, rng: Rng) -> None:
    market = run.state.market
    if c.market is not None:
        if not 0 <= c.market < len(market):
            raise RuleError("rule.no_such_market_card", f"the market has no slot {c.market}")
        run.emit(ev.MarketTaken(seat, c.market, market[c.market]))
        to_market(run, rng, 1)
        to_hand(run, rng, seat, 1)
    else:
        to_hand(run, rng, seat, 2)


def _end_turn(run: Run, seat: int) -> None:
    run.emit(ev.TurnEnded(seat))
    after = run.state
    round_over = after.turn >= after.turns_per_round * after.seats
    last_turn = after.round == COMPONENTS.rounds and round_over
    if last_turn or all(p.supply == 0 for p in after.players):
        run.emit(final_scoring(after))


# --- the end ---------------------------------------------------------------------------------
def score(state: State, seat: int) -> Score:
    p = state.players[seat]
    vehicles: dict[str, int] = {v: COMPONENTS.development.of(v).vp[p.markers[v]] for v in VEHICLES}
    with_posts = [n for n in NAMES if state.has_post(seat, n)]
    lv3_cities = [n for n in with_posts if state.cities[n].level == 3]
    lv3 = COMPONENTS.lv3_post_vp * sum(state.posts_in(n).count(seat) for n in lv3_cities)
    private = COMPONENTS.city_cards.private_vp * sum(1 for n in p.private if n in with_posts)
    goals: dict[str, int] = {}
    for g in COMPONENTS.goals:
        value = {
            "cities_with_posts": len(with_posts),
            "lv3_cities_with_posts": len(lv3_cities),
            "colours_delivered": len(p.delivered),
            "every_marker_at_least": min(p.markers.values()),
            "ship_marker_at_least": p.markers["ship"],
        }[g.kind]
        if value >= g.threshold:
            goals[g.id] = g.vp
    total = sum(vehicles.values()) + lv3 + private + sum(goals.values())
    return Score(vehicles, lv3, private, goals, total)


def final_scoring(state: State) -> ev.GameEnded:
    scores = [score(state, s) for s in range(state.seats)]
    if state.seats == 1:
        winners = [0] if scores[0].total >= COMPONENTS.solo_target else []
    else:
        key = [tiebreak(state, scores, s) for s in range(state.seats)]
        best = max(key)
        winners = [s for s in range(state.seats) if key[s] == best]
    return ev.GameEnded(scores, winners, [list(p.private) for p in state.players])


def tiebreak(state: State, scores: list[Score], seat: int) -> tuple[int, int, int]:
    """Most VP; then most posts on the map; then most Transport cards in hand."""
    on_map = sum(state.posts_in(n).count(seat) for n in NAMES)
    return (scores[seat].total, on_map, state.players[seat].hand.total())
