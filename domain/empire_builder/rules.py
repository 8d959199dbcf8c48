"""``start`` and ``decide``: the set-up and every command, checked against the manual's rules.

Every rejection is a RuleError with a stable code; a rejected step of a ``build`` or ``move``
path names the step (``details["step"]``, counted from 1) and the rule."""

from __future__ import annotations

import itertools

import msgspec

from domain import kernel
from domain.kernel import CommandError, Rng, RuleError

from . import commands as cmd
from . import events as ev
from .board import (
    BORROW_LIMIT,
    CARDS,
    CITY_PLAYERS,
    CITY_SECTIONS,
    FACES,
    FEE,
    LOADS,
    MAP,
    MAP_HASH,
    SPEND_LIMIT,
    START_MONEY,
    SUPPLIES,
    UPGRADE_COST,
    edge_ends,
    edge_key,
)
from .cards import EventCard, event_card, tax
from .evolve import evolve
from .options import Options
from .position import Position, validate
from .state import BUILDING_TURNS, State

MIN_SEATS, MAX_SEATS = 2, 6
MAJOR_STARTS = 2  # new track out of major-city mileposts per turn


#: a decision of Empire Builder in progress (:class:`~domain.kernel.Run`)
Run = kernel.Run[State, ev.E]


# --- drawing demand cards --------------------------------------------------------------------
def draw(run: Run, rng: Rng, seat: int, slot: int, opening: bool = False) -> None:
    """``seat`` draws a card into ``slot`` at random from the deck of ``run``'s state; an empty
    deck first takes the discards back (``discard_reshuffled``: ``evolve`` moves the cards, and
    the draw sees them there). An event card drawn is resolved at once (``resolve``) and the
    player draws again; the opening deal (``opening``) draws demand cards only (event cards wait
    in the deck)."""
    while True:
        if not run.state.deck and run.state.discard:
            run.emit(ev.DiscardReshuffled())
        deck = run.state.deck
        if not deck:
            return
        if opening:
            deck = [c for c in deck if event_card(c) is None]
        card = deck[rng.below(len(deck))]
        found = event_card(card)
        if found is None:
            run.emit(ev.CardDrawn(seat, slot, card))
            return
        run.emit(resolve(run.state, seat, found))


def resolve(state: State, seat: int, card: EventCard) -> ev.EventCardDrawn:
    """What event card ``card`` drawn by ``seat`` does to ``state`` (see ``cards.py``)."""
    base = ev.EventCardDrawn(seat, card.id, card.kind, card.name)
    inside = [s for s, p in enumerate(state.players) if p.train in card.area]
    if card.kind == "flood":
        erased = [[*edge_ends(k), o] for k, o in sorted(state.track.items()) if k in card.edges]
        return msgspec.structs.replace(base, erased=erased)
    if card.kind in ("derailment", "lost_load"):
        # each loaded train inside loses one load, its owner's choice; loads all alike need none
        loaded = [s for s in inside if state.players[s].loads]
        choosers = [s for s in loaded if len(set(state.players[s].loads)) > 1]
        lost = [ev.Lost(s, state.players[s].loads[0]) for s in loaded if s not in choosers]
        if card.kind == "lost_load":
            return msgspec.structs.replace(base, choosers=choosers, lost=lost)
        gone = {x.seat: x.load for x in lost}
        derailed = [ev.Lost(s, gone.get(s)) for s in inside]
        return msgspec.structs.replace(base, derailed=derailed, choosers=choosers)
    if card.kind == "tax":
        taxes = [ev.Paid(s, tax(p.money)) for s, p in enumerate(state.players) if tax(p.money)]
        return msgspec.structs.replace(base, taxes=taxes)
    return base


def in_force(state: State, kind: str) -> list[tuple[EventCard, int]]:
    """The event cards of ``kind`` in force, with their drawers."""
    out = []
    for effect in state.effects:
        card = event_card(effect.card)
        if card is not None and card.kind == kind:
            out.append((card, effect.drawer))
    return out


