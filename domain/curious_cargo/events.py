"""What happened. Events are facts: ``evolve`` applies them without checking or chance.

Hidden information lives in these fields only (``views.event_view`` redacts them):

* ``cards_dealt.cards``, ``card_kept.card``, ``cards_drawn.cards``: the seat's own and auditors';
  others see ``count``.
* ``cards_passed.passed``: both seats and auditors; spectators see counts.
* ``position_loaded.position``: other seats' ``cards`` and the ``deck``.

Tiles are public (D9): every tile drawn or stored is named."""

from __future__ import annotations

from typing import ClassVar, Literal

import msgspec

from .components import Colour
from .options import Options
from .position import Position
from .state import Score


class E(msgspec.Struct, frozen=True, tag_field="type"):
    """Base of Curious Cargo's events."""


class GameStarted(E, frozen=True, tag="game_started"):
    options: Options
    #: The starting player: forklifts on 0, this seat's on top.
    first: int


class PositionLoaded(E, frozen=True, tag="position_loaded"):
    #: Where its hidden values are (``domain.kernel.hidden.HIDDEN_PATHS``).
    hidden_paths: ClassVar[tuple[str, ...]] = tuple(
        f"position.{p}" for p in Position.hidden_paths
    )

    position: Position


class CardsDealt(E, frozen=True, tag="cards_dealt"):
    """Set-up: cards dealt face down (hidden); without the draft they go straight to the hand."""

    #: Where its hidden values are (``domain.kernel.hidden.HIDDEN_PATHS``).
    hidden_paths: ClassVar[tuple[str, ...]] = ("cards.*",)
    seat: int
    cards: list[str]
    draft: bool


class CardKept(E, frozen=True, tag="card_kept"):
    #: Where its hidden values are (``domain.kernel.hidden.HIDDEN_PATHS``).
    hidden_paths: ClassVar[tuple[str, ...]] = ("card",)

    seat: int
    card: str


class CardsPassed(E, frozen=True, tag="cards_passed"):
    """The draft ends: ``passed[s]`` are the cards seat s gave to the other seat."""

    #: Where its hidden values are (``domain.kernel.hidden.HIDDEN_PATHS``).
    hidden_paths: ClassVar[tuple[str, ...]] = ("passed.*.*",)
    passed: list[list[str]]


class PhaseStarted(E, frozen=True, tag="phase_started"):
    phase: Literal["construction", "trucking"]
    round: int
    order: list[int]


class TileDrawn(E, frozen=True, tag="tile_drawn"):
    seat: int
    tiles: list[str]
    #: Actions the draw used (1 for ``draw_tile``, 0 when a card was discarded for tiles).
    actions: int


class TilePlayed(E, frozen=True, tag="tile_played"):
    seat: int
    piece: str
    #: ``hand`` or a storage stack index; ``splitter`` for a splitter.
    source: str
    at: str
    rot: int
    squares: list[str]
    level: int
    #: Scaffolds placed automatically (D6), square → how many.
    scaffolds: dict[str, int]
    #: Construction tokens gained for gears covered first.
    gears: int
    #: Active connections after the placement.
    connections: int
    actions: int


class ForkliftMoved(E, frozen=True, tag="forklift_moved"):
    seat: int
    to: int
    #: Bonuses taken, space by space (``trucking``, ``construction``, ``red``, ``teal``,
    #: ``star``); a bonus the supply lacks is not listed.
    bonuses: list[str]
    on_top: bool


class TokenUsed(E, frozen=True, tag="token_used"):
    seat: int
    kind: Literal["construction", "trucking"]
    #: Extra actions (construction) or AP (trucking); 0 when the token placed a splitter.
    gain: int


class CardsDrawn(E, frozen=True, tag="cards_drawn"):
    #: Where its hidden values are (``domain.kernel.hidden.HIDDEN_PATHS``).
    hidden_paths: ClassVar[tuple[str, ...]] = ("cards.*",)

    seat: int
    cards: list[str]


class TurnEnded(E, frozen=True, tag="turn_ended"):
    seat: int


class TilesStored(E, frozen=True, tag="tiles_stored"):
    seat: int
    tiles: list[str]
    stacks: list[int]


class TokensReturned(E, frozen=True, tag="tokens_returned"):
    seat: int
    construction: int
    trucking: int
    splitters: dict[str, int]


class TruckMove(msgspec.Struct, frozen=True):
    card: str
    seat: int
    #: ``shipping``/``receiving`` lane of ``seat``, or ``gone`` (left the game with its goods).
    lane: Literal["shipping", "receiving", "gone"]
    rear: int


class TruckPlayed(E, frozen=True, tag="truck_played"):
    seat: int
    card: str
    target: int
    ap: int
    #: Every truck that moved, in order, with where it ends up (the played one first).
    moves: list[TruckMove]


class Load(msgspec.Struct, frozen=True):
    dock: int
    card: str
    slot: int
    colour: Colour


class GoodsLoaded(E, frozen=True, tag="goods_loaded"):
    seat: int
    loads: list[Load]


class GoodsUnloaded(E, frozen=True, tag="goods_unloaded"):
    seat: int
    unloads: list[Load]
    #: Per unload: True when it filled a receiving slot, False when the slots were full.
    kept: list[bool]


class LoadsPending(E, frozen=True, tag="loads_pending"):
    """Several maximal loads exist: these seats choose (``choose_loads``), first first."""

    seats: list[int]


class CardDiscarded(E, frozen=True, tag="card_discarded"):
    """Trucking action b: a card leaves the game for its tiles (``tile_drawn`` follows)."""

    seat: int
    card: str


class TilesTraded(E, frozen=True, tag="tiles_traded"):
    """Trucking action c: stack tops leave the game (a ``cards_drawn`` follows)."""

    seat: int
    stacks: list[int]
    tiles: list[str]


class GameEnded(E, frozen=True, tag="game_ended"):
    scores: list[Score]
    winners: list[int]
    #: Why: ``shipped``, ``star``, ``bag_empty``, ``deck_empty``.
    triggers: list[str]


Event = (
    GameStarted
    | PositionLoaded
    | CardsDealt
    | CardKept
    | CardsPassed
    | PhaseStarted
    | TileDrawn
    | TilePlayed
    | ForkliftMoved
    | TokenUsed
    | CardsDrawn
    | TurnEnded
    | TilesStored
    | TokensReturned
    | TruckPlayed
    | GoodsLoaded
    | GoodsUnloaded
    | LoadsPending
    | CardDiscarded
    | TilesTraded
    | GameEnded
)
