"""Every turn uses a trading post (a delivery places one, a turn without one retires one), so the
game's two end statements agree: it lasts 12 turns per player (9 with five) and it ends when all
players are out of Trading Posts. And a position that could not occur in a real game is refused."""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec
import pytest

from domain.cargo_empire import CARGO_EMPIRE
from domain.cargo_empire.board import COMPONENTS, turns_per_round
from domain.cargo_empire.commands import Gather
from domain.cargo_empire.options import Options
from domain.cargo_empire.position import turns_left
from domain.kernel import SPECTATOR, LocalGame, Rng

from .support import at, deliver, invalid, types


def shown(value: object) -> Any:
    """An event view as its JSON (builtins)."""
    return msgspec.to_builtins(value)


def _bot_game(seats: int, n: int) -> tuple[LocalGame[Any, Any, Any, Any, Any], list[list[int]]]:
    """A random-bot game; returns the table and the supplies after every command in play."""
    seed = hashlib.sha256(f"cargo-empire/posts/{seats}/{n}".encode()).digest()
    options = Options(starting_posts="random" if n % 2 else "choose")
    table = LocalGame.new(CARGO_EMPIRE, seed, seats, options)
    chooser = Rng(seed, 0)
    supplies: list[list[int]] = []
    while CARGO_EMPIRE.outcome(table.state) is None:
        s = table.state
        if s.phase == "play":
            # The invariant behind the rule: a seat's supply is exactly its turns left.
            assert [p.supply for p in s.players] == [
                turns_left(seats, s.round, s.turn, who) for who in range(seats)
            ]
            supplies.append([p.supply for p in s.players])
        who = CARGO_EMPIRE.to_act(s)[0]
        table.submit(who, chooser.choice(CARGO_EMPIRE.legal(s, who)))
    return table, supplies


@pytest.mark.parametrize("seats", [1, 2, 3, 4, 5])
def test_bot_games_end_exactly_when_the_posts_run_out(seats: int) -> None:
    for n in range(20):
        table, supplies = _bot_game(seats, n)
        s = table.state
        turns = COMPONENTS.rounds * turns_per_round(seats)
        # Every seat played its full 12 (or 9) turns ...
        ended = [e.seat for e in table.events if types([e]) == ["turn_ended"]]
        assert [ended.count(who) for who in range(seats)] == [turns] * seats
        # ... and the posts ran out on the very last turn, not before: before it the last seat
        # to act still had its one post, every other seat none.
        assert all(p.supply == 0 for p in s.players)
        assert sorted(supplies[-1]) == [0] * (seats - 1) + [1]
        assert all(any(row) for row in supplies)
        # The final command's events: the turn ends, then the game.
        assert types(table.events[-2:]) == ["turn_ended", "game_ended"]
        assert s.round == COMPONENTS.rounds and s.turn == turns_per_round(seats) * seats
        # Every post is accounted for: on the map or retired.
        retired = types(table.events).count("post_retired")
        on_map = sum(len(s.posts_in(c)) for c in s.cities)
        assert on_map + retired == seats * s.posts_per_player


def test_a_turn_without_a_delivery_retires_a_post_and_a_delivery_places_one() -> None:
    t = at({"cities": {"Madrid": {"posts": [0]}}})
    assert t.state.players[0].supply == 12
    events = t.submit(0, Gather())
    assert types(events)[-2:] == ["post_retired", "turn_ended"]
    assert t.state.players[0].supply == 11
    retired = shown(CARGO_EMPIRE.event_view(events[-2], SPECTATOR))
    assert retired == {"type": "post_retired", "seat": 0}
    events = t.submit(1, Gather())
    assert "post_retired" in types(events) and t.state.players[1].supply == 11
    events = t.submit(0, deliver("Madrid", "Paris", "white", "truck:Paris"))
    assert "post_retired" not in types(events) and t.state.players[0].supply == 10


def test_a_seat_out_of_posts_gathers_without_retiring_and_the_last_post_ends_the_game() -> None:
    t = at({"players": [{"supply": 0, "hand": {}}, {"supply": 2, "hand": {}}]})
    assert types(t.submit(0, Gather())) == ["cards_drawn", "turn_ended"]
    assert types(t.submit(1, Gather()))[-2:] == ["post_retired", "turn_ended"]
    t.submit(0, Gather())
    events = t.submit(1, Gather())
    assert types(events)[-3:] == ["post_retired", "turn_ended", "game_ended"]
    assert t.state.round == 1  # from a position with fewer posts than turns, the game ends early


