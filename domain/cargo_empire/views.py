"""What each viewer sees. A player's hand and private city cards are theirs alone (an auditor
sees everything; everyone sees the private cards once the game is over), in views and in the
events a viewer reads. Which end of a delivery earned a city-card bonus is the deliverer's too:
others see ``delivered.bonus_for`` with ``origin``/``destination`` replaced by ``city_card``."""

from __future__ import annotations

from copy import copy
from typing import Annotated, Any, cast

import msgspec
from msgspec import UNSET, Meta, UnsetType

from domain.kernel import Secret, Viewer, redact_others, seat_of, sees_everything
from domain.kernel.typed import union_with

from . import events as ev
from .board import CITIES, COMPONENTS, MAP, NAMES, Colour, Development, Goal, Vehicle
from .options import Options
from .position import Position
from .state import Cards, Phase, Score, State


def _may_see(viewer: Viewer, seat: int) -> bool:
    return sees_everything(viewer) or seat_of(viewer) == seat


class DemandSpace(msgspec.Struct, frozen=True, kw_only=True):
    """A city's demand space for a cargo colour."""

    colour: Colour
    seat: Annotated[int | None, Meta(description="The seat whose post fills it; None: open")]


class CityView(msgspec.Struct, frozen=True, kw_only=True):
    """A city of the map now."""

    name: str
    port: Annotated[bool, Meta(description="Ships sail from port to port")]
    level: Annotated[int, Meta(description="1 to 3; a level-3 city has no cargo tile")]
    cargo: Annotated[Colour | None, Meta(description="The colour of its cubes; None at level 3")]
    cubes: Annotated[int, Meta(description="Cargo cubes waiting in it")]
    demand: list[DemandSpace]
    posts: Annotated[list[int], Meta(description="The seats of its trading posts, in order")]
    post_spaces: int


class MapView(msgspec.Struct, frozen=True, kw_only=True):
    """The map: its cities now and the railroad tracks between them (pairs of city names)."""

    cities: list[CityView]
    tracks: list[list[str]]


class CargoEmpirePlayer(msgspec.Struct, frozen=True, kw_only=True):
    """One seat's player; the hand and the private city cards are theirs alone."""

    seat: int
    hand: Annotated[Cards | None, Meta(description="None but to its seat and an auditor")]
    hand_size: int
    private: Annotated[
        list[str] | None,
        Meta(description="Private city cards; None but to its seat, an auditor, or at the end"),
    ]
    private_count: int
    supply: Annotated[int, Meta(description="Trading posts left to place")]
    markers: Annotated[
        dict[str, int], Meta(description="Vehicle -> its step on the development track")
    ]
    delivered: Annotated[list[Colour], Meta(description="Colours delivered (the Rainbow goal)")]
    deliveries: int


class CargoEmpireView(msgspec.Struct, frozen=True, kw_only=True):
    """Cargo Empire as one viewer sees it (seat, spectator or auditor: one shape, the hidden
    values null)."""

    phase: Phase
    map: MapView
    players: list[CargoEmpirePlayer]
    public: Annotated[list[str], Meta(description="The public city cards")]
    deck_size: int
    discard: Cards
    market: Annotated[list[Vehicle], Meta(description="The Transport cards on offer")]
    development: Development
    goals: list[Goal]
    solo_target: Annotated[int | None, Meta(description="The score to beat alone; None: seats > 1")]
    round: int
    rounds: int
    turn: Annotated[int, Meta(description="Turns played this round, all seats together")]
    turns_per_round: Annotated[int, Meta(description="Each seat's turns in a round")]
    current: Annotated[int | None, Meta(description="The seat to act; None: nobody")]
    scores: list[Score]
    winners: list[int]
    options: Options


def view(state: State, viewer: Viewer) -> CargoEmpireView:
    cities = []
    for name in NAMES:
        info, c = CITIES[name], state.cities[name]
        tile = None if c.level == 3 else (info.lv1 if c.level == 1 else info.lv2)
        cities.append(
            CityView(
                name=name,
                port=info.port,
                level=c.level,
                cargo=None if tile is None else tile.cargo,
                cubes=c.cubes,
                demand=[
                    DemandSpace(colour=cast(Colour, col), seat=s) for col, s in c.demand.items()
                ],
                posts=list(c.posts),
                post_spaces=info.post_spaces,
            )
        )
    players = []
    for seat, p in enumerate(state.players):
        mine = _may_see(viewer, seat)
        players.append(
            CargoEmpirePlayer(
                seat=seat,
                hand=copy(p.hand) if mine else None,
                hand_size=p.hand.total(),
                private=list(p.private) if mine or state.phase == "finished" else None,
                private_count=len(p.private),
                supply=p.supply,
                markers=dict(p.markers),
                delivered=list(p.delivered),
                deliveries=p.deliveries,
            )
        )
    return CargoEmpireView(
        phase=state.phase,
        map=MapView(cities=cities, tracks=[list(t) for t in MAP.tracks]),
        players=players,
        public=list(state.public),
        deck_size=state.deck.total(),
        discard=copy(state.discard),
        market=list(state.market),
        development=COMPONENTS.development,
        goals=list(COMPONENTS.goals),
        solo_target=COMPONENTS.solo_target if state.seats == 1 else None,
        round=state.round,
        rounds=COMPONENTS.rounds,
        turn=state.turn,
        turns_per_round=state.turns_per_round,
        current=state.current(),
        scores=list(state.scores),
        winners=list(state.winners),
        options=state.options,
    )