# --- set-up ----------------------------------------------------------------------------------
def check_options(options: Options) -> None:
    if not 1 <= options.majors_to_win <= len(MAP.majors):
        raise CommandError("options.invalid", f"majors_to_win is 1 to {len(MAP.majors)}")
    if options.money_to_win < 1 or options.turn_limit < 0:
        raise CommandError("options.invalid", "money_to_win is positive, turn_limit not negative")


def start(options: Options, seats: int, rng: Rng) -> list[ev.E]:
    if not MIN_SEATS <= seats <= MAX_SEATS:
        raise RuleError("rule.seats", f"Empire Builder is for {MIN_SEATS} to {MAX_SEATS} players")
    check_options(options)
    first = rng.below(seats)
    order = [(first + i) % seats for i in range(seats)]
    run = Run.opening(evolve, ev.GameStarted(seats, options, order, START_MONEY, MAP_HASH))
    for seat in order:
        for slot in range(3):
            draw(run, rng, seat, slot, opening=True)
    return run.events


def start_from_position(position: Position, rng: Rng) -> list[ev.E]:
    check_options(position.options)
    event = ev.PositionLoaded(position)
    validate(position)  # raises position.invalid; folding the event checks nothing
    return [event]


# --- decide ----------------------------------------------------------------------------------
def out_of_turn(state: State, seat: int, command: cmd.Command) -> bool:
    """Any seat may choose its face (cosmetic) at any time, and a seat not to act that names a
    lost load is told it has none (``rule.no_lost_load``)."""
    return isinstance(command, (cmd.ChooseFace, cmd.LoseLoad))


def decide(state: State, seat: int, command: cmd.Command, rng: Rng) -> list[ev.E]:
    """``command`` by ``seat`` (the kernel has checked the seat is the game's, the game is not
    over and the seat is to act, or sends a command of :func:`out_of_turn`)."""
    if isinstance(command, cmd.ChooseFace):
        if command.face not in FACES:
            raise RuleError("rule.no_such_face", f"faces are {', '.join(FACES)}")
        return [ev.FaceChosen(seat, command.face)]
    if seat in state.pending or isinstance(command, cmd.LoseLoad):
        return [_lose_load(state, seat, command)]
    p = state.players[seat]
    if isinstance(command, cmd.PlaceTrain):
        return _place_train(state, seat, command)
    if p.turns >= BUILDING_TURNS and p.train is None:
        raise RuleError("rule.place_train_first", "choose the city where your train appears")
    if isinstance(command, cmd.Borrow):
        return [_borrow(state, seat, command.amount)]
    if isinstance(command, cmd.Build):
        built = build_event(state, seat, command.path)
        if command.cost is not None and command.cost != built.cost:
            raise RuleError("rule.cost_mismatch",
                            f"this path costs ${built.cost}M, not ${command.cost}M")
        return [built]
    if isinstance(command, cmd.EndTurn):
        run = Run(evolve, state)
        end_turn(run, seat)
        return run.events
    if isinstance(command, cmd.Upgrade):
        return [_upgrade(state, seat, command)]
    if isinstance(command, cmd.TradeIn):
        return _trade_in(state, seat, rng)
    if p.turns < BUILDING_TURNS:
        raise RuleError(
            "rule.building_turns", f"your first {BUILDING_TURNS} turns are for building only"
        )
    if state.turn.built:
        raise RuleError("rule.after_building", "building has ended your train's turn")
    if isinstance(command, cmd.Move):
        return [move_event(state, seat, command.path)]
    if isinstance(command, cmd.AutoMove):
        return [auto_move_event(state, seat, command.toward)]
    if isinstance(command, cmd.PickUp):
        return [_pick_up(state, seat, command.load)]
    if isinstance(command, cmd.Deliver):
        return _deliver(state, seat, command, rng)
    return [_dump(state, seat, command.load)]


