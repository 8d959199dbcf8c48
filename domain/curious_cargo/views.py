"""What each viewer sees. Truck cards in hand, the cards dealt and kept in the draft and the
deck's contents are hidden: a seat sees its own cards, an auditor sees everything, others see
counts — in views and in the events a viewer reads. Everything else is public (D9)."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, UnsetType

from domain.kernel import Secret, SpectatorViewer, Viewer, redact_others, seat_of, sees_everything
from domain.kernel.typed import union_with

from . import events as ev
from .components import (
    DOCKS,
    FILES,
    RANKS,
    TRACK_BONUS,
    TRACK_POINTS,
    TRUCKS,
    Colour,
    Segment,
    board_of,
    side_of,
)
from .lines import active_docks, layout, line_colours
from .options import Options
from .position import Position
from .rules import load_options
from .state import Phase, Placed, Score, State, Step, Supply, TruckInLane, stars


def _may_see(viewer: Viewer, seat: int) -> bool:
    return sees_everything(viewer) or seat_of(viewer) == seat


class TruckView(msgspec.Struct, frozen=True, kw_only=True):
    """A truck in a lane, parked from street ``rear`` to street ``front``."""

    card: str
    layout: Annotated[str, Meta(description="Rear to front: '.' cargo, 'X' blocked, 'C' cab")]
    rear: int
    front: int
    goods: Annotated[dict[str, Colour], Meta(description="Cargo slot (from the rear) -> good")]


class SquareView(msgspec.Struct, frozen=True, kw_only=True):
    """A built square seen from above: its height, the top piece and its coloured segments."""

    height: int
    piece: Annotated[str, Meta(description="The piece on top")]
    segments: list[Segment]


class DockView(msgspec.Struct, frozen=True, kw_only=True):
    """A loading dock of a board."""

    colour: Annotated[Colour | None, Meta(description="The colour of the line joined to it")]
    active: Annotated[bool, Meta(description="A line joins it to a port of its colour")]


class Tokens(msgspec.Struct, frozen=True, kw_only=True):
    """Bonus tokens a player holds."""

    construction: int
    trucking: int


class CuriousCargoPlayer(msgspec.Struct, frozen=True, kw_only=True):
    """One seat's player; truck cards and the draft's cards are theirs alone."""

    seat: int
    board: Annotated[list[Placed], Meta(description="The pieces built, in building order")]
    squares: Annotated[dict[str, SquareView], Meta(description="Square -> what is built there")]
    docks: Annotated[dict[str, DockView], Meta(description="Dock id -> its line")]
    connections: Annotated[int, Meta(description="How many docks are active")]
    scaffolds: int
    hand: Annotated[list[str], Meta(description="Tiles in hand")]
    storage: Annotated[list[list[str]], Meta(description="The storage stacks' tiles")]
    cards: Annotated[
        list[str] | None, Meta(description="Truck cards in hand; None but to its seat, auditor")
    ]
    card_count: int
    dealt: Annotated[
        list[str] | None, Meta(description="Draft cards dealt; None but to its seat, auditor")
    ]
    dealt_count: int
    kept: Annotated[
        str | None, Meta(description="The draft card kept; None but to its seat, auditor")
    ]
    has_kept: bool
    tokens: Tokens
    splitters: Annotated[dict[str, int], Meta(description="Colour -> splitters held")]
    forklift: Annotated[int, Meta(description="The forklift's space on the track")]
    shipped: Annotated[dict[str, int], Meta(description="Colour -> goods shipped")]
    received: Annotated[dict[str, int], Meta(description="Colour -> goods received")]
    stars: int
    shipping_lane: list[TruckView]
    receiving_lane: list[TruckView]


class CuriousCargoBoard(msgspec.Struct, frozen=True, kw_only=True):
    """The player board in play: its size (file letters, the number of ranks), its number
    (1-6, ``options.board``) and its name (docs/rules/curious-cargo.md, D30)."""

    files: str
    ranks: int
    number: int
    name: str


class Track(msgspec.Struct, frozen=True, kw_only=True):
    """The forklift track: points by space, and the bonus at some spaces (by space number)."""

    points: list[int]
    bonuses: dict[str, str]


class ShippingBoard(msgspec.Struct, frozen=True, kw_only=True):
    """The shipping board's side in play (two colours, or three in the 3-colour variant)."""

    colours: list[Colour]
    columns: list[int]
    goal: int
    column_bonus: Annotated[dict[str, int], Meta(description="Column -> its bonus")]
    receiving_slots: list[int]


