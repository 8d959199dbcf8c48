"""The position form: a mid-game Cargo Empire table as JSON, like FEN in chess.

Example (two players, seat 1 to act on the third turn of round 2)::

    {"players": [
        {"hand": {"truck": 2, "ship": 1}, "private": ["Wien", "Paris"], "supply": 9},
        {"hand": {"train": 2}, "private": ["Madrid", "Napoli"], "supply": 10,
         "markers": {"truck": 3, "train": 1, "ship": 2}, "delivered": ["grey"]}],
     "cities": {"Lisboa": {"posts": [0]},
                "Paris": {"level": 2, "cubes": 1, "demand": {"brown": 1}, "posts": [0, 1]}},
     "public": ["Berlin", "Milano"],
     "market": ["truck", "ship", "train", "truck"],
     "round": 2, "turn": 5}

Rules of the form:

* ``players`` lists the seats in order (1 to 5). Each has a ``hand`` (card counts), ``private``
  city cards, ``supply`` (posts still on the board; default: the seat's turns left, at most the
  game's total less the posts the position shows for that seat; never more than the seat's turns
  left, since every turn uses a post; posts on the map plus supply never exceed the game's total,
  and not every player may be out of posts), ``markers`` (development track spaces, default 0),
  ``delivered`` (cargo colours delivered so far) and ``deliveries``.
* ``cities`` maps a city name to its ``level`` (1, 2 or 3; default 1), ``cubes`` on the tile
  (default: a full tile of that level; 0 at LV3), ``demand`` (demand colour → seat whose post
  fills it; colours not named are free) and ``posts`` (seats on the post spaces; the posts plus
  every demand space still ahead — the tile's, and the LV2 tile's at LV1 — must fit on the city's
  post spaces). A city not
  named is a fresh LV1 city without posts.
* ``public``: the public city cards (public and private cards are one deck: none twice).
  ``deck`` and ``discard``: card counts (default: the deck is the full Transport deck less the
  hands, the market and the discard pile, which may not hold more than it; a given deck must make
  the four add up to the full deck). ``market``: the face-up cards.
* Filled demand spaces of a colour never outnumber the cubes of that colour gone from the tiles.
* ``round`` (1–3) and ``turn`` (turns completed in the round by all seats together) say whose
  turn it is: seat ``(round - 1 + turn) % players``. ``options`` are the game's options.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

import msgspec

from domain.kernel import CommandError
from domain.kernel import invalid_position as _bad
from domain.kernel.bounds import between

from .board import (
    CITIES,
    COLOURS,
    COMPONENTS,
    NAMES,
    VEHICLES,
    Colour,
    Vehicle,
    posts_per_player,
)
from .board import turns_per_round as turns_for
from .options import Options
from .state import Cards, CityState, Player, State

# The bounds of a position's numbers (:mod:`domain.kernel.bounds`), from the component data:
#: a seat (1 to 5 players)
Seat = Annotated[int, between(0, 4)]
#: the most turns a seat has in a game (turns per round times rounds): also its posts in
#: supply and the deliveries it can make (one a turn)
TURNS_MAX = max(turns_for(n) for n in range(1, 6)) * COMPONENTS.rounds
#: the furthest space of a development track
MARKER_MAX = max(len(COMPONENTS.development.of(v).vp) for v in VEHICLES) - 1
#: the most cubes a city tile holds
CUBES_MAX = max(max(c.lv1.cubes, c.lv2.cubes) for c in CITIES.values())
#: turns completed in a round by every seat together
ROUND_TURNS_MAX = max(turns_for(n) * n for n in range(1, 6))


class CardsPosition(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    truck: Annotated[int, between(0, COMPONENTS.deck.truck)] = 0
    train: Annotated[int, between(0, COMPONENTS.deck.train)] = 0
    ship: Annotated[int, between(0, COMPONENTS.deck.ship)] = 0


class PlayerPosition(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    hand: CardsPosition = CardsPosition()
    private: list[str] = []
    supply: Annotated[int, between(0, TURNS_MAX)] | None = None
    markers: dict[str, Annotated[int, between(0, MARKER_MAX)]] = {}
    delivered: list[Colour] = []
    deliveries: Annotated[int, between(0, TURNS_MAX)] = 0


class CityPosition(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    level: Annotated[int, between(1, 3)] = 1
    cubes: Annotated[int, between(0, CUBES_MAX)] | None = None
    demand: dict[str, Seat | None] = {}
    posts: list[Seat] = []


class Position(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    #: Where its hidden values are (``domain.kernel.hidden.HIDDEN_PATHS``).
    hidden_paths: ClassVar[tuple[str, ...]] = ("deck", "players.*.hand", "players.*.private")

    players: list[PlayerPosition]
    cities: dict[str, CityPosition] = {}
    public: list[str] = []
    deck: CardsPosition | None = None
    discard: CardsPosition = CardsPosition()
    market: list[Vehicle] = []
    round: Annotated[int, between(1, COMPONENTS.rounds)] = 1
    turn: Annotated[int, between(0, ROUND_TURNS_MAX - 1)] = 0
    options: Options = Options()


def _check_cards(c: CardsPosition) -> None:
    if min(c.truck, c.train, c.ship) < 0:
        raise _bad("card counts are never negative")


def fresh_city(name: str) -> CityState:
    tile = CITIES[name].lv1
    return CityState(1, tile.cubes, {colour: None for colour in tile.demand}, [])


def validate(p: Position) -> None:
    """Refuse a position that could not occur: raises ``position.invalid`` naming what is wrong.

    Position import calls this; folding a recorded ``position_loaded`` does not (see
    :func:`state_from_position`)."""
    seats = len(p.players)
    if not 1 <= seats <= 5:
        raise _bad("a position has 1 to 5 players")
    turns = turns_for(seats)
    if not 1 <= p.round <= COMPONENTS.rounds or not 0 <= p.turn < turns * seats:
        raise _bad(f"round is 1 to {COMPONENTS.rounds}, turn 0 to {turns * seats - 1}")
    for name, cp in p.cities.items():
        if name not in CITIES:
            raise _bad(f"{name!r} is not a city of the map")
        _check_city(name, cp, seats)
    for pp in p.players:
        for city in pp.private:
            if city not in CITIES:
                raise _bad(f"private city {city!r} is not a city of the map")
        for v, at in pp.markers.items():
            if v not in VEHICLES or not 0 <= at < len(COMPONENTS.development.of(v).vp):
                raise _bad(f"marker {v!r} at {at} is not on the development track")
        _check_cards(pp.hand)
    for city in p.public:
        if city not in CITIES:
            raise _bad(f"public city {city!r} is not a city of the map")
    if len(p.market) > COMPONENTS.market_size:
        raise _bad(f"the market has at most {COMPONENTS.market_size} cards")
    _check_cards(p.discard)
    if p.deck is not None:
        _check_cards(p.deck)
    _check_city_cards(p)
    state = state_from_position(p)
    _check_supply(p, state)
    _check_cubes(state.cities)
    _check_deck(p, state)


def state_from_position(p: Position) -> State:
    """The state a position describes. No checks: a recorded position was validated when it was
    imported (:func:`validate`), and folding accepts any recorded event."""
    seats = len(p.players)
    total_posts = posts_per_player(seats)
    cities = {
        name: fresh_city(name) if name not in p.cities else _city(name, p.cities[name])
        for name in NAMES
    }
    on_board = _on_board(cities, seats)
    players = [
        Player(
            Cards(pp.hand.truck, pp.hand.train, pp.hand.ship),
            list(pp.private),
            (
                min(turns_left(seats, p.round, p.turn, seat), total_posts - on_board[seat])
                if pp.supply is None
                else pp.supply
            ),
            {v: pp.markers.get(v, 0) for v in VEHICLES},
            sorted(set(pp.delivered)),
            pp.deliveries,
        )
        for seat, pp in enumerate(p.players)
    ]
    discard = Cards(p.discard.truck, p.discard.train, p.discard.ship)
    if p.deck is None:
        full = COMPONENTS.deck
        deck = Cards(full.truck, full.train, full.ship)
        for kind in VEHICLES:
            deck.add(kind, -_out(kind, players, p.market, discard))
    else:
        deck = Cards(p.deck.truck, p.deck.train, p.deck.ship)
    return State(
        seats=seats,
        options=p.options,
        phase="play",
        cities=cities,
        players=players,
        public=list(p.public),
        deck=deck,
        discard=discard,
        market=list(p.market),
        posts_per_player=total_posts,
        turns_per_round=turns_for(seats),
        round=p.round,
        turn=p.turn,
        cubes_delivered={c: 0 for c in COLOURS},
        cubes_removed={c: 0 for c in COLOURS},
    )


def _on_board(cities: dict[str, CityState], seats: int) -> list[int]:
    on_board = [0] * seats
    for c in cities.values():
        for s in [*c.posts, *(s for s in c.demand.values() if s is not None)]:
            on_board[s] += 1
    return on_board


def _out(kind: Vehicle, players: list[Player], market: list[Vehicle], discard: Cards) -> int:
    """Cards of ``kind`` outside the deck: in hands, the market and the discard pile."""
    return sum(pl.hand.get(kind) for pl in players) + market.count(kind) + discard.get(kind)


def _check_supply(p: Position, state: State) -> None:
    seats, total = state.seats, state.posts_per_player
    on_board = _on_board(state.cities, seats)
    for seat, player in enumerate(state.players):
        supply, left = player.supply, turns_left(seats, p.round, p.turn, seat)
        if supply < 0 or supply + on_board[seat] > total:
            raise _bad(
                f"seat {seat} has {on_board[seat]} posts on the map and {supply} in supply;"
                f" the game has {total} per player"
            )
        if supply > left:
            raise _bad(
                f"seat {seat} has {supply} posts in supply but {left} turns left: every turn"
                " uses a post"
            )
    if all(pl.supply == 0 for pl in state.players):
        raise _bad("every player is out of posts: the game would be over")


def _check_deck(p: Position, state: State) -> None:
    """Every Transport card is in one place: the deck, the discard pile, the market or a hand."""
    full = COMPONENTS.deck
    for kind in VEHICLES:
        out = _out(kind, state.players, state.market, state.discard)
        if p.deck is None:
            if out > getattr(full, kind):
                raise _bad(
                    f"hands, market and discard hold {out} {kind} cards; the deck has"
                    f" {getattr(full, kind)}"
                )
        elif out + state.deck.get(kind) != getattr(full, kind):
            raise _bad(
                f"deck, discard, market and hands hold {out + state.deck.get(kind)} {kind}"
                f" cards; the game has {getattr(full, kind)}"
            )


def turns_left(seats: int, round: int, turn: int, seat: int) -> int:
    """The turns ``seat`` still has in the game at ``round`` with ``turn`` turns completed.

    >>> turns_left(2, 1, 0, 0), turns_left(2, 3, 7, 0), turns_left(2, 3, 7, 1)
    (12, 0, 1)
    """
    per_round = turns_for(seats)
    first = (round - 1) % seats  # the seat that opens this round
    offset = (seat - first) % seats
    done = 0 if turn <= offset else (turn - offset + seats - 1) // seats
    return per_round - done + (COMPONENTS.rounds - round) * per_round


def _check_city_cards(p: Position) -> None:
    """The 12 city cards are one deck: no card is both public and private, or dealt twice."""
    dealt = [*p.public, *(city for pl in p.players for city in pl.private)]
    for city in dealt:
        if dealt.count(city) > 1:
            raise _bad(f"the city card {city} is dealt more than once")


def _check_cubes(cities: dict[str, CityState]) -> None:
    """Every filled demand space took a cube of its colour from a tile: no colour may show more
    deliveries than cubes of it have left the tiles revealed so far."""
    for colour in COLOURS:
        left_tiles = 0
        filled = 0
        for name, c in cities.items():
            info = CITIES[name]
            if info.lv1.cargo == colour:
                left_tiles += info.lv1.cubes - (c.cubes if c.level == 1 else 0)
            if info.lv2.cargo == colour and c.level >= 2:
                left_tiles += info.lv2.cubes - (c.cubes if c.level == 2 else 0)
            filled += sum(1 for col, s in c.demand.items() if col == colour and s is not None)
        if filled > left_tiles:
            raise _bad(
                f"{filled} {colour} demand spaces are filled but only {left_tiles} {colour}"
                " cubes have left the tiles: cubes beyond the supply"
            )


def _check_city(name: str, cp: CityPosition, seats: int) -> None:
    info = CITIES[name]
    if cp.level not in (1, 2, 3):
        raise _bad(f"{name}: level is 1, 2 or 3")
    tile = info.lv1 if cp.level == 1 else info.lv2
    if cp.level == 3:
        if cp.cubes or cp.demand:
            raise _bad(f"{name}: an LV3 city has no tile, so no cubes and no demand")
    else:
        cubes = tile.cubes if cp.cubes is None else cp.cubes
        if not 0 <= cubes <= tile.cubes:
            raise _bad(f"{name}: the LV{cp.level} tile holds 0 to {tile.cubes} cubes")
        for colour in cp.demand:
            if colour not in tile.demand:
                raise _bad(f"{name}: the LV{cp.level} tile has no {colour} demand space")
        if all(cp.demand.get(colour) is not None for colour in tile.demand):
            raise _bad(f"{name}: a tile with every demand space filled would have upgraded")
    for s in [*cp.posts, *(s for s in cp.demand.values() if s is not None)]:
        if not 0 <= s < seats:
            raise _bad(f"{name}: seat {s} is not in this game")
    # Every post on the tile (filled or still to come) ends on the post spaces, so they must fit.
    coming = (0 if cp.level == 3 else len(tile.demand)) + (
        len(info.lv2.demand) if cp.level == 1 else 0
    )
    if len(cp.posts) + coming > info.post_spaces:
        raise _bad(
            f"{name} has {info.post_spaces} post spaces: {len(cp.posts)} posts there and"
            f" {coming} demand spaces still to come would overflow them"
        )


def _city(name: str, cp: CityPosition) -> CityState:
    info = CITIES[name]
    if cp.level == 3:
        return CityState(3, 0, {}, list(cp.posts))
    tile = info.lv1 if cp.level == 1 else info.lv2
    cubes = tile.cubes if cp.cubes is None else cp.cubes
    demand: dict[str, int | None] = {colour: cp.demand.get(colour) for colour in tile.demand}
    return CityState(cp.level, cubes, demand, list(cp.posts))


def position_of(s: State) -> Position:
    """Export a game in play; raises ``position.unavailable`` during set-up or after the end."""
    if s.phase != "play":
        raise CommandError("position.unavailable", "a position exists while play is on")
    return Position(
        players=[
            PlayerPosition(
                CardsPosition(p.hand.truck, p.hand.train, p.hand.ship),
                list(p.private),
                p.supply,
                dict(p.markers),
                list(p.delivered),
                p.deliveries,
            )
            for p in s.players
        ],
        cities={
            n: CityPosition(c.level, c.cubes, dict(c.demand), list(c.posts))
            for n, c in s.cities.items()
        },
        public=list(s.public),
        deck=CardsPosition(s.deck.truck, s.deck.train, s.deck.ship),
        discard=CardsPosition(s.discard.truck, s.discard.train, s.discard.ship),
        market=list(s.market),
        round=s.round,
        turn=s.turn,
        options=s.options,
    )