class CargoEmpireCardsDrawnSeen(msgspec.Struct, frozen=True, tag="cards_drawn", tag_field="type"):
    """``cards_drawn`` as a viewer reads it: to others than the seat (and an auditor) the
    cards are null and ``count`` says how many."""

    seat: int
    cards: list[Vehicle] | None
    count: int | UnsetType = UNSET


class CitiesDealtSeen(msgspec.Struct, frozen=True, tag="cities_dealt", tag_field="type"):
    """``cities_dealt`` as a viewer reads it: to others than the seat (and an auditor) the
    cities are null and ``count`` says how many."""

    seat: int
    cities: list[str] | None
    count: int | UnsetType = UNSET


class CargoEmpirePositionLoadedSeen(
    msgspec.Struct, frozen=True, tag="position_loaded", tag_field="type"
):
    """``position_loaded`` as a viewer reads it: the position (the game's position form) with
    the deck null, and the other seats' ``hand`` and ``private`` null, but to an auditor."""

    position: dict[str, Any]


#: What ``event_view`` returns: the events, those with hidden values read through the types
#: above (``delivered`` keeps its type: only ``bonus_for``'s words change).
EventView: Any = union_with(
    ev.Event, CargoEmpireCardsDrawnSeen, CitiesDealtSeen, CargoEmpirePositionLoadedSeen
)


def event_view(event: ev.E, viewer: Viewer) -> Any:
    if isinstance(event, ev.CardsDrawn):
        if _may_see(viewer, event.seat):
            return CargoEmpireCardsDrawnSeen(seat=event.seat, cards=list(event.cards))
        return CargoEmpireCardsDrawnSeen(seat=event.seat, cards=None, count=len(event.cards))
    if isinstance(event, ev.CitiesDealt):
        if _may_see(viewer, event.seat):
            return CitiesDealtSeen(seat=event.seat, cities=list(event.cities))
        return CitiesDealtSeen(seat=event.seat, cities=None, count=len(event.cities))
    if isinstance(event, ev.PositionLoaded):
        position: dict[str, Any] = msgspec.to_builtins(event.position)
        if not sees_everything(viewer):
            redact_others(position["players"], viewer, "hand", "private")
            position["deck"] = None
        return CargoEmpirePositionLoadedSeen(position=position)
    if isinstance(event, ev.Delivered) and not _may_see(viewer, event.seat):
        # Naming the end that earned a bonus could reveal a private city card; the number of
        # city-card bonuses is public anyway (the bonus moves show it), as is a Perfect Upgrade.
        return msgspec.structs.replace(
            event,
            bonus_for=[
                "city_card" if reason in ("origin", "destination") else reason
                for reason in event.bonus_for
            ],
        )
    return event


def hidden(event: ev.E) -> list[Secret]:
    """A hand's draws and private city cards, each card alone (how many is public), for their
    seat only; a loaded position's hands and private cards (each for its seat) and deck; which
    end of a delivery earned a city-card bonus, for the deliverer."""
    if isinstance(event, ev.CardsDrawn):
        return [Secret(("cards", i), (event.seat,)) for i in range(len(event.cards))]
    if isinstance(event, ev.CitiesDealt):
        return [Secret(("cities", i), (event.seat,)) for i in range(len(event.cities))]
    if isinstance(event, ev.Delivered):
        return [
            Secret(("bonus_for", i), (event.seat,))
            for i, reason in enumerate(event.bonus_for)
            if reason in ("origin", "destination")
        ]
    if isinstance(event, ev.PositionLoaded):
        return [Secret(("position", *s.path), s.seats) for s in hidden_position(event.position)]
    return []


def hidden_position(position: Position) -> list[Secret]:
    """A position's deck (nobody), and each player's hand and private city cards (theirs)."""
    secrets = [Secret(("deck",))]
    for seat in range(len(position.players)):
        secrets.append(Secret(("players", seat, "hand"), (seat,)))
        secrets.append(Secret(("players", seat, "private"), (seat,)))
    return secrets
