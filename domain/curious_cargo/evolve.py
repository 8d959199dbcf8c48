"""Folding events into state. Total and deterministic: no checks, no chance.

``apply`` changes a state in place (``rules`` uses it on its working copy while deciding);
``evolve`` (the kernel's :class:`~domain.kernel.Folder`) applies an event to a copy."""

from __future__ import annotations

from domain.kernel import Folder

from . import events as ev
from .components import (
    ACTIONS,
    AP,
    CARD_IDS,
    COLOURS,
    SCAFFOLDING,
    SPLITTER_SUPPLY,
    SUPPLY,
    TILE_IDS,
    side_of,
)
from .position import state_from_position
from .state import EDITION, Placed, Player, State, Supply, TruckInLane, clone


def started(event: ev.GameStarted, edition: int = EDITION) -> State:
    """The state set-up makes: each seat's goods on the board side's colours (the 3-colour side
    adds purple) and the splitters a seat takes at set-up (the variant's purple one, D32)."""
    side = side_of(event.options)
    each = side.splitters_each
    kinds = (*COLOURS, *each)  # splitter colours: red, teal and the variant's purple
    zero: dict[str, int] = {c: 0 for c in side.colours}

    def player() -> Player:
        splitters = {c: each.get(c, 0) for c in kinds}
        return Player(
            scaffolds=SCAFFOLDING, splitters=splitters, shipped=dict(zero), received=dict(zero)
        )

    supply = Supply(
        construction=SUPPLY["construction"],
        trucking=SUPPLY["trucking"],
        splitters={c: SPLITTER_SUPPLY[c] - 2 * each.get(c, 0) for c in kinds},
    )
    return State(
        options=event.options,
        players=[player() for _ in range(2)],
        bag=list(TILE_IDS),
        deck=list(CARD_IDS),
        supply=supply,
        top=event.first,
        order=[event.first, 1 - event.first],
        step="draft",
        phase="draft",
        lost_goods=dict(zero),
        edition=edition,
    )


def _lane(p: Player, lane: str) -> list[TruckInLane]:
    return p.shipping_lane if lane == "shipping" else p.receiving_lane


def _truck(s: State, card: str) -> TruckInLane:
    for p in s.players:
        for t in (*p.shipping_lane, *p.receiving_lane):
            if t.card == card:
                return t
    raise KeyError(card)


