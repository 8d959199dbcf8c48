"""What happened. Events are facts: ``evolve`` applies them without checking or chance.

Empire Builder hides little: demand cards are public (the manual's peeking); the deck is a set
drawn from at random, so no deck order exists to reveal. Every event is public."""

from __future__ import annotations

from typing import Literal

import msgspec

from .options import Options
from .position import Position


class E(msgspec.Struct, frozen=True, tag_field="type"):
    """Base of Empire Builder's events."""


class GameStarted(E, frozen=True, tag="game_started"):
    seats: int
    options: Options
    #: Seats in turn order; the first is the first player, drawn at random.
    order: list[int]
    money: int
    #: SHA-256 of the map the game is played on (the ``map`` asset).
    map: str


class PositionLoaded(E, frozen=True, tag="position_loaded"):
    position: Position


class CardDrawn(E, frozen=True, tag="card_drawn"):
    """Demand card ``card`` (an id into ``data/demands.json``) fills hand slot ``slot``."""

    seat: int
    slot: int
    card: int


class DiscardReshuffled(E, frozen=True, tag="discard_reshuffled"):
    """The deck ran out: the discard pile becomes the deck."""


class Upgraded(E, frozen=True, tag="upgraded"):
    seat: int
    kind: Literal["speed", "capacity"]
    cost: int


class TradedIn(E, frozen=True, tag="traded_in"):
    seat: int
    cards: list[int]


class TrackBuilt(E, frozen=True, tag="track_built"):
    seat: int
    path: list[int]
    cost: int
    #: The path starts from a major city milepost not on the builder's own track.
    major_start: bool


class TrainPlaced(E, frozen=True, tag="train_placed"):
    seat: int
    city: str
    milepost: int


class Fee(msgspec.Struct, frozen=True):
    to: int
    amount: int


class TrainMoved(E, frozen=True, tag="train_moved"):
    seat: int
    path: list[int]
    #: $4M to each opponent whose track the train used for the first time this turn.
    fees: list[Fee]
    #: Moves used when not one per milepost (snow); None: ``len(path)``.
    moves: int | None = None


class LoadPickedUp(E, frozen=True, tag="load_picked_up"):
    seat: int
    load: str
    city: str


class LoadDelivered(E, frozen=True, tag="load_delivered"):
    seat: int
    slot: int
    card: int
    load: str
    city: str
    payoff: int
    #: Debt (twice what was borrowed) taken from this payoff; cash may go negative.
    repaid: int = 0


class LoadDumped(E, frozen=True, tag="load_dumped"):
    seat: int
    load: str


class Borrowed(E, frozen=True, tag="borrowed"):
    """Announced to every player: ``seat`` borrowed ``amount`` and owes ``owed`` (twice it)."""

    seat: int
    amount: int
    owed: int


class Lost(msgspec.Struct, frozen=True):
    seat: int
    #: the load lost; None: none (the train carried none, or its owner chooses it)
    load: str | None


class Paid(msgspec.Struct, frozen=True):
    seat: int
    amount: int


class EventCardDrawn(E, frozen=True, tag="event_card_drawn"):
    """Event card ``card`` (see ``cards.py``; ``kind`` and ``name`` repeated for readers) drawn
    by ``seat`` and resolved at once; it goes to the discard pile and ``seat`` draws again."""

    seat: int
    card: int
    kind: str
    name: str
    #: flood: the sections erased, ``[a, b, owner]``
    erased: list[list[int]] = []
    #: derailment: each train inside the area and a turn it will lose, with the load it lost
    #: when that needed no choice (None: it carried none, or its owner chooses: ``choosers``)
    derailed: list[Lost] = []
    #: lost load or derailment: seats that must now choose a load they lose
    choosers: list[int] = []
    #: lost load: trains inside whose loss needs no choice (all their loads alike)
    lost: list[Lost] = []
    #: tax: what each player paid
    taxes: list[Paid] = []


class LoadLost(E, frozen=True, tag="load_lost"):
    """A seat's choice after a lost load card."""

    seat: int
    load: str


class TurnLost(E, frozen=True, tag="turn_lost"):
    """``seat``'s turn passes without play (a derailment); it counts as a turn."""

    seat: int


class FaceChosen(E, frozen=True, tag="face_chosen"):
    seat: int
    face: str


class TurnEnded(E, frozen=True, tag="turn_ended"):
    seat: int


class GameEnded(E, frozen=True, tag="game_ended"):
    winners: list[int]
    #: ``won`` (money and majors reached) or ``turn_limit``.
    reason: str


Event = (
    GameStarted
    | PositionLoaded
    | CardDrawn
    | DiscardReshuffled
    | Upgraded
    | TradedIn
    | TrackBuilt
    | TrainPlaced
    | TrainMoved
    | LoadPickedUp
    | LoadDelivered
    | LoadDumped
    | Borrowed
    | EventCardDrawn
    | LoadLost
    | TurnLost
    | FaceChosen
    | TurnEnded
    | GameEnded
)