def _place_train(state: State, seat: int, c: cmd.PlaceTrain) -> list[ev.E]:
    p = state.players[seat]
    if p.turns < BUILDING_TURNS:
        raise RuleError(
            "rule.building_turns",
            f"the train comes after {BUILDING_TURNS} turns of building ({p.turns} done)",
        )
    if p.train is not None:
        raise RuleError("rule.train_placed", "your train is already on the map")
    city = MAP.cities.get(c.city)
    if city is None:
        raise RuleError("rule.no_such_city", f"{c.city!r} is not a city of the map")
    return [ev.TrainPlaced(seat, city.name, city.mileposts[0])]


def _lose_load(state: State, seat: int, command: cmd.Command) -> ev.E:
    if seat not in state.pending:
        raise RuleError("rule.no_lost_load", "you have no lost load to choose")
    if not isinstance(command, cmd.LoseLoad):
        raise RuleError("rule.choose_lost_load", "first choose the load your train loses")
    if command.load not in state.players[seat].loads:
        raise RuleError("rule.load_not_carried", f"your train carries no {command.load}")
    return ev.LoadLost(seat, command.load)


def _borrow(state: State, seat: int, amount: int) -> ev.E:
    if not state.options.borrowing:
        raise RuleError("rule.no_borrowing", "the terms of this game do not allow borrowing")
    left = BORROW_LIMIT - state.turn.borrowed
    if not 1 <= amount <= left:
        raise RuleError("rule.borrow_limit",
                        f"borrow $1M to ${left}M (at most ${BORROW_LIMIT}M a turn)")
    return ev.Borrowed(seat, amount, 2 * amount)


def _upgrade(state: State, seat: int, c: cmd.Upgrade) -> ev.E:
    p = state.players[seat]
    if state.turn.acted:
        raise RuleError("rule.not_start_of_turn", "a train is upgraded at the start of a turn")
    if (p.speed if c.kind == "speed" else p.capacity) > (9 if c.kind == "speed" else 2):
        raise RuleError("rule.already_upgraded", f"your train already has the {c.kind} upgrade")
    if state.turn.spent + UPGRADE_COST > SPEND_LIMIT:
        raise RuleError("rule.turn_limit", f"at most ${SPEND_LIMIT}M is spent in a turn")
    if p.money < UPGRADE_COST:
        raise RuleError("rule.no_money", f"an upgrade costs ${UPGRADE_COST}M; you have"
                        f" ${p.money}M")
    return ev.Upgraded(seat, c.kind, UPGRADE_COST)


def _trade_in(state: State, seat: int, rng: Rng) -> list[ev.E]:
    if state.turn.acted:
        raise RuleError("rule.not_start_of_turn", "cards are traded in instead of a turn")
    run = Run(evolve, state)
    run.emit(ev.TradedIn(seat, [c for c in state.players[seat].cards if c >= 0]))
    for slot in range(3):
        draw(run, rng, seat, slot)
    end_turn(run, seat)
    return run.events


# --- building --------------------------------------------------------------------------------
def touches_own(state: State, seat: int, m: int) -> bool:
    return any(state.track.get(edge_key(m, n)) == seat for n in MAP.adjacent[m])


def continues_own(state: State, seat: int, m: int) -> bool:
    """Whether building from ``m`` continues ``seat``'s network: own track touches ``m``, or
    ``m`` is a major city's milepost and own track touches any milepost of that city (its free
    zone joins them)."""
    if touches_own(state, seat, m):
        return True
    name = MAP.city_at[m]
    if name is None or not MAP.is_major(m):
        return False
    return any(touches_own(state, seat, x) for x in MAP.cities[name].mileposts)


