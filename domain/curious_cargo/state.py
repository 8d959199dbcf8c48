"""The state of a game of Curious Cargo: a plain value. ``evolve`` folds events into a copy."""

from __future__ import annotations

from typing import Literal

import msgspec

from domain.kernel import copier

from .components import ACTIONS, AP, COLOURS, RECEIVING_SLOTS, TRACK_MAX, Colour
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

    def current(self) -> int | None:
        if self.step == "turn" and not self.pending and self.turn < len(self.order):
            return self.order[self.turn]
        return None

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
    return sum(p.received[c] >= len(RECEIVING_SLOTS) for c in COLOURS) + (p.forklift >= TRACK_MAX)


def clone(s: State) -> State:
    """A deep copy (every mutable part new; frozen parts shared), by the kernel's copier."""
    return _clone(s)


_clone = copier(State)
