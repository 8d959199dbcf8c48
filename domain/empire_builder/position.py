"""The position form: an Empire Builder table as JSON (like FEN in chess), always at a point
where the player to act may send a command.

Example (two players; seat 1 to act, its train in Chicago carrying Coal)::

    {"players": [
        {"money": 48, "cards": [0, 1, 2], "track": [[812, 813, 814]], "turns": 4,
         "train": 813},
        {"money": 60, "cards": [3, 4, 5], "loads": ["Coal"], "train": 1206,
         "speed": 12, "turns": 3}],
     "first": 0, "turn_number": 7}

Rules of the form:

* ``players`` lists the seats in order (2 to 6). Each has ``money`` ($M, default 60), ``cards``
  (exactly three demand card ids, indexes into ``data/demands.json``, all different across the
  table), ``loads`` (load names on the train, at most its capacity, never more of a load than
  its chips), ``train`` (a milepost id, or null before the train is placed), ``speed`` (9 or 12),
  ``capacity`` (2 or 3), ``turns`` (turns completed; under 3 the player is still in the building
  turns), ``track``: the player's track as paths of neighbouring milepost ids, ``debt`` (owed
  to the bank), ``face`` (one of ``board.FACES`` or empty) and ``skip`` (turns to lose).
  No two players' tracks share an edge; no track runs inside a major city.
* ``first``: the first player's seat; turns go in seat order from it, the second round (the
  second building round) in reverse. ``turn_number``: turns completed by everyone together;
  with ``r, i = divmod(turn_number, players)`` the player to act is ``(first + i) % players``,
  or ``(first + players - 1 - i) % players`` when ``r`` is 1.
* ``turn``: what the player to act has done this turn (default nothing): ``moved`` mileposts,
  ``spent`` $M, ``major_starts``, ``paid`` (opponents paid a fee), ``built``, ``acted``,
  ``borrowed`` $M.
* ``deck``: card ids left to draw (default: every demand card not in a hand or the discard
  pile; event cards, ids 120 and up, only when named); ``discard``: the discard pile.
  ``options``: the game's options. ``effects``: event cards in force (``card``, ``drawer``,
  ``turns_left`` 1 or 2); ``pending``: seats that must choose a load they lose, a seat once
  per load to choose (at most as often as its train has loads).
"""

from __future__ import annotations

import itertools
from typing import Annotated

import msgspec

from domain.kernel import CommandError
from domain.kernel import invalid_position as _bad
from domain.kernel.bounds import between

from .board import BORROW_LIMIT, CARDS, FACES, LOADS, MAP, SPEND_LIMIT, edge_ends, edge_key
from .cards import ALL_CARDS, EVENT_BASE, event_card
from .options import MONEY_MAX, TURNS_MAX, Options
from .state import BUILDING_TURNS, Effect, Player, State, Turn

#: A derailment costs a seat its next turn; the deck holds 3 derailment cards, each derailing a
#: seat once per pass through the deck, and a seat's turns lost use its skips up before a
#: recycled card can come again (docs/rules/empire-builder.md, "Position form").
SKIP_MAX = 3
#: Mileposts a train moves in a turn: at most the fastest train's speed.
MOVED_MAX = 12
#: New track out of major-city mileposts per turn (``rules.MAJOR_STARTS``).
MAJOR_STARTS_MAX = 2

Seat = Annotated[int, between(0, 5)]
Card = Annotated[int, between(0, ALL_CARDS - 1)]
Milepost = Annotated[int, between(0, MAP.size - 1)]
Money = Annotated[int, between(0, MONEY_MAX)]