def step_problem(
    state: State, seat: int, a: int, b: int, new: dict[int, int], cost: int
) -> tuple[str, str] | int:
    """The cost of building a→b after the sections ``new`` (edge key → seat) costing ``cost``
    this command, or (code, reason) when the rules forbid the step."""
    if not 0 <= b < MAP.size:
        return "rule.no_such_milepost", f"{b} is not a milepost of the map"
    if b in MAP.inside[a]:
        return "rule.major_interior", "nobody builds inside a major city"
    if b not in MAP.adjacent[a]:
        return "rule.not_adjacent", f"{a} and {b} are not neighbouring mileposts"
    key = edge_key(a, b)
    if key in state.track or key in new:
        return "rule.track_exists", f"only one track may join {a} and {b}"
    if state.effects:
        blocked = _blocked(state, seat, a, b, key)
        if blocked is not None:
            return blocked
    for c in (a, b):
        name = MAP.city_at[c]
        if name is None or MAP.cities[name].size == "major":
            continue
        owners: set[int] = set()
        own = 0
        for n in MAP.adjacent[c]:
            k = edge_key(c, n)
            owner = new.get(k, state.track.get(k))
            if owner is not None:
                owners.add(owner)
                own += owner == seat
        size = MAP.cities[name].size
        if seat not in owners and len(owners) >= CITY_PLAYERS[size]:
            return "rule.city_full", f"{CITY_PLAYERS[size]} players have built into {name}"
        if own >= CITY_SECTIONS:
            return ("rule.city_sections",
                    f"you have built {CITY_SECTIONS} sections into {name} already")
    price = MAP.entry_cost(a, b)
    if state.turn.spent + cost + price > SPEND_LIMIT:
        return ("rule.turn_limit",
                f"this section costs ${price}M; ${SPEND_LIMIT - state.turn.spent - cost}M of the"
                f" ${SPEND_LIMIT}M a turn is left")
    if state.players[seat].money < cost + price:
        left = state.players[seat].money - cost
        return "rule.no_money", f"this section costs ${price}M; you have ${left}M"
    return price


def _blocked(state: State, seat: int, a: int, b: int, key: int) -> tuple[str, str] | None:
    """Why event cards in force forbid building a→b, if they do."""
    for card, _ in in_force(state, "flood"):
        if key in card.edges:
            return "rule.flooded", f"{card.name}: nobody builds across the {card.river} yet"
    for card, _ in in_force(state, "snow"):
        if a in card.area or b in card.area:
            return "rule.snow", f"{card.name}: nobody builds in the area"
    for card, drawer in in_force(state, "rail_strike"):
        if drawer == seat:
            return "rule.strike", f"{card.name}: you build no track"
    return None


def start_problem(state: State, seat: int, m: int) -> tuple[str, str] | bool:
    """Whether building from ``m`` is a start out of a major city, or why it may not start."""
    if not 0 <= m < MAP.size:
        return "rule.no_such_milepost", f"{m} is not a milepost of the map"
    if continues_own(state, seat, m):
        return False
    if not MAP.is_major(m):
        return "rule.not_connected", "new track starts from a major city or from your own track"
    if state.turn.major_starts >= MAJOR_STARTS:
        return ("rule.major_starts",
                f"you may build out of major-city mileposts {MAJOR_STARTS} times a turn")
    return True


def build_event(state: State, seat: int, path: list[int]) -> ev.TrackBuilt:
    if len(path) < 2:
        raise RuleError("rule.empty_path", "a build names its start and at least one milepost")
    major = start_problem(state, seat, path[0])
    if isinstance(major, tuple):
        raise RuleError(major[0], f"step 0 (start at {path[0]}): {major[1]}", step=0)
    new: dict[int, int] = {}
    cost = 0
    for i, (a, b) in enumerate(itertools.pairwise(path), start=1):
        found = step_problem(state, seat, a, b, new, cost)
        if isinstance(found, tuple):
            raise RuleError(found[0], f"step {i} ({a} to {b}): {found[1]}", step=i)
        new[edge_key(a, b)] = seat
        cost += found
    return ev.TrackBuilt(seat, list(path), cost, major)


