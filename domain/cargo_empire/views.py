"""What each viewer sees. A player's hand and private city cards are theirs alone (an auditor
sees everything; everyone sees the private cards once the game is over), in views and in the
events a viewer reads. Which end of a delivery earned a city-card bonus is the deliverer's too:
others see ``delivered.bonus_for`` with ``origin``/``destination`` replaced by ``city_card``."""

from __future__ import annotations

from typing import Any

import msgspec

from domain.kernel import Secret, Viewer, redact_others, seat_of, sees_everything

from . import events as ev
from .board import CITIES, COMPONENTS, MAP, NAMES
from .position import Position
from .state import State


def _may_see(viewer: Viewer, seat: int) -> bool:
    return sees_everything(viewer) or seat_of(viewer) == seat


def view(state: State, viewer: Viewer) -> dict[str, Any]:
    cities = []
    for name in NAMES:
        info, c = CITIES[name], state.cities[name]
        tile = None if c.level == 3 else (info.lv1 if c.level == 1 else info.lv2)
        cities.append(
            {
                "name": name,
                "port": info.port,
                "level": c.level,
                "cargo": None if tile is None else tile.cargo,
                "cubes": c.cubes,
                "demand": [{"colour": col, "seat": s} for col, s in c.demand.items()],
                "posts": list(c.posts),
                "post_spaces": info.post_spaces,
            }
        )
    players = []
    for seat, p in enumerate(state.players):
        mine = _may_see(viewer, seat)
        players.append(
            {
                "seat": seat,
                "hand": msgspec.to_builtins(p.hand) if mine else None,
                "hand_size": p.hand.total(),
                "private": list(p.private) if mine or state.phase == "finished" else None,
                "private_count": len(p.private),
                "supply": p.supply,
                "markers": dict(p.markers),
                "delivered": list(p.delivered),
                "deliveries": p.deliveries,
            }
        )
    return {
        "phase": state.phase,
        "map": {"cities": cities, "tracks": [list(t) for t in MAP.tracks]},
        "players": players,
        "public": list(state.public),
        "deck_size": state.deck.total(),
        "discard": msgspec.to_builtins(state.discard),
        "market": list(state.market),
        "development": msgspec.to_builtins(COMPONENTS.development),
        "goals": msgspec.to_builtins(COMPONENTS.goals),
        "solo_target": COMPONENTS.solo_target if state.seats == 1 else None,
        "round": state.round,
        "rounds": COMPONENTS.rounds,
        "turn": state.turn,
        "turns_per_round": state.turns_per_round,
        "current": state.current(),
        "scores": [msgspec.to_builtins(s) for s in state.scores],
        "winners": list(state.winners),
        "options": msgspec.to_builtins(state.options),
    }


def event_view(event: ev.E, viewer: Viewer) -> dict[str, Any]:
    data: dict[str, Any] = msgspec.to_builtins(event)
    if isinstance(event, ev.CardsDrawn) and not _may_see(viewer, event.seat):
        data["cards"] = None
        data["count"] = len(event.cards)
    if isinstance(event, ev.CitiesDealt) and not _may_see(viewer, event.seat):
        data["cities"] = None
        data["count"] = len(event.cities)
    if isinstance(event, ev.PositionLoaded) and not sees_everything(viewer):
        redact_others(data["position"]["players"], viewer, "hand", "private")
        data["position"]["deck"] = None
    if isinstance(event, ev.Delivered) and not _may_see(viewer, event.seat):
        # Naming the end that earned a bonus could reveal a private city card; the number of
        # city-card bonuses is public anyway (the bonus moves show it), as is a Perfect Upgrade.
        data["bonus_for"] = [
            "city_card" if reason in ("origin", "destination") else reason
            for reason in event.bonus_for
        ]
    return data


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
