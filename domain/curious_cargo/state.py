"""The state of a game of Curious Cargo: a plain value. ``evolve`` folds events into a copy."""

from __future__ import annotations

from typing import Literal

import msgspec

from domain.kernel import copier

from .components import ACTIONS, AP, RECEIVING_SLOTS, TRACK_MAX, Colour
from .options import Options

Phase = Literal["draft", "construction", "trucking", "finished"]
#: ``turn``: seats play in ``order``; ``cleanup``: tile holders store their tiles.
Step = Literal["draft", "turn", "cleanup", "finished"]


class Placed(msgspec.Struct, frozen=True):
    """A piece on a board, in play order: a tile id or ``splitter-<colour>``."""

    piece: str
    at: str
    rot: int


class TruckInLane(msgspec.Struct):
    card: str
    #: Street of the truck's rear (1–10); it covers ``rear .. rear + length - 1``.
    rear: int
    #: Cargo slot (0 = rear) → colour of the good on it.
    goods: dict[int, Colour] = {}


class Player(msgspec.Struct):
    board: list[Placed] = []
    scaffolds: int = 5
    #: Conveyor tiles in hand (public, D9).
    hand: list[str] = []
    #: Three storage stacks, bottom → top.
    storage: list[list[str]] = msgspec.field(default_factory=lambda: [[], [], []])
    #: Truck cards in hand (hidden).
    cards: list[str] = []
    #: Draft: the cards dealt (hidden) and the one kept (hidden) until the pass.
    dealt: list[str] = []
    kept: str | None = None
    construction: int = 0
    trucking: int = 0
    splitters: dict[str, int] = msgspec.field(default_factory=lambda: {"red": 0, "teal": 0})
    forklift: int = 0
    #: Goods shipped per colour (= emptied shipping columns, from the left).
    shipped: dict[str, int] = msgspec.field(default_factory=lambda: {"red": 0, "teal": 0})
    #: Goods received per colour (filled receiving slots, at most 4).
    received: dict[str, int] = msgspec.field(default_factory=lambda: {"red": 0, "teal": 0})
    shipping_lane: list[TruckInLane] = []
    receiving_lane: list[TruckInLane] = []


class Supply(msgspec.Struct):
    construction: int = 10
    trucking: int = 8
    splitters: dict[str, int] = msgspec.field(default_factory=lambda: {"red": 2, "teal": 2})


class Score(msgspec.Struct, frozen=True):
    eligible: bool
    stars: int
    shipping: int
    bonus: int
    receiving: int
    track: int
    unused: int
    total: int


#: The rules edition of games created now (``lobby.created.edition``; docs/rules/curious-cargo.md
#: "Rules editions"): 1 = before it was recorded (no cleanup after trucking, D28's old form);
#: 2 = since 2026-11-27 (tiles got in trucking are stored at the trucking cleanup).
EDITION = 2


class State(msgspec.Struct):
    options: Options
    players: list[Player]
    bag: list[str]
    deck: list[str]
    supply: Supply = msgspec.field(default_factory=Supply)
    phase: Phase = "draft"
    step: Step = "draft"
    round: int = 1
    #: Seats in turn order for the current phase, and whose turn it is (index).
    order: list[int] = msgspec.field(default_factory=lambda: [0, 1])
    turn: int = 0
    actions_left: int = ACTIONS
    token_used: bool = False
    ap_left: int = AP
    ap_spent: int = 0
    trucking_token_used: bool = False
    #: The seat whose forklift lies on top (ties on the track).
    top: int = 0
    #: Seats owing a load choice (``choose_loads``), first first.
    pending: list[int] = []
    #: Removed from the game: discarded tiles and cards, goods lost off full slots or trucks.
    discarded_tiles: list[str] = []
    discarded_cards: list[str] = []
    lost_goods: dict[str, int] = msgspec.field(default_factory=lambda: {"red": 0, "teal": 0})
    scores: list[Score] = []
    winners: list[int] = []
    #: The rules edition the game is played under (set when its opening event is folded, by
    #: the edition's rules; absent in a state stored before editions: 1).
    edition: int = 1

    def current(self) -> int | None:
        if self.step == "turn" and not self.pending and self.turn < len(self.order):
            return self.order[self.turn]
        return None

    def copy(self) -> State:
        return _clone(self)

    def to_act(self) -> list[int]:
        if self.step == "finished":
            return []
        if self.step == "draft":
            return [s for s, p in enumerate(self.players) if p.kept is None]
        if self.pending:
            return [self.pending[0]]
        if self.step == "cleanup":
            return [s for s, p in enumerate(self.players) if p.hand]
        current = self.current()
        return [] if current is None else [current]


def stars(p: Player) -> int:
    """A star per colour received 4 times (every colour of the game's shipping board side is a
    key of ``received``) and one for space 10 of the track."""
    full = sum(n >= len(RECEIVING_SLOTS) for n in p.received.values())
    return full + (p.forklift >= TRACK_MAX)


def clone(s: State) -> State:
    """A deep copy (every mutable part new; frozen parts shared), by the kernel's copier."""
    return _clone(s)


_clone = copier(State)