def test_turns_left_counts_each_seats_turns_in_the_rotating_order() -> None:
    # Two players, round 2 opened by seat 1: after 3 turns (1, 0, 1) seat 0 has had 1, seat 1 2.
    assert turns_left(2, 2, 3, 0) == 4 - 1 + 4
    assert turns_left(2, 2, 3, 1) == 4 - 2 + 4
    # Five players, three turns each per round; round 3 is opened by seat 2.
    assert turns_left(5, 3, 0, 2) == 3 and turns_left(5, 3, 1, 2) == 2
    assert turns_left(5, 3, 14, 1) == 1 and turns_left(5, 3, 15, 1) == 0
    assert turns_left(1, 1, 0, 0) == 12


# --- impossible positions ----------------------------------------------------------------------
def test_a_position_with_more_cards_than_the_deck_holds_is_refused() -> None:
    # 12 Ships in the deck: 7 + 6 in two hands is one too many; the market and discard count too.
    assert "ship" in invalid({"players": [{"hand": {"ship": 7}}, {"hand": {"ship": 6}}]})
    assert "ship" in invalid({"players": [{"hand": {"ship": 7}}, {"hand": {"ship": 4}}],
                               "market": ["ship"], "discard": {"ship": 1}})
    at({"players": [{"hand": {"ship": 7}}, {"hand": {"ship": 4}}], "market": ["ship"]})
    # With the deck given, the four places must hold exactly the 48 cards.
    assert "truck" in invalid({"players": [{"hand": {}}, {"hand": {}}],
                                "deck": {"truck": 21, "train": 16, "ship": 12}})
    assert "train" in invalid({"players": [{"hand": {}}, {"hand": {}}],
                                "deck": {"truck": 20, "train": 15, "ship": 12}})
    t = at({"players": [{"hand": {"truck": 1}}, {"hand": {}}], "market": ["truck"],
            "deck": {"truck": 17, "train": 16, "ship": 12}, "discard": {"truck": 1}})
    assert t.state.deck.total() == 45


def test_a_position_dealing_a_city_card_twice_is_refused() -> None:
    assert "Paris" in invalid({"players": [{"private": ["Paris", "Wien"]},
                                            {"private": ["Paris", "Lisboa"]}]})
    assert "Wien" in invalid({"players": [{"private": ["Wien", "Wien"]}, {}]})
    assert "Berlin" in invalid({"public": ["Berlin", "Milano"],
                                 "players": [{"private": ["Berlin"]}, {}]})
    at({"public": ["Berlin", "Milano"], "players": [{"private": ["Paris"]}, {"private": ["Wien"]}]})


def test_a_position_with_cubes_beyond_the_supply_is_refused() -> None:
    # Two white demand spaces filled, but the white LV1 tiles (Madrid, London, Wien) are full:
    # no white cube has left a tile, so none can have been delivered.
    message = invalid({"cities": {"Paris": {"demand": {"white": 0}},
                                   "Berlin": {"demand": {"white": 1}}}})
    assert "white" in message and "beyond the supply" in message
    # One cube gone from Wien pays for one of them, not two.
    assert "white" in invalid({"cities": {"Paris": {"demand": {"white": 0}},
                                           "Berlin": {"demand": {"white": 1}},
                                           "Wien": {"cubes": 1}}})
    at({"cities": {"Paris": {"demand": {"white": 0}}, "Berlin": {"demand": {"white": 1}},
                   "Wien": {"cubes": 0}}})
    # A flipped city's LV1 cubes have all left (Marseille at LV2: its 2 orange cubes).
    at({"cities": {"Marseille": {"level": 2}, "Paris": {"demand": {"orange": 0}},
                   "Wien": {"demand": {"orange": 1}}}})


def test_a_position_may_not_hold_more_posts_than_turns_left() -> None:
    assert "turns left" in invalid({"round": 2, "players": [{"supply": 9}, {}]})
    # more than any seat ever has: out of the field's documented range, named
    assert "players[0].supply is at most 12" in invalid({"players": [{"supply": 13}, {}]})
    assert "turns left" in invalid({"round": 3, "turn": 7, "players": [{"supply": 1}, {}]})
    t = at({"round": 3, "turn": 7, "players": [{}, {}]})
    assert [p.supply for p in t.state.players] == [0, 1]
