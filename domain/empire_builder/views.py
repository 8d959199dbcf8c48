"""What each viewer sees: everything of the state but the deck's contents (its size only; the
deck has no order anywhere). Demand cards are public to every viewer (the manual's peeking). The
map itself is not in views: ``map`` names its hash and where to fetch it once."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, UnsetType

from domain.kernel import Viewer
from domain.kernel.typed import union_with

from . import events as ev
from .board import CARDS, LOADS, MAP_HASH, edge_ends
from .cards import event_card
from .options import Options
from .rules import connected_majors
from .state import Effect, Phase, State, Turn

MAP_ASSET = "/v1/rules/empire-builder/assets/map"


class MapRef(msgspec.Struct, frozen=True, kw_only=True):
    """The map the game is played on: not in views, fetched once from ``asset``."""

    hash: Annotated[str, Meta(description="The map asset's content hash (its ETag)")]
    asset: Annotated[str, Meta(description="Where to fetch the map")]


class Demand(msgspec.Struct, frozen=True, kw_only=True):
    """One demand of a demand card: ``load`` delivered to ``city`` pays ``payoff`` $M."""

    city: str
    load: str
    payoff: int


class DemandCard(msgspec.Struct, frozen=True, kw_only=True):
    """A demand card in a hand (public to every viewer: the manual's peeking)."""

    id: int
    demands: list[Demand]


class EmpireBuilderPlayer(msgspec.Struct, frozen=True, kw_only=True):
    """One seat's player."""

    seat: int
    money: Annotated[int, Meta(description="Cash, $M")]
    cards: Annotated[
        list[DemandCard | None], Meta(description="The hand's demand cards; None: an empty slot")
    ]
    loads: Annotated[list[str], Meta(description="The loads on the train")]
    train: Annotated[int | None, Meta(description="The train's milepost; None: not placed")]
    speed: Annotated[int, Meta(description="Mileposts a turn")]
    capacity: Annotated[int, Meta(description="Loads the train carries")]
    turns: Annotated[int, Meta(description="Turns this seat has begun")]
    debt: Annotated[int, Meta(description="Borrowed money still owed, $M")]
    face: Annotated[str, Meta(description="The train card's face")]
    skip: Annotated[int, Meta(description="Turns this seat loses (a derailment)")]
    connected_majors: Annotated[
        int, Meta(description="Major cities joined by the seat's own connected track")
    ]


class EffectView(msgspec.Struct, frozen=True, kw_only=True):
    """An event card in force, with its area (mileposts) or river and how long it lasts."""

    card: int
    drawer: Annotated[int, Meta(description="The seat that drew it")]
    turns_left: Annotated[
        int, Meta(description="How many more of the drawer's turns end before it does")
    ]
    kind: str | UnsetType = UNSET
    name: str | UnsetType = UNSET
    river: str | UnsetType | None = UNSET
    cities: list[str] | UnsetType = UNSET
    area: Annotated[list[int] | UnsetType, Meta(description="The mileposts it covers")] = UNSET


class EmpireBuilderView(msgspec.Struct, frozen=True, kw_only=True):
    """Empire Builder as one viewer sees it (seat, spectator or auditor: one shape; only the
    deck's contents are hidden, from everyone)."""

    map: MapRef
    phase: Phase
    current: Annotated[int | None, Meta(description="The seat to act; None: nobody")]
    order: Annotated[list[int], Meta(description="The seats in turn order")]
    turn_number: int
    turn: Annotated[Turn, Meta(description="What the seat to act has done this turn")]
    players: list[EmpireBuilderPlayer]
    tracks: Annotated[
        list[list[list[int]]],
        Meta(description="By seat: its track sections, each a pair of mileposts"),
    ]
    chips: Annotated[dict[str, int], Meta(description="Load -> chips left in the supply")]
    deck_size: int
    discard: list[int]
    winners: list[int]
    reason: Annotated[str, Meta(description="Why the game ended; empty while it lasts")]
    options: Options
    effects: Annotated[list[EffectView], Meta(description="Event cards in force")]
    pending: Annotated[
        list[int],
        Meta(description="Seats that must still choose a load to lose (a lost load card), sorted"),
    ]


def _card(card: int) -> DemandCard | None:
    if card < 0:
        return None
    return DemandCard(
        id=card, demands=[Demand(city=d.city, load=d.load, payoff=d.payoff) for d in CARDS[card]]
    )


def view(state: State, viewer: Viewer) -> EmpireBuilderView:
    tracks: list[list[list[int]]] = [[] for _ in range(state.seats)]
    for key, owner in sorted(state.track.items()):
        tracks[owner].append(list(edge_ends(key)))
    return EmpireBuilderView(
        map=MapRef(hash=MAP_HASH, asset=MAP_ASSET),
        phase=state.phase,
        current=state.current(),
        order=list(state.order),
        turn_number=state.turn_number,
        turn=state.turn.copy(),
        players=[
            EmpireBuilderPlayer(
                seat=seat,
                money=p.money,
                cards=[_card(c) for c in p.cards],
                loads=list(p.loads),
                train=p.train,
                speed=p.speed,
                capacity=p.capacity,
                turns=p.turns,
                debt=p.debt,
                face=p.face,
                skip=p.skip,
                connected_majors=connected_majors(state, seat),
            )
            for seat, p in enumerate(state.players)
        ],
        tracks=tracks,
        chips={name: load.chips - state.chips_out(name) for name, load in LOADS.items()},
        deck_size=len(state.deck),
        discard=list(state.discard),
        winners=list(state.winners),
        reason=state.reason,
        options=state.options,
        effects=[_effect(x) for x in state.effects],
        pending=list(state.pending),
    )


def _effect(x: Effect) -> EffectView:
    card = event_card(x.card)
    if card is None:
        return EffectView(card=x.card, drawer=x.drawer, turns_left=x.turns_left)
    return EffectView(
        card=x.card,
        drawer=x.drawer,
        turns_left=x.turns_left,
        kind=card.kind,
        name=card.name,
        river=card.river,
        cities=list(card.cities),
        area=sorted(card.area),
    )


class EmpireBuilderPositionLoadedSeen(
    msgspec.Struct, frozen=True, tag="position_loaded", tag_field="type"
):
    """``position_loaded`` as every viewer reads it: the position (the game's position form)
    with ``deck`` null and ``deck_size`` saying how many cards it holds."""

    position: dict[str, Any]


#: What ``event_view`` returns: the events, ``position_loaded`` read as
#: :class:`EmpireBuilderPositionLoadedSeen`.
EventView: Any = union_with(ev.Event, EmpireBuilderPositionLoadedSeen)


def event_view(event: ev.E, viewer: Viewer) -> Any:
    if isinstance(event, ev.PositionLoaded):
        # the deck is a set, but its contents are not shown in views either: only its size
        pos = event.position
        held = sum(len(p.cards) for p in pos.players) + len(pos.discard)
        position: dict[str, Any] = msgspec.to_builtins(pos)
        position["deck"] = None
        position["deck_size"] = len(CARDS) - held if pos.deck is None else len(pos.deck)
        return EmpireBuilderPositionLoadedSeen(position=position)
    return event