# --- moving ------------------------------------------------------------------------------------
def move_problem(
    state: State, seat: int, a: int, b: int, steps: int, fees: list[int]
) -> tuple[str, str] | int | None:
    """Whether the train may go a→b after ``steps`` moves used in this command, with the
    opponents in ``fees`` already charged in it: the opponent to pay, None for no fee, or
    (code, reason)."""
    p = state.players[seat]
    if state.turn.moved + steps >= p.speed:
        return "rule.no_moves_left", f"your train moves {p.speed} mileposts a turn"
    if not 0 <= b < MAP.size:
        return "rule.no_such_milepost", f"{b} is not a milepost of the map"
    if state.turn.moved + steps + step_moves(state, b) > p.speed:
        return "rule.no_moves_left", "a step into snow takes two of your moves"
    if b in MAP.inside[a]:
        return None
    if b not in MAP.adjacent[a]:
        return "rule.not_adjacent", f"{a} and {b} are not neighbouring mileposts"
    owner = state.track.get(edge_key(a, b))
    if owner is None:
        return "rule.no_track", f"no track joins {a} and {b}"
    for card, drawer in in_force(state, "rail_strike"):
        if drawer == owner:
            return "rule.strike", f"{card.name}: no train moves on seat {owner}'s track"
    if owner == seat or owner in state.turn.paid or owner in fees:
        return None
    if p.money - FEE * len(fees) < FEE:
        return "rule.no_money", f"running on seat {owner}'s track costs ${FEE}M"
    return owner


def move_event(state: State, seat: int, path: list[int]) -> ev.TrainMoved:
    at = state.players[seat].train
    if not path or at is None:
        raise RuleError("rule.empty_path", "a move names at least one milepost")
    fees: list[int] = []
    used = 0
    for i, b in enumerate(path):
        found = move_problem(state, seat, at, b, used, fees)
        if isinstance(found, tuple):
            raise RuleError(found[0], f"step {i + 1} ({at} to {b}): {found[1]}", step=i + 1)
        if found is not None:
            fees.append(found)
        used += step_moves(state, b)
        at = b
    return ev.TrainMoved(seat, list(path), [ev.Fee(o, FEE) for o in fees],
                         None if used == len(path) else used)


def step_moves(state: State, b: int) -> int:
    """Moves a step into ``b`` takes: 2 in snow, else 1."""
    if state.effects and any(b in card.area for card, _ in in_force(state, "snow")):
        return 2
    return 1


def auto_path(state: State, seat: int, toward: int) -> list[int]:
    """Where ``auto_move`` toward a neighbour goes: that step (checked), then on along the track
    while the milepost is no city and exactly two sections of track (anyone's) meet there, as
    far as the moves and fees allow."""
    at = state.players[seat].train
    if at is None:
        raise RuleError("rule.empty_path", "your train is not on the map")
    path: list[int] = []
    fees: list[int] = []
    used = 0
    prev, nxt = at, toward
    while True:
        found = move_problem(state, seat, prev, nxt, used, fees)
        if isinstance(found, tuple):
            if not path:
                raise RuleError(found[0], f"step 1 ({prev} to {nxt}): {found[1]}", step=1)
            return path
        if found is not None:
            fees.append(found)
        path.append(nxt)
        used += step_moves(state, nxt)
        if MAP.city_at[nxt] is not None:
            return path
        ways = [n for n in MAP.adjacent[nxt] if edge_key(nxt, n) in state.track]
        if len(ways) != 2 or prev not in ways:
            return path
        prev, nxt = nxt, ways[0] if ways[1] == prev else ways[1]


def auto_move_event(state: State, seat: int, toward: int) -> ev.TrainMoved:
    return move_event(state, seat, auto_path(state, seat, toward))


# --- loads -----------------------------------------------------------------------------------
def struck(state: State, at: int | None) -> str | None:
    """The strike in force where the train is (no pick-up or delivery there), if any."""
    for card, _ in in_force(state, "strike"):
        if at in card.area:
            return card.name
    return None