def apply(s: State, e: ev.E) -> None:
    if isinstance(e, ev.CardsDealt):
        for c in e.cards:
            s.deck.remove(c)
        p = s.players[e.seat]
        if e.draft:
            p.dealt = list(e.cards)
        else:
            p.cards.extend(e.cards)
    elif isinstance(e, ev.CardKept):
        s.players[e.seat].kept = e.card
    elif isinstance(e, ev.CardsPassed):
        for seat, p in enumerate(s.players):
            p.cards = [*([p.kept] if p.kept is not None else []), *e.passed[1 - seat]]
            p.dealt = []
            p.kept = None
    elif isinstance(e, ev.PhaseStarted):
        s.phase = e.phase
        s.step = "turn"
        s.round = e.round
        s.order = list(e.order)
        s.turn = 0
        _new_turn(s)
    elif isinstance(e, ev.TileDrawn):
        for t in e.tiles:
            s.bag.remove(t)
        s.players[e.seat].hand.extend(e.tiles)
        s.actions_left -= e.actions
    elif isinstance(e, ev.TilePlayed):
        p = s.players[e.seat]
        if e.source == "hand":
            p.hand.remove(e.piece)
        elif e.source == "splitter":
            colour = e.piece.removeprefix("splitter-")
            p.splitters[colour] -= 1
        else:
            p.storage[int(e.source)].pop()
        p.board.append(Placed(e.piece, e.at, e.rot))
        p.scaffolds -= sum(e.scaffolds.values())
        p.construction += e.gears
        s.supply.construction -= e.gears
        s.actions_left -= e.actions
    elif isinstance(e, ev.ForkliftMoved):
        p = s.players[e.seat]
        p.forklift = e.to
        for bonus in e.bonuses:
            if bonus == "trucking":
                p.trucking += 1
                s.supply.trucking -= 1
            elif bonus == "construction":
                p.construction += 1
                s.supply.construction -= 1
            elif bonus in s.supply.splitters:
                p.splitters[bonus] += 1
                s.supply.splitters[bonus] -= 1
        if e.on_top:
            s.top = e.seat
    elif isinstance(e, ev.TokenUsed):
        p = s.players[e.seat]
        if e.kind == "construction":
            p.construction -= 1
            s.supply.construction += 1
            s.token_used = True
            s.actions_left += e.gain
        else:
            p.trucking -= 1
            s.supply.trucking += 1
            s.trucking_token_used = True
            s.ap_left += e.gain
    elif isinstance(e, ev.CardsDrawn):
        for c in e.cards:
            s.deck.remove(c)
        s.players[e.seat].cards.extend(e.cards)
    elif isinstance(e, ev.TurnEnded):
        s.turn += 1
        _new_turn(s)
        # End of Phase Cleanup after either phase (manual §4): tiles in hand go into storage;
        # edition 1 stored them after construction only (D28).
        cleanup = s.edition >= 2 or s.phase == "construction"
        if s.turn >= len(s.order) and cleanup and any(p.hand for p in s.players):
            s.step = "cleanup"
    elif isinstance(e, ev.TilesStored):
        p = s.players[e.seat]
        for tile, stack in zip(e.tiles, e.stacks, strict=True):
            p.hand.remove(tile)
            p.storage[stack].append(tile)
    elif isinstance(e, ev.TokensReturned):
        p = s.players[e.seat]
        p.construction -= e.construction
        p.trucking -= e.trucking
        s.supply.construction += e.construction
        s.supply.trucking += e.trucking
        for c, n in e.splitters.items():
            p.splitters[c] -= n
            s.supply.splitters[c] += n
    elif isinstance(e, ev.TruckPlayed):
        p = s.players[e.seat]
        p.cards.remove(e.card)
        s.discarded_cards.append(e.card)
        s.ap_left -= e.ap
        s.ap_spent += e.ap
        for move in e.moves:
            _move(s, move)
    elif isinstance(e, ev.GoodsLoaded):
        for load in e.loads:
            _truck(s, load.card).goods[load.slot] = load.colour
            s.players[e.seat].shipped[load.colour] += 1
        if e.seat in s.pending:
            s.pending.remove(e.seat)
    elif isinstance(e, ev.GoodsUnloaded):
        p = s.players[e.seat]
        for load, kept in zip(e.unloads, e.kept, strict=True):
            del _truck(s, load.card).goods[load.slot]
            if kept:
                p.received[load.colour] += 1
            else:
                s.lost_goods[load.colour] += 1
    elif isinstance(e, ev.LoadsPending):
        s.pending = list(e.seats)
    elif isinstance(e, ev.CardDiscarded):
        s.players[e.seat].cards.remove(e.card)
        s.discarded_cards.append(e.card)
    elif isinstance(e, ev.TilesTraded):
        p = s.players[e.seat]
        for stack in e.stacks:
            s.discarded_tiles.append(p.storage[stack].pop())
    elif isinstance(e, ev.GameEnded):
        s.phase = "finished"
        s.step = "finished"
        s.scores = list(e.scores)
        s.winners = list(e.winners)


def _new_turn(s: State) -> None:
    s.actions_left = ACTIONS
    s.token_used = False
    s.ap_left = AP
    s.ap_spent = 0
    s.trucking_token_used = False


def _move(s: State, move: ev.TruckMove) -> None:
    found: TruckInLane | None = None
    for p in s.players:
        for lane in (p.shipping_lane, p.receiving_lane):
            for t in lane:
                if t.card == move.card:
                    found = t
                    lane.remove(t)
                    break
    truck = found if found is not None else TruckInLane(move.card, move.rear, {})
    if move.lane == "gone":
        for colour in truck.goods.values():
            s.lost_goods[colour] += 1
        return
    truck.rear = move.rear
    lane = _lane(s.players[move.seat], move.lane)
    lane.append(truck)
    lane.sort(key=lambda t: t.rear)


def folder(edition: int) -> Folder[State]:
    """``evolve`` under a rules edition: the opening event records it in the state, which the
    rules read wherever behaviour changed between editions."""

    def loaded(e: ev.PositionLoaded) -> State:
        s = state_from_position(e.position)
        s.edition = edition
        return s

    return Folder(
        {ev.GameStarted: lambda e: started(e, edition), ev.PositionLoaded: loaded},
        lambda event, s: apply(s, event),
        clone,
    )


evolve: Folder[State] = folder(EDITION)
