"""What each viewer sees. Truck cards in hand, the cards dealt and kept in the draft and the
deck's contents are hidden: a seat sees its own cards, an auditor sees everything, others see
counts — in views and in the events a viewer reads. Everything else is public (D9)."""

from __future__ import annotations

from typing import Any

import msgspec

from domain.kernel import Secret, SpectatorViewer, Viewer, redact_others, seat_of, sees_everything

from . import events as ev
from .components import (
    DOCKS,
    FILES,
    RANKS,
    TRACK_BONUS,
    TRACK_POINTS,
    TRUCKS,
    board_of,
    side_of,
)
from .lines import active_docks, layout, line_colours
from .position import Position
from .rules import load_options
from .state import State, TruckInLane, stars


def _may_see(viewer: Viewer, seat: int) -> bool:
    return sees_everything(viewer) or seat_of(viewer) == seat


def _lane(lane: list[TruckInLane]) -> list[dict[str, Any]]:
    return [
        {
            "card": t.card,
            "layout": TRUCKS[t.card].layout,
            "rear": t.rear,
            "front": t.rear + TRUCKS[t.card].length - 1,
            "goods": {str(k): v for k, v in sorted(t.goods.items())},
        }
        for t in lane
    ]


def view(state: State, viewer: Viewer) -> dict[str, Any]:
    players = []
    board = board_of(state.options)
    side = side_of(state.options)
    for seat, p in enumerate(state.players):
        mine = _may_see(viewer, seat)
        lay = layout(p.board)
        active = active_docks(board, lay.top)
        squares = {
            sq: {
                "height": lay.heights[sq],
                "piece": lay.top_piece[sq],
                "segments": [{"colour": g.colour, "edges": g.edges} for g in lay.top[sq]],
            }
            for sq in sorted(lay.heights)
        }
        players.append(
            {
                "seat": seat,
                "board": [msgspec.to_builtins(b) for b in p.board],
                "squares": squares,
                "docks": {
                    d.id: {"colour": line_colours(lay.top).get(d.id), "active": d.id in active}
                    for d in DOCKS
                },
                "connections": len(active),
                "scaffolds": p.scaffolds,
                "hand": list(p.hand),
                "storage": [list(x) for x in p.storage],
                "cards": list(p.cards) if mine else None,
                "card_count": len(p.cards),
                "dealt": list(p.dealt) if mine else None,
                "dealt_count": len(p.dealt),
                "kept": p.kept if mine else None,
                "has_kept": p.kept is not None,
                "tokens": {"construction": p.construction, "trucking": p.trucking},
                "splitters": dict(p.splitters),
                "forklift": p.forklift,
                "shipped": dict(p.shipped),
                "received": dict(p.received),
                "stars": stars(p),
                "shipping_lane": _lane(p.shipping_lane),
                "receiving_lane": _lane(p.receiving_lane),
            }
        )
    pending = state.pending[0] if state.pending else None
    return {
        "board": {"files": FILES, "ranks": RANKS, "number": board.number, "name": board.name},
        "track": {"points": TRACK_POINTS, "bonuses": {str(k): v for k, v in TRACK_BONUS.items()}},
        "shipping_board": {
            "colours": list(side.colours),
            "columns": list(side.columns),
            "goal": side.goal,
            "column_bonus": {str(k): v for k, v in side.column_bonus.items()},
            "receiving_slots": list(side.receiving_slots),
        },
        "phase": state.phase,
        "step": state.step,
        "round": state.round,
        "order": list(state.order),
        "turn": state.turn,
        "current": state.current(),
        "to_act": state.to_act(),
        "actions_left": state.actions_left,
        "token_used": state.token_used,
        "ap_left": state.ap_left,
        "ap_spent": state.ap_spent,
        "trucking_token_used": state.trucking_token_used,
        "top": state.top,
        "pending": list(state.pending),
        "load_options": None
        if pending is None
        else [[x.dock for x in o] for o in load_options(state, pending)],
        "players": players,
        "bag_size": len(state.bag),
        "deck_size": len(state.deck),
        "deck": list(state.deck) if sees_everything(viewer) else None,
        "supply": msgspec.to_builtins(state.supply),
        "discarded_tiles": list(state.discarded_tiles),
        "discarded_cards": list(state.discarded_cards),
        "lost_goods": dict(state.lost_goods),
        "scores": [msgspec.to_builtins(x) for x in state.scores],
        "winners": list(state.winners),
        "options": msgspec.to_builtins(state.options),
    }


def event_view(event: ev.E, viewer: Viewer) -> dict[str, Any]:
    data: dict[str, Any] = msgspec.to_builtins(event)
    if isinstance(event, (ev.CardsDealt, ev.CardsDrawn)) and not _may_see(viewer, event.seat):
        data["cards"] = None
        data["count"] = len(event.cards)
    elif isinstance(event, ev.CardKept) and not _may_see(viewer, event.seat):
        data["card"] = None
    elif isinstance(event, ev.CardsPassed) and isinstance(viewer, SpectatorViewer):
        data["passed"] = None
        data["counts"] = [len(x) for x in event.passed]
    elif isinstance(event, ev.PositionLoaded) and not sees_everything(viewer):
        redact_others(data["position"]["players"], viewer, "cards", "dealt", "kept")
        data["position"]["deck"] = None
    return data


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