class PlayerPosition(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    cards: list[Card]
    money: Money = 60
    loads: list[str] = []
    train: Milepost | None = None
    speed: Annotated[int, between(9, 12)] = 9
    capacity: Annotated[int, between(2, 3)] = 2
    turns: Annotated[int, between(0, TURNS_MAX)] = 3
    track: list[list[Milepost]] = []
    debt: Money = 0
    face: str = ""
    skip: Annotated[int, between(0, SKIP_MAX)] = 0


class TurnPosition(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    moved: Annotated[int, between(0, MOVED_MAX)] = 0
    spent: Annotated[int, between(0, SPEND_LIMIT)] = 0
    major_starts: Annotated[int, between(0, MAJOR_STARTS_MAX)] = 0
    paid: list[Seat] = []
    built: bool = False
    acted: bool = False
    borrowed: Annotated[int, between(0, BORROW_LIMIT)] = 0


class Position(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    players: list[PlayerPosition]
    first: Seat = 0
    #: Turns completed by every seat together: at most 6 seats' ``turns``.
    turn_number: Annotated[int, between(0, 6 * TURNS_MAX)] = 0
    turn: TurnPosition = TurnPosition()
    deck: list[Card] | None = None
    discard: list[Card] = []
    options: Options = Options()
    #: Event cards in force: ``{card, drawer, turns_left}``.
    effects: list[Effect] = []
    #: Seats that must choose the load they lose.
    pending: list[Seat] = []


def validate(p: Position) -> None:
    """Refuse a position that could not occur: raises ``position.invalid`` naming what is wrong.
    Position import (``rules.start_from_position``) calls this; folding does not."""
    _state(p, check=True)


def state_from_position(p: Position) -> State:
    """The state a position describes. No checks: a recorded position was validated when it was
    imported (:func:`validate`), and folding accepts any recorded event (the kernel's rule)."""
    return _state(p, check=False)


def _state(p: Position, *, check: bool) -> State:
    seats = len(p.players)
    if check and (not 2 <= seats <= 6):
        raise _bad("a position has 2 to 6 players")
    if check and (not 0 <= p.first < seats or p.turn_number < 0):
        raise _bad(f"first is a seat (0 to {seats - 1}); turn_number is not negative")
    track: dict[int, int] = {}
    players: list[Player] = []
    held: list[int] = []
    for seat, pp in enumerate(p.players):
        if check and (len(pp.cards) != 3):
            raise _bad(f"seat {seat} holds exactly 3 demand cards")
        held += pp.cards
        if check and (pp.speed not in (9, 12) or pp.capacity not in (2, 3)):
            raise _bad(f"seat {seat}: speed is 9 or 12, capacity 2 or 3")
        if check and (len(pp.loads) > pp.capacity or any(x not in LOADS for x in pp.loads)):
            raise _bad(f"seat {seat}: loads are load names, at most the train's capacity")
        if check and (pp.train is not None and not 0 <= pp.train < MAP.size):
            raise _bad(f"seat {seat}: the train is on a milepost id 0 to {MAP.size - 1}")
        if check and (pp.turns < 0):
            raise _bad(f"seat {seat}: turns is not negative")
        if check and (pp.train is not None and pp.turns < BUILDING_TURNS):
            raise _bad(f"seat {seat}: the train comes after {BUILDING_TURNS} building turns")
        for path in pp.track:
            for a, b in itertools.pairwise(path):
                if check and (
                    not (0 <= a < MAP.size and 0 <= b < MAP.size) or b not in MAP.adjacent[a]
                ):
                    raise _bad(f"seat {seat}: track {a}-{b} is not a buildable pair of mileposts")
                k = edge_key(a, b)
                if check and (track.get(k, seat) != seat):
                    raise _bad(f"track {a}-{b} belongs to two players")
                track[k] = seat
        if check and (pp.debt < 0 or pp.skip < 0 or (pp.face and pp.face not in FACES)):
            raise _bad(f"seat {seat}: debt is not negative; face is one of {', '.join(FACES)}")
        players.append(Player(pp.money, list(pp.cards), list(pp.loads), pp.train, pp.speed,
                              pp.capacity, pp.turns, pp.debt, pp.face, pp.skip))
    for load in LOADS.values():
        if check and (sum(pl.loads.count(load.name) for pl in players) > load.chips):
            raise _bad(f"{load.name} has only {load.chips} chips")
    deck = (sorted(set(range(len(CARDS))) - set(held) - set(p.discard)) if p.deck is None
            else sorted(p.deck))
    every = held + deck + list(p.discard)
    if check and (len(set(every)) != len(every) or any(not 0 <= c < ALL_CARDS for c in every)):
        raise _bad(f"cards are ids 0 to {ALL_CARDS - 1}, each in one place")
    if check and (any(c >= EVENT_BASE for c in held)):
        raise _bad(f"hands hold demand cards (ids 0 to {EVENT_BASE - 1})")
    for x in p.effects:
        card = event_card(x.card)
        if check and (card is None or not 0 <= x.drawer < seats or not 1 <= x.turns_left <= 2):
            raise _bad("effects name event cards, a drawer seat and turns_left 1 or 2")
    for s in p.pending:
        if check and (not 0 <= s < seats or p.pending.count(s) > len(players[s].loads)):
            raise _bad("pending lists seats whose trains carry loads, a seat once per load to"
                       " choose and never more often than its train has loads")
    t = p.turn
    if check and (any(not 0 <= s < seats for s in t.paid) or min(
        t.moved, t.spent, t.major_starts, t.borrowed
    ) < 0):
        raise _bad("turn: counts are not negative and paid lists seats")
    return State(
        seats=seats,
        options=p.options,
        phase="play",
        order=[(p.first + i) % seats for i in range(seats)],
        players=players,
        track=track,
        deck=deck,
        discard=sorted(p.discard),
        turn_number=p.turn_number,
        turn=Turn(t.moved, t.spent, t.major_starts, sorted(set(t.paid)), t.built, t.acted,
                  t.borrowed),
        effects=list(p.effects),
        pending=sorted(p.pending),
    )

def position_of(s: State) -> Position:
    """Export a game in play; raises ``position.unavailable`` once it is over."""
    if s.phase != "play":
        raise CommandError("position.unavailable", "a position exists while play is on")
    t = s.turn
    return Position(
        players=[
            PlayerPosition(list(pl.cards), pl.money, list(pl.loads), pl.train, pl.speed,
                           pl.capacity, pl.turns,
                           [list(edge_ends(k)) for k, o in sorted(s.track.items()) if o == seat],
                           pl.debt, pl.face, pl.skip)
            for seat, pl in enumerate(s.players)
        ],
        first=s.order[0],
        turn_number=s.turn_number,
        turn=TurnPosition(t.moved, t.spent, t.major_starts, list(t.paid), t.built, t.acted,
                          t.borrowed),
        deck=list(s.deck),
        discard=list(s.discard),
        options=s.options,
        effects=list(s.effects),
        pending=list(s.pending),
    )
