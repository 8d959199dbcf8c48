"""The position form: a mid-game Curious Cargo table as JSON, like FEN in chess.

Example (seat 0 to act in the construction phase of round 1, S3 red active)::

    {"phase": "construction", "at": "turn", "actions_left": 2,
     "players": [{"board": [{"tile": "S2r1", "at": "b3", "rot": 0}], "hand": ["C2t1"],
                  "cards": ["T10"], "forklift": 1},
                 {"cards": ["T17", "T04"]}]}

Rules of the form:

* ``phase`` ``construction``/``trucking``; ``at`` ``phase_start`` (the phase's start runs on
  load: the turn order is fixed and, in trucking, the loading pass runs) or ``turn`` (seat
  ``order[turn]`` is to act; the order is derived from the forklifts and ``top``).
  ``actions_left``, ``token_used``, ``ap_left``, ``ap_spent``, ``trucking_token_used`` describe
  the turn in progress. ``top``: the seat whose forklift lies on top.
* ``players[s].board`` replays in order under r.7–8 (on the grid, on no blocked square, the
  scaffolds it needs placed automatically, no tokens for gears); each entry names a ``tile`` id
  or a ``splitter`` colour. ``hand``, ``storage`` (3 stacks, bottom → top), ``cards``,
  ``tokens`` (``construction``, ``trucking``), ``splitters`` (per colour), ``forklift``,
  ``shipped`` and ``received`` (per colour), ``shipping_lane`` and ``receiving_lane`` (trucks by
  ``card``, ``rear`` street and ``goods`` by cargo slot, 0 = rear).
* ``bag``/``deck`` default to every tile/card id not used elsewhere. The supply holds what no
  player holds. Stars are derived. A reused id, a forklift below the active connections, trucks
  overlapping or past street 10, goods on a cab or X space → ``position.invalid``.
* ``options`` (the game's: ``board`` decides which squares are blocked; with ``colours: 3`` the
  players' ``splitters``, ``shipped``, ``received`` and the trucks' goods may name ``purple``,
  otherwise no purple may appear).
* Extensions (defaults: none): ``step`` ``draft``/``cleanup``, ``pending`` (seats owing a load
  choice), ``order`` (the phase's turn order, fixed at its start), ``dealt``/``kept`` per
  player (draft), so that any state exports.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

import msgspec

from domain.kernel import invalid_position as _bad
from domain.kernel.bounds import between

from .components import (
    ACTIONS,
    AP,
    CARD_IDS,
    COLOURS,
    COLUMNS,
    RECEIVING_SLOTS,
    SCAFFOLDING,
    SPLITTER_SUPPLY,
    STACKS,
    STREET_MAX,
    SUPPLY,
    TILE_IDS,
    TOKEN_ACTIONS,
    TOKEN_AP,
    TRACK_MAX,
    TRUCKS,
    Colour,
    board_of,
    footprint,
    piece,
    side_of,
)
from .lines import Layout, active_docks
from .options import Options
from .state import Placed, Player, State, Supply, TruckInLane

# The bounds of a position's numbers (:mod:`domain.kernel.bounds`), from the component data.
#: A seat: Curious Cargo has 2.
Seat = Annotated[int, between(0, 1)]
#: The most rounds a position may name. Decision: 1,000 (docs/rules/curious-cargo.md, D29): a
#: game ends once its bag or deck is empty, which takes a few dozen rounds in play.
ROUNDS_MAX = 1_000
#: Tokens of a kind and splitters of a colour one seat holds: at most the game's supply.
TOKENS_MAX = max(SUPPLY.values())
SPLITTERS_MAX = max(SPLITTER_SUPPLY.values())
#: Action points and actions a turn may hold: the turn's and one token's.
AP_MAX = AP + TOKEN_AP
ACTIONS_MAX = ACTIONS + TOKEN_ACTIONS
#: Cargo slots of the longest truck.
SLOTS_MAX = max(t.length for t in TRUCKS.values()) - 1


class PlacedPosition(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    at: str
    rot: Annotated[int, between(0, 270)] = 0
    tile: str | None = None
    splitter: Colour | None = None


class TruckPosition(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    card: str
    rear: Annotated[int, between(1, STREET_MAX)]
    goods: dict[Annotated[int, between(0, SLOTS_MAX)], Colour] = {}


class PlayerPosition(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    board: list[PlacedPosition] = []
    hand: list[str] = []
    storage: list[list[str]] = []
    cards: list[str] = []
    tokens: dict[str, Annotated[int, between(0, TOKENS_MAX)]] = {}
    splitters: dict[str, Annotated[int, between(0, SPLITTERS_MAX)]] = {}
    forklift: Annotated[int, between(0, TRACK_MAX)] = 0
    shipped: dict[str, Annotated[int, between(0, len(COLUMNS))]] = {}
    received: dict[str, Annotated[int, between(0, len(RECEIVING_SLOTS))]] = {}
    shipping_lane: list[TruckPosition] = []
    receiving_lane: list[TruckPosition] = []
    dealt: list[str] = []
    kept: str | None = None


class Position(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    #: Where its hidden values are (``domain.kernel.hidden.HIDDEN_PATHS``).
    hidden_paths: ClassVar[tuple[str, ...]] = (
        "deck",
        "players.*.cards",
        "players.*.dealt",
        "players.*.kept",
    )

    players: list[PlayerPosition]
    round: Annotated[int, between(1, ROUNDS_MAX)] = 1
    phase: Literal["construction", "trucking"] = "construction"
    at: Literal["phase_start", "turn"] = "phase_start"
    turn: Annotated[int, between(0, 2)] = 0
    actions_left: Annotated[int, between(0, ACTIONS_MAX)] = ACTIONS
    token_used: bool = False
    ap_left: Annotated[int, between(0, AP_MAX)] = AP
    ap_spent: Annotated[int, between(0, AP_MAX)] = 0
    trucking_token_used: bool = False
    top: Seat = 0
    bag: list[str] | None = None
    deck: list[str] | None = None
    options: Options = Options()
    step: Literal["turn", "draft", "cleanup"] = "turn"
    pending: list[Seat] = []
    order: list[Seat] | None = None


def turn_order(players: list[Player], top: int) -> list[int]:
    """Higher forklift first, else the one on top (D4)."""
    return sorted(range(len(players)), key=lambda s: (-players[s].forklift, s != top))


def _lane(
    trucks: list[TruckPosition], cards: set[str], colours: tuple[str, ...], check: bool = True
) -> list[TruckInLane]:
    out: list[TruckInLane] = []
    front = 0
    for t in sorted(trucks, key=lambda t: t.rear):
        truck = TRUCKS.get(t.card)
        if check:
            if truck is None or t.card in cards:
                raise _bad(f"truck {t.card!r} is unknown or used twice")
            if t.rear <= front or t.rear + truck.length - 1 > STREET_MAX:
                raise _bad(f"truck {t.card} overlaps another or runs past street {STREET_MAX}")
            front = t.rear + truck.length - 1
            for slot, colour in t.goods.items():
                if not 0 <= slot < truck.length or truck.layout[slot] != ".":
                    raise _bad(f"truck {t.card} has no cargo space {slot}")
                if colour not in colours:
                    raise _bad(f"truck {t.card} carries {colour}, no good of this game")
        cards.add(t.card)
        out.append(TruckInLane(t.card, t.rear, dict(t.goods)))
    return out


def _counts(
    given: dict[str, int], keys: tuple[str, ...], top: int, what: str, check: bool = True
) -> dict[str, int]:
    for k, v in given.items():
        if check and (k not in keys or not 0 <= v <= top):
            raise _bad(f"{what} {k!r}: {v} is not allowed")
    return {k: given.get(k, 0) for k in keys}


def validate(p: Position) -> None:
    """Refuse a position that could not occur: raises ``position.invalid`` naming what is wrong.
    Position import (``rules.start_from_position``) calls this; folding does not."""
    _state(p, check=True)


def state_from_position(p: Position) -> State:
    """The state a position describes. No checks: a recorded position was validated when it was
    imported (:func:`validate`), and folding accepts any recorded event (the kernel's rule)."""
    return _state(p, check=False)


def _state(p: Position, *, check: bool) -> State:
    if check and (len(p.players) != 2):
        raise _bad("Curious Cargo has 2 players")
    if check and (not 0 <= p.top <= 1 or p.round < 1 or any(s not in (0, 1) for s in p.pending)):
        raise _bad("top and pending name seats 0 or 1; rounds count from 1")
    tiles: set[str] = set()
    cards: set[str] = set()

    def take(ids: list[str], pool: set[str], known: list[str], what: str) -> list[str]:
        for i in ids:
            if check and (i not in known or i in pool):
                raise _bad(f"{what} {i!r} is unknown or used twice")
            pool.add(i)
        return list(ids)

    players: list[Player] = []
    board_spec = board_of(p.options)
    side = side_of(p.options)
    #: The splitter colours of the game: red and teal, and the variant's purple.
    kinds = (*COLOURS, *side.splitters_each)
    split_used: dict[str, int] = {c: 0 for c in kinds}
    for seat, pp in enumerate(p.players):
        board: list[Placed] = []
        lay = Layout()
        used = 0
        for entry in pp.board:
            if check and ((entry.tile is None) == (entry.splitter is None)):
                raise _bad("a board entry names a tile or a splitter")
            pid = entry.tile if entry.tile is not None else f"splitter-{entry.splitter}"
            if entry.tile is not None:
                take([entry.tile], tiles, TILE_IDS, "tile")
            else:
                if check and entry.splitter not in kinds:
                    raise _bad(f"this game has no {entry.splitter} splitter")
                split_used[str(entry.splitter)] = split_used.get(str(entry.splitter), 0) + 1
            pc = piece(pid)
            squares = [] if pc is None else footprint(pc, entry.at, entry.rot)
            if check and (pc is None or entry.rot not in (0, 90, 180, 270) or None in squares):
                raise _bad(f"{pid} at {entry.at} {entry.rot} is off the grid")
            real = [sq for sq in squares if sq is not None]
            if check and (any(sq in board_spec.blocked for sq in real)):
                raise _bad(f"{pid} at {entry.at} covers a blocked square")
            used += sum(lay.scaffolds_for(real)[1].values())
            placed = Placed(pid, entry.at, entry.rot)
            lay.put(placed)
            board.append(placed)
        if check and (used > SCAFFOLDING):
            raise _bad(f"seat {seat}'s board needs {used} scaffolds, more than {SCAFFOLDING}")
        storage = [list(s) for s in pp.storage] + [[] for _ in range(STACKS - len(pp.storage))]
        if check and (len(storage) != STACKS):
            raise _bad(f"there are {STACKS} storage stacks")
        hand = take(pp.hand, tiles, TILE_IDS, "tile")
        for stack in storage:
            take(stack, tiles, TILE_IDS, "tile")
        held = take(pp.cards, cards, CARD_IDS, "card")
        dealt = take(pp.dealt, cards, CARD_IDS, "card")
        if check and (pp.kept is not None and pp.kept not in dealt):
            raise _bad("the kept card is one of the dealt")
        tokens = _counts(pp.tokens, ("construction", "trucking"), 10, "tokens", check)
        splitters = _counts(pp.splitters, kinds, 2, "splitters", check)
        shipped = _counts(pp.shipped, side.colours, len(COLUMNS), "shipped", check)
        received = _counts(pp.received, side.colours, len(RECEIVING_SLOTS), "received", check)
        count = len(active_docks(board_spec, lay.top))
        if check and (not min(count, TRACK_MAX) <= pp.forklift <= TRACK_MAX):
            raise _bad(f"seat {seat}'s forklift {pp.forklift} is below its {count} connections")
        players.append(
            Player(
                board=board,
                scaffolds=SCAFFOLDING - used,
                hand=hand,
                storage=storage,
                cards=held,
                dealt=dealt,
                kept=pp.kept,
                construction=tokens["construction"],
                trucking=tokens["trucking"],
                splitters=splitters,
                forklift=pp.forklift,
                shipped=shipped,
                received=received,
            )
        )
    for seat, pp in enumerate(p.players):
        players[seat].shipping_lane = _lane(pp.shipping_lane, cards, side.colours, check)
        players[seat].receiving_lane = _lane(pp.receiving_lane, cards, side.colours, check)
    bag = sorted(
        take(p.bag, tiles, TILE_IDS, "tile")
        if p.bag is not None
        else [t for t in TILE_IDS if t not in tiles]
    )
    deck = sorted(
        take(p.deck, cards, CARD_IDS, "card")
        if p.deck is not None
        else [c for c in CARD_IDS if c not in cards]
    )
    supply = Supply(
        construction=SUPPLY["construction"] - sum(pl.construction for pl in players),
        trucking=SUPPLY["trucking"] - sum(pl.trucking for pl in players),
        splitters={
            c: SPLITTER_SUPPLY[c] - split_used[c] - sum(pl.splitters[c] for pl in players)
            for c in kinds
        },
    )
    if check and (min(supply.construction, supply.trucking, *supply.splitters.values()) < 0):
        raise _bad("the players hold more tokens or splitters than the game has")
    order = turn_order(players, p.top) if p.order is None else list(p.order)
    if check and (sorted(order) != [0, 1]):
        raise _bad("order lists seats 0 and 1")
    last = len(order) if p.step == "cleanup" else len(order) - 1
    if check and (not 0 <= p.turn <= last or min(p.actions_left, p.ap_left, p.ap_spent) < 0):
        raise _bad("turn is 0 or 1; actions and AP are never negative")
    if check and (p.step == "draft" and not all(pl.dealt for pl in players)):
        raise _bad("a draft position deals cards to both seats")
    return State(
        options=p.options,
        players=players,
        bag=bag,
        deck=deck,
        supply=supply,
        phase="draft" if p.step == "draft" else p.phase,
        step=p.step,
        round=p.round,
        order=order,
        pending=list(p.pending),
        lost_goods={c: 0 for c in side.colours},
        **_turn_counters(p),
    )


#: The turn's counters, named alike in the state and the position and copied as they are.
_TURN_COUNTERS = (
    "turn", "actions_left", "token_used", "ap_left", "ap_spent", "trucking_token_used", "top"
)


def _turn_counters(source: State | Position) -> dict[str, Any]:
    return {name: getattr(source, name) for name in _TURN_COUNTERS}


def _placed(pl: Placed) -> PlacedPosition:
    if pl.piece.startswith("splitter-"):
        colour: Colour = pl.piece.removeprefix("splitter-")  # type: ignore[assignment]
        return PlacedPosition(pl.at, pl.rot, splitter=colour)
    return PlacedPosition(pl.at, pl.rot, tile=pl.piece)


def _trucks(lane: list[TruckInLane]) -> list[TruckPosition]:
    return [TruckPosition(t.card, t.rear, dict(t.goods)) for t in lane]


def position_of(s: State) -> Position:
    players = [
        PlayerPosition(
            board=[_placed(b) for b in pl.board],
            hand=list(pl.hand),
            storage=[list(x) for x in pl.storage],
            cards=list(pl.cards),
            tokens={"construction": pl.construction, "trucking": pl.trucking},
            splitters=dict(pl.splitters),
            forklift=pl.forklift,
            shipped=dict(pl.shipped),
            received=dict(pl.received),
            shipping_lane=_trucks(pl.shipping_lane),
            receiving_lane=_trucks(pl.receiving_lane),
            dealt=list(pl.dealt),
            kept=pl.kept,
        )
        for pl in s.players
    ]
    step: Literal["turn", "draft", "cleanup"] = "turn" if s.step == "finished" else s.step
    return Position(
        players=players,
        round=s.round,
        phase="trucking" if s.phase == "trucking" else "construction",
        at="turn",
        bag=list(s.bag),
        deck=list(s.deck),
        options=s.options,
        step=step,
        pending=list(s.pending),
        order=list(s.order),
        **_turn_counters(s),
    )