class CuriousCargoView(msgspec.Struct, frozen=True, kw_only=True):
    """Curious Cargo as one viewer sees it (seat, spectator or auditor: one shape, the hidden
    values null)."""

    board: CuriousCargoBoard
    track: Track
    shipping_board: ShippingBoard
    phase: Phase
    step: Step
    round: int
    order: Annotated[list[int], Meta(description="The seats in turn order this round")]
    turn: int
    current: Annotated[int | None, Meta(description="The seat whose turn it is; None: nobody")]
    to_act: list[int]
    actions_left: int
    token_used: bool
    ap_left: Annotated[int, Meta(description="Action points left in the trucking turn")]
    ap_spent: int
    trucking_token_used: bool
    top: int
    pending: Annotated[list[int], Meta(description="Seats that must still choose loads")]
    load_options: Annotated[
        list[list[int]] | None,
        Meta(description="The first pending seat's load choices, each a list of docks"),
    ]
    players: list[CuriousCargoPlayer]
    bag_size: int
    deck_size: int
    deck: Annotated[list[str] | None, Meta(description="The deck; None but to an auditor")]
    supply: Supply
    discarded_tiles: list[str]
    discarded_cards: list[str]
    lost_goods: Annotated[dict[str, int], Meta(description="Colour -> goods lost")]
    scores: list[Score]
    winners: list[int]
    options: Options


def _lane(lane: list[TruckInLane]) -> list[TruckView]:
    return [
        TruckView(
            card=t.card,
            layout=TRUCKS[t.card].layout,
            rear=t.rear,
            front=t.rear + TRUCKS[t.card].length - 1,
            goods={str(k): v for k, v in sorted(t.goods.items())},
        )
        for t in lane
    ]


def view(state: State, viewer: Viewer) -> CuriousCargoView:
    players = []
    board = board_of(state.options)
    side = side_of(state.options)
    for seat, p in enumerate(state.players):
        mine = _may_see(viewer, seat)
        lay = layout(p.board)
        active = active_docks(board, lay.top)
        squares = {
            sq: SquareView(
                height=lay.heights[sq],
                piece=lay.top_piece[sq],
                segments=[Segment(colour=g.colour, edges=g.edges) for g in lay.top[sq]],
            )
            for sq in sorted(lay.heights)
        }
        colours = line_colours(lay.top)
        players.append(
            CuriousCargoPlayer(
                seat=seat,
                board=list(p.board),
                squares=squares,
                docks={d.id: DockView(colour=colours.get(d.id), active=d.id in active)
                       for d in DOCKS},
                connections=len(active),
                scaffolds=p.scaffolds,
                hand=list(p.hand),
                storage=[list(x) for x in p.storage],
                cards=list(p.cards) if mine else None,
                card_count=len(p.cards),
                dealt=list(p.dealt) if mine else None,
                dealt_count=len(p.dealt),
                kept=p.kept if mine else None,
                has_kept=p.kept is not None,
                tokens=Tokens(construction=p.construction, trucking=p.trucking),
                splitters=dict(p.splitters),
                forklift=p.forklift,
                shipped=dict(p.shipped),
                received=dict(p.received),
                stars=stars(p),
                shipping_lane=_lane(p.shipping_lane),
                receiving_lane=_lane(p.receiving_lane),
            )
        )
    pending = state.pending[0] if state.pending else None
    return CuriousCargoView(
        board=CuriousCargoBoard(files=FILES, ranks=RANKS, number=board.number, name=board.name),
        track=Track(points=TRACK_POINTS, bonuses={str(k): v for k, v in TRACK_BONUS.items()}),
        shipping_board=ShippingBoard(
            colours=list(side.colours),
            columns=list(side.columns),
            goal=side.goal,
            column_bonus={str(k): v for k, v in side.column_bonus.items()},
            receiving_slots=list(side.receiving_slots),
        ),
        phase=state.phase,
        step=state.step,
        round=state.round,
        order=list(state.order),
        turn=state.turn,
        current=state.current(),
        to_act=state.to_act(),
        actions_left=state.actions_left,
        token_used=state.token_used,
        ap_left=state.ap_left,
        ap_spent=state.ap_spent,
        trucking_token_used=state.trucking_token_used,
        top=state.top,
        pending=list(state.pending),
        load_options=None
        if pending is None
        else [[x.dock for x in o] for o in load_options(state, pending)],
        players=players,
        bag_size=len(state.bag),
        deck_size=len(state.deck),
        deck=list(state.deck) if sees_everything(viewer) else None,
        supply=msgspec.structs.replace(state.supply, splitters=dict(state.supply.splitters)),
        discarded_tiles=list(state.discarded_tiles),
        discarded_cards=list(state.discarded_cards),
        lost_goods=dict(state.lost_goods),
        scores=list(state.scores),
        winners=list(state.winners),
        options=state.options,
    )