def _pick_up(state: State, seat: int, load: str) -> ev.E:
    p = state.players[seat]
    strike = struck(state, p.train) if state.effects else None
    if strike is not None:
        raise RuleError("rule.strike", f"{strike}: no loads are picked up here")
    if load not in LOADS:
        raise RuleError("rule.no_such_load", f"{load!r} is not a load of the game")
    city = MAP.city_at[p.train] if p.train is not None else None
    if city is None or load not in SUPPLIES[city]:
        raise RuleError("rule.not_supplied_here", f"{load} is not supplied where your train is")
    if state.chips_out(load) >= LOADS[load].chips:
        raise RuleError("rule.no_chips", f"all {LOADS[load].chips} {load} chips are on trains")
    if len(p.loads) >= p.capacity:
        raise RuleError("rule.train_full", f"your train carries {p.capacity} loads")
    return ev.LoadPickedUp(seat, load, city)


def _deliver(state: State, seat: int, c: cmd.Deliver, rng: Rng) -> list[ev.E]:
    p = state.players[seat]
    if not (0 <= c.card < 3 and 0 <= c.demand < 3) or p.cards[c.card] < 0:
        raise RuleError("rule.no_such_demand", "cards and demands are numbered 0 to 2")
    demand = CARDS[p.cards[c.card]][c.demand]
    strike = struck(state, p.train) if state.effects else None
    if strike is not None:
        raise RuleError("rule.strike", f"{strike}: no loads are delivered here")
    if demand.load not in p.loads:
        raise RuleError("rule.load_not_carried", f"your train carries no {demand.load}")
    if p.train is None or MAP.city_at[p.train] != demand.city:
        raise RuleError("rule.wrong_city", f"{demand.load} is wanted in {demand.city}")
    run = Run(evolve, state)
    run.emit(
        ev.LoadDelivered(seat, c.card, p.cards[c.card], demand.load, demand.city, demand.payoff,
                         p.debt)
    )
    draw(run, rng, seat, c.card)
    return run.events


def _dump(state: State, seat: int, load: str) -> ev.E:
    if load not in state.players[seat].loads:
        raise RuleError("rule.load_not_carried", f"your train carries no {load}")
    return ev.LoadDumped(seat, load)


# --- end of a turn ---------------------------------------------------------------------------
def connected_majors(state: State, seat: int) -> int:
    """The most major cities one continuous piece of ``seat``'s track joins (a major city's
    free zone joins the track that reaches any of its mileposts)."""
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    touched: set[int] = set()
    for key, owner in state.track.items():
        if owner == seat:
            a, b = divmod(key, 4096)
            parent[find(a)] = find(b)
            touched.update((a, b))
    reached: dict[int, set[str]] = {}
    for name in MAP.majors:
        ms = MAP.cities[name].mileposts
        hits = [m for m in ms if m in touched]
        for m in hits[1:]:
            parent[find(m)] = find(hits[0])
        if hits:
            reached.setdefault(hits[0], set()).add(name)
    count: dict[int, int] = {}
    for m, names in reached.items():
        root = find(m)
        count[root] = count.get(root, 0) + len(names)
    return max(count.values(), default=0)


def end_turn(run: Run, seat: int) -> None:
    """``seat`` ends its turn: the game is won, or the next players whose turn is lost lose it
    (each skip is used up, so this ends), and the turn limit may end the game."""
    run.emit(ev.TurnEnded(seat))
    s = run.state
    o = s.options
    if s.worth(seat) >= o.money_to_win and connected_majors(s, seat) >= o.majors_to_win:
        run.emit(ev.GameEnded([seat], "won"))
        return
    while True:
        nxt = s.current()
        if nxt is None or s.players[nxt].skip <= 0:
            break
        run.emit(ev.TurnLost(nxt))
    if o.turn_limit and s.turn_number >= o.turn_limit * s.seats:
        worth = [s.worth(x) for x in range(s.seats)]
        run.emit(ev.GameEnded([x for x, w in enumerate(worth) if w == max(worth)], "turn_limit"))
