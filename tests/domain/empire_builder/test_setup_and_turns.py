"""Set-up, the building turns, train placement and turn order (the manual's "Building" and
"Moving" openings)."""

from __future__ import annotations

from typing import Any

import msgspec

from domain.empire_builder import EMPIRE_BUILDER
from domain.empire_builder.board import CARDS, MAP, MAP_HASH
from domain.empire_builder.cards import ALL_CARDS
from domain.empire_builder.options import Options
from domain.kernel import SPECTATOR, CommandError, LocalGame, seat

from .support import SEED, at, centre, play, rejects, types

AnyGame = LocalGame[Any, Any, Any, Any, Any]


def new(seats: int, seed: bytes = SEED, **options: Any) -> AnyGame:
    return LocalGame.new(EMPIRE_BUILDER, seed, seats, Options(**options))


def test_each_player_starts_with_60_and_three_cards_of_three_demands() -> None:
    for seats in range(2, 7):
        t = new(seats)
        held = [c for p in t.state.players for c in p.cards]
        assert all(p.money == 60 for p in t.state.players)
        assert all(len(p.cards) == 3 for p in t.state.players)
        assert all(len(CARDS[c]) == 3 for c in held)
        assert len(set(held)) == 3 * seats
        assert len(t.state.deck) == ALL_CARDS - 3 * seats  # the event cards wait in the deck
        assert types(t.events) == ["game_started"] + ["card_drawn"] * 3 * seats


def test_the_first_player_is_drawn_from_the_seeded_generator() -> None:
    firsts = {new(4, bytes([i]) * 32).state.order[0] for i in range(24)}
    assert firsts == {0, 1, 2, 3}
    t = new(4, bytes([5]) * 32)
    first = t.state.order[0]
    assert t.state.order == [(first + i) % 4 for i in range(4)]
    assert EMPIRE_BUILDER.to_act(t.state) == [first]
    assert new(4, bytes([5]) * 32).events == t.events


def test_seats_and_options_are_checked() -> None:
    for seats in (1, 7):
        try:
            new(seats)
        except Exception as error:
            assert getattr(error, "code", None) == "rule.seats"
        else:
            raise AssertionError("accepted")
    for bad in ({"majors_to_win": 0}, {"majors_to_win": 8}, {"money_to_win": 0},
                {"turn_limit": -1}):
        try:
            new(2, **bad)
        except Exception as error:
            assert getattr(error, "code", None) == "options.invalid"
        else:
            raise AssertionError(f"accepted {bad}")


def test_first_three_turns_are_building_only_then_the_train_is_placed() -> None:
    t = new(2, bytes([1]) * 32)
    first, second = t.state.order
    chicago = centre("Chicago")
    for rnd in range(3):
        for s in (first, second) if rnd != 1 else (second, first):
            assert not any(c.__class__.__name__ in ("Move", "PickUp", "PlaceTrain")
                           for c in EMPIRE_BUILDER.legal(t.state, s))
            rejects(t, s, {"type": "move", "path": [chicago]}, "rule.building_turns")
            rejects(t, s, {"type": "place_train", "city": "Chicago"}, "rule.building_turns")
            rejects(t, s, {"type": "pick_up", "load": "Steel"}, "rule.building_turns")
            play(t, s, {"type": "end_turn"})
    legal = EMPIRE_BUILDER.legal(t.state, first)
    assert {c.__class__.__name__ for c in legal} == {"PlaceTrain"}
    assert len(legal) == len(MAP.cities)
    rejects(t, first, {"type": "end_turn"}, "rule.place_train_first")
    rejects(t, first, {"type": "build", "path": [chicago, chicago]}, "rule.place_train_first")
    rejects(t, first, {"type": "place_train", "city": "Atlantis"}, "rule.no_such_city")
    play(t, first, {"type": "place_train", "city": "Chicago"})
    assert t.state.players[first].train == chicago
    rejects(t, first, {"type": "place_train", "city": "Dallas"}, "rule.train_placed")


def test_turns_go_in_seat_order_from_the_first_player_the_second_building_round_reversed() -> None:
    t = new(3, bytes([2]) * 32)
    order = t.state.order
    seen = []
    for _ in range(12):
        s = EMPIRE_BUILDER.to_act(t.state)[0]
        seen.append(s)
        rejects(t, (s + 1) % 3, {"type": "end_turn"}, "rule.not_your_turn")
        if t.state.players[s].turns == 3:  # the building turns are over
            play(t, s, {"type": "place_train", "city": "Chicago"})
        play(t, s, {"type": "end_turn"})
    assert seen == order + order[::-1] + order + order
    assert [p.turns for p in t.state.players] == [4, 4, 4]
    rejects(t, 5, {"type": "end_turn"}, "rule.no_such_seat")


def test_views_show_cards_to_everyone_and_the_map_by_hash_but_not_the_deck() -> None:
    t = new(3)
    for viewer in (SPECTATOR, seat(0), seat(2)):
        v = msgspec.to_builtins(EMPIRE_BUILDER.view(t.state, viewer))  # as served
        assert v["map"]["hash"] == MAP_HASH
        assert v["map"]["asset"] == "/v1/rules/empire-builder/assets/map"
        assert all(len(p["cards"]) == 3 and p["cards"][0]["demands"] for p in v["players"])
        assert v["deck_size"] == ALL_CARDS - 9
        assert "deck" not in v
    pos = at({"players": [{}, {}]})
    shown = msgspec.to_builtins(EMPIRE_BUILDER.event_view(pos.events[0], seat(0)))
    assert shown["position"]["deck"] is None
    assert shown["position"]["deck_size"] == len(CARDS) - 6


def test_positions_round_trip_and_bad_ones_are_refused() -> None:
    t = new(2, bytes([3]) * 32)
    s = t.state.order[0]
    start = MAP.cities["Chicago"].mileposts[1]
    play(t, s, {"type": "build", "path": [start, min(MAP.adjacent[start])]})
    exported = EMPIRE_BUILDER.export_position(t.state)
    again = LocalGame.from_position(EMPIRE_BUILDER, SEED, exported)
    assert again.state == t.state
    bad_positions: list[dict[str, Any]] = [
        {"players": [{"cards": [0, 1, 2]}]},
        {"players": [{"cards": [0, 1]}, {"cards": [3, 4, 5]}]},
        {"players": [{"cards": [0, 1, 2]}, {"cards": [2, 4, 5]}]},
        {"players": [{"cards": [0, 1, 2], "speed": 10}, {"cards": [3, 4, 5]}]},
        {"players": [{"cards": [0, 1, 2], "loads": ["Gold"]}, {"cards": [3, 4, 5]}]},
        {"players": [{"cards": [0, 1, 2], "loads": ["Coal"] * 3}, {"cards": [3, 4, 5]}]},
        {"players": [{"cards": [0, 1, 2], "track": [[0, 2000]]}, {"cards": [3, 4, 5]}]},
        {"players": [{"cards": [0, 1, 2], "train": -1}, {"cards": [3, 4, 5]}]},
        {"players": [{"cards": [0, 1, 2]}, {"cards": [3, 4, 5]}], "first": 2},
    ]
    for raw in bad_positions:
        try:
            LocalGame.from_position(EMPIRE_BUILDER, SEED, EMPIRE_BUILDER.decode_position(raw))
        except CommandError as error:
            assert error.code in ("position.invalid", "position.out_of_range"), raw
        else:
            raise AssertionError(f"accepted {raw}")
