"""``start`` and ``decide``: the set-up and every command, checked against the rules."""

from __future__ import annotations

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
from .state import Cards, Score, State

MIN_SEATS, MAX_SEATS = 1, 5


# --- drawing cards -----------------------------------------------------------------------------
class Dealer:
    """Draws cards at random from a working copy of the deck, recycling the discard pile."""

    def __init__(self, rng: Rng, deck: Cards, discard: Cards) -> None:
        self.rng = rng
        self.deck = deck.copy()
        self.discard = discard.copy()

    def draw(self, n: int, events: list[ev.E]) -> list[Vehicle]:
        out: list[Vehicle] = []
        for _ in range(n):
            if self.deck.total() == 0 and self.discard.total() > 0:
                events.append(ev.DiscardRecycled())
                for kind in VEHICLES:
                    self.deck.add(kind, self.discard.get(kind))
                self.discard = Cards()
            if self.deck.total() == 0:
                break
            pick = self.rng.below(self.deck.total())
            for kind in VEHICLES:
                if pick < self.deck.get(kind):
                    out.append(kind)
                    self.deck.add(kind, -1)
                    break
                pick -= self.deck.get(kind)
        return out

    def to_hand(self, seat: int, n: int, events: list[ev.E]) -> None:
        cards = self.draw(n, events)
        if cards:
            events.append(ev.CardsDrawn(seat, cards))

    def to_market(self, n: int, events: list[ev.E]) -> None:
        cards = self.draw(n, events)
        if cards:
            events.append(ev.MarketFilled(cards))


# --- set-up ----------------------------------------------------------------------------------
def start(options: Options, seats: int, rng: Rng) -> list[ev.E]:
    if not MIN_SEATS <= seats <= MAX_SEATS:
        raise RuleError("rule.seats", f"Cargo Empire is for {MIN_SEATS} to {MAX_SEATS} players")
    cards = rng.shuffled(NAMES)
    public_n, private_n = COMPONENTS.city_cards.public, COMPONENTS.city_cards.private_per_player
    order = [*range(seats), *reversed(range(seats))]
    events: list[ev.E] = [
        ev.GameStarted(
            seats, options, cards[:public_n], posts_per_player(seats), turns_per_round(seats), order
        )
    ]
    for seat in range(seats):
        at = public_n + seat * private_n
        events.append(ev.CitiesDealt(seat, sorted(cards[at : at + private_n])))
    d = COMPONENTS.deck
    dealer = Dealer(rng, Cards(d.truck, d.train, d.ship), Cards())
    for seat in range(seats):
        dealer.to_hand(seat, COMPONENTS.starting_hand, events)
    dealer.to_market(COMPONENTS.market_size, events)
    if options.starting_posts == "random":
        taken: set[str] = set()
        for seat in order:
            city = rng.choice([n for n in NAMES if n not in taken])
            taken.add(city)
            events.append(ev.PostPlaced(seat, city))
        events.append(ev.PlayBegan())
    return events


def start_from_position(position: Position, rng: Rng) -> list[ev.E]:
    validate(position)  # raises position.invalid; folding the event checks nothing
    return [ev.PositionLoaded(position)]


# --- decide ----------------------------------------------------------------------------------
def decide(state: State, seat: int, command: cmd.Command, rng: Rng) -> list[ev.E]:
    if not 0 <= seat < state.seats:
        raise RuleError("rule.no_such_seat", f"this game has seats 0 to {state.seats - 1}")
    if state.phase == "finished":
        raise RuleError("rule.game_over", "the game is over")
    if state.current() != seat:
        raise RuleError("rule.not_your_turn", f"it is seat {state.current()}'s turn")
    if isinstance(command, cmd.PlacePost):
        if state.phase != "setup":
            raise RuleError("rule.wrong_phase", "starting posts are placed during set-up only")
        return _place_post(state, seat, command)
    if state.phase != "play":
        raise RuleError("rule.wrong_phase", "place your starting posts first")
    if isinstance(command, cmd.Deliver):
        events = delivery_events(state, seat, command)
        _after_delivery(state, seat, events, rng)
    else:
        events = _gather(state, seat, command, rng)
        if state.players[seat].supply > 0:
            # Every turn uses one post: a turn without a delivery retires one (see the rules doc).
            events.append(ev.PostRetired(seat))
    return _end_turn(state, seat, events)


def _city(text: str) -> CityName:
    try:
        return parse_city(text)
    except ValueError as e:
        raise RuleError("rule.no_such_city", str(e)) from None


def _place_post(state: State, seat: int, c: cmd.PlacePost) -> list[ev.E]:
    _city(c.city)
    if state.posts_in(c.city):
        raise RuleError("rule.city_taken", f"{c.city} already holds a starting post")
    events: list[ev.E] = [ev.PostPlaced(seat, c.city)]
    if state.placed + 1 == len(state.order):
        events.append(ev.PlayBegan())
    return events


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


def _after_delivery(state: State, seat: int, events: list[ev.E], rng: Rng) -> None:
    """The player draws a card from the deck after delivering (the spent cards are discarded)."""
    after = state
    for e in events:
        after = evolve(after, e)
    Dealer(rng, after.deck, after.discard).to_hand(seat, COMPONENTS.draw_after_delivery, events)


def _gather(state: State, seat: int, c: cmd.Gather, rng: Rng) -> list[ev.E]:
    events: list[ev.E] = []
    dealer = Dealer(rng, state.deck, state.discard)
    if c.market is not None:
        if not 0 <= c.market < len(state.market):
            raise RuleError("rule.no_such_market_card", f"the market has no slot {c.market}")
        events.append(ev.MarketTaken(seat, c.market, state.market[c.market]))
        dealer.to_market(1, events)
        dealer.to_hand(seat, 1, events)
    else:
        dealer.to_hand(seat, 2, events)
    return events


def _end_turn(state: State, seat: int, events: list[ev.E]) -> list[ev.E]:
    events.append(ev.TurnEnded(seat))
    after = state
    for e in events:
        after = evolve(after, e)
    round_over = after.turn >= after.turns_per_round * after.seats
    last_turn = after.round == COMPONENTS.rounds and round_over
    if last_turn or all(p.supply == 0 for p in after.players):
        events.append(final_scoring(after))
    return events


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
