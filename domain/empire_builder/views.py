"""What each viewer sees: everything of the state but the deck's contents (its size only; the
deck has no order anywhere). Demand cards are public to every viewer (the manual's peeking). The
map itself is not in views: ``map`` names its hash and where to fetch it once."""

from __future__ import annotations

from typing import Any

import msgspec

from domain.kernel import Viewer

from . import events as ev
from .board import CARDS, LOADS, MAP_HASH, edge_ends
from .cards import event_card
from .rules import connected_majors
from .state import Effect, State

MAP_ASSET = "/v1/rules/empire-builder/assets/map"


def _card(card: int) -> dict[str, Any] | None:
    if card < 0:
        return None
    return {"id": card, "demands": [{"city": d.city, "load": d.load, "payoff": d.payoff}
                                    for d in CARDS[card]]}


def view(state: State, viewer: Viewer) -> dict[str, Any]:
    tracks: list[list[list[int]]] = [[] for _ in range(state.seats)]
    for key, owner in sorted(state.track.items()):
        tracks[owner].append(list(edge_ends(key)))
    return {
        "map": {"hash": MAP_HASH, "asset": MAP_ASSET},
        "phase": state.phase,
        "current": state.current(),
        "order": list(state.order),
        "turn_number": state.turn_number,
        "turn": msgspec.to_builtins(state.turn),
        "players": [
            {
                "seat": seat,
                "money": p.money,
                "cards": [_card(c) for c in p.cards],
                "loads": list(p.loads),
                "train": p.train,
                "speed": p.speed,
                "capacity": p.capacity,
                "turns": p.turns,
                "debt": p.debt,
                "face": p.face,
                "skip": p.skip,
                "connected_majors": connected_majors(state, seat),
            }
            for seat, p in enumerate(state.players)
        ],
        "tracks": tracks,
        "chips": {name: load.chips - state.chips_out(name) for name, load in LOADS.items()},
        "deck_size": len(state.deck),
        "discard": list(state.discard),
        "winners": list(state.winners),
        "reason": state.reason,
        "options": msgspec.to_builtins(state.options),
        "effects": [_effect(x) for x in state.effects],
        "pending": list(state.pending),
    }


def _effect(x: Effect) -> dict[str, Any]:
    """An event card in force, with its area (mileposts) or river and how long it lasts."""
    card = event_card(x.card)
    # turns_left: how many more of the drawer's turns end before the card's effect does
    out: dict[str, Any] = {"card": x.card, "drawer": x.drawer, "turns_left": x.turns_left}
    if card is not None:
        out |= {"kind": card.kind, "name": card.name, "river": card.river,
                "cities": list(card.cities), "area": sorted(card.area)}
    return out


def event_view(event: ev.E, viewer: Viewer) -> dict[str, Any]:
    data: dict[str, Any] = msgspec.to_builtins(event)
    if isinstance(event, ev.PositionLoaded):
        # the deck is a set, but its contents are not shown in views either: only its size
        pos = event.position
        held = sum(len(p.cards) for p in pos.players) + len(pos.discard)
        data["position"]["deck"] = None
        data["position"]["deck_size"] = len(CARDS) - held if pos.deck is None else len(pos.deck)
    return data