class CardsDealtSeen(msgspec.Struct, frozen=True, tag="cards_dealt", tag_field="type"):
    """``cards_dealt`` as a viewer reads it: to others than the seat (and an auditor) the
    cards are null and ``count`` says how many."""

    seat: int
    cards: list[str] | None
    draft: bool
    count: int | UnsetType = UNSET


class CuriousCargoCardsDrawnSeen(msgspec.Struct, frozen=True, tag="cards_drawn", tag_field="type"):
    """``cards_drawn`` as a viewer reads it: to others than the seat (and an auditor) the
    cards are null and ``count`` says how many."""

    seat: int
    cards: list[str] | None
    count: int | UnsetType = UNSET


class CardKeptSeen(msgspec.Struct, frozen=True, tag="card_kept", tag_field="type"):
    """``card_kept`` as a viewer reads it: the card is null but to its seat and an auditor."""

    seat: int
    card: str | None


class CardsPassedSeen(msgspec.Struct, frozen=True, tag="cards_passed", tag_field="type"):
    """``cards_passed`` as a viewer reads it: a spectator reads ``passed`` as null and
    ``counts`` (how many cards each seat passed)."""

    passed: list[list[str]] | None
    counts: list[int] | UnsetType = UNSET


class CuriousCargoPositionLoadedSeen(
    msgspec.Struct, frozen=True, tag="position_loaded", tag_field="type"
):
    """``position_loaded`` as a viewer reads it: the position (the game's position form) with
    the deck null, and the other seats' ``cards``, ``dealt`` and ``kept`` null, but to an
    auditor."""

    position: dict[str, Any]


#: What ``event_view`` returns: the events, those with hidden values read through the types
#: above.
EventView: Any = union_with(
    ev.Event,
    CardsDealtSeen,
    CuriousCargoCardsDrawnSeen,
    CardKeptSeen,
    CardsPassedSeen,
    CuriousCargoPositionLoadedSeen,
)


def event_view(event: ev.E, viewer: Viewer) -> Any:
    if isinstance(event, ev.CardsDealt):
        if _may_see(viewer, event.seat):
            return CardsDealtSeen(seat=event.seat, cards=list(event.cards), draft=event.draft)
        return CardsDealtSeen(
            seat=event.seat, cards=None, draft=event.draft, count=len(event.cards)
        )
    if isinstance(event, ev.CardsDrawn):
        if _may_see(viewer, event.seat):
            return CuriousCargoCardsDrawnSeen(seat=event.seat, cards=list(event.cards))
        return CuriousCargoCardsDrawnSeen(seat=event.seat, cards=None, count=len(event.cards))
    if isinstance(event, ev.CardKept):
        return CardKeptSeen(
            seat=event.seat, card=event.card if _may_see(viewer, event.seat) else None
        )
    if isinstance(event, ev.CardsPassed):
        if isinstance(viewer, SpectatorViewer):
            return CardsPassedSeen(passed=None, counts=[len(x) for x in event.passed])
        return CardsPassedSeen(passed=[list(x) for x in event.passed])
    if isinstance(event, ev.PositionLoaded):
        position: dict[str, Any] = msgspec.to_builtins(event.position)
        if not sees_everything(viewer):
            redact_others(position["players"], viewer, "cards", "dealt", "kept")
            position["deck"] = None
        return CuriousCargoPositionLoadedSeen(position=position)
    return event


def hidden(event: ev.E) -> list[Secret]:
    """The hidden values ``event_view`` redacts, for the hash chain's commitments: each dealt,
    drawn or kept card for its seat (how many is public); each card passed in the draft for both
    seats (a spectator sees counts); a loaded position's cards for their seat and its deck."""
    if isinstance(event, (ev.CardsDealt, ev.CardsDrawn)):
        return [Secret(("cards", i), (event.seat,)) for i in range(len(event.cards))]
    if isinstance(event, ev.CardKept):
        return [Secret(("card",), (event.seat,))]
    if isinstance(event, ev.CardsPassed):
        return [
            Secret(("passed", s, i), (0, 1))
            for s, cards in enumerate(event.passed)
            for i in range(len(cards))
        ]
    if isinstance(event, ev.PositionLoaded):
        return [Secret(("position", *s.path), s.seats) for s in hidden_position(event.position)]
    return []


def hidden_position(position: Position) -> list[Secret]:
    """A position's deck (nobody), and each player's truck cards, dealt and kept draft cards
    (theirs)."""
    secrets = [Secret(("deck",))]
    for seat in range(len(position.players)):
        for field in ("cards", "dealt", "kept"):
            secrets.append(Secret(("players", seat, field), (seat,)))
    return secrets
