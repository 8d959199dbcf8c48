"""Set-up, rounds and turns, the end of the game and final scoring with every source."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from domain.cargo_empire import CARGO_EMPIRE
from domain.cargo_empire.board import COMPONENTS
from domain.cargo_empire.commands import Gather, PlacePost
from domain.cargo_empire.options import Options
from domain.kernel import AUDITOR, SPECTATOR, LocalGame, seat

from .support import SEED, at, deliver, invalid, rejects, types


def shown(value: object) -> Any:
    """An event view as its JSON (builtins)."""
    return msgspec.to_builtins(value)


def test_setup_deals_cards_and_places_starting_posts_in_snake_order() -> None:
    t = LocalGame.new(CARGO_EMPIRE, SEED, 3)
    s = t.state
    assert s.phase == "setup" and s.order == [0, 1, 2, 2, 1, 0]
    assert [p.hand.total() for p in s.players] == [3, 3, 3] and len(s.market) == 4
    assert len(s.public) == 2 and all(len(p.private) == 2 for p in s.players)
    dealt = s.public + [c for p in s.players for c in p.private]
    assert len(set(dealt)) == len(dealt)
    assert s.players[0].supply == 14
    for who, city in zip([0, 1, 2, 2, 1], ["Lisboa", "Paris", "Wien", "Berlin", "Milano"],
                         strict=True):
        t.submit(who, PlacePost(city))
    rejects(t, 0, PlacePost("Paris"), "rule.city_taken")
    rejects(t, 1, PlacePost("Napoli"), "rule.not_your_turn")
    rejects(t, 0, Gather(), "rule.wrong_phase")
    t.submit(0, PlacePost("Napoli"))
    assert t.state.phase == "play" and t.state.current() == 0
    assert t.state.players[0].supply == 12


def test_random_starting_posts_and_five_players_have_three_turns_a_round() -> None:
    t = LocalGame.new(CARGO_EMPIRE, SEED, 5, Options(starting_posts="random"))
    s = t.state
    assert s.phase == "play" and s.turns_per_round == 3 and s.posts_per_player == 11
    assert sum(len(c.posts) for c in s.cities.values()) == 10


def test_rounds_rotate_the_start_player_and_the_game_ends_after_three_rounds() -> None:
    t = at({"players": [{"hand": {}}, {"hand": {}}]})
    whose = []
    while t.state.phase == "play":
        whose.append(t.state.current())
        t.submit(t.state.current(), Gather())
    assert len(whose) == 3 * 4 * 2
    assert whose[:8] == [0, 1] * 4 and whose[8:16] == [1, 0] * 4 and whose[16:] == [0, 1] * 4
    assert types(t.events)[-1] == "game_ended"
    assert CARGO_EMPIRE.outcome(t.state) is not None


def test_final_scoring_counts_every_source() -> None:
    t = at({
        "players": [
            {"hand": {"truck": 1}, "private": ["Paris", "Wien"],
             "markers": {"truck": 10, "train": 4, "ship": 8},
             "delivered": ["brown", "white", "grey", "orange"]},
            {"hand": {}, "private": ["Lisboa", "Madrid"], "markers": {"truck": 2}},
        ],
        "cities": {"Paris": {"level": 3, "posts": [0, 0, 1]},
                   "Berlin": {"level": 3, "posts": [0]}, "Madrid": {"posts": [1]}},
        "round": 3, "turn": 7,
    })
    events = t.submit(1, Gather())
    assert types(events)[-1] == "game_ended"
    s = t.state
    a, b = s.scores
    assert a.vehicles == {"truck": 10, "train": 3, "ship": 4}
    assert a.lv3_posts == 9 and a.private_cities == 5
    assert a.goals == {"metropolis": 4, "rainbow": 4, "all_rounder": 3, "admiral": 3}
    assert a.total == 17 + 9 + 5 + 14
    assert b.vehicles == {"truck": 1, "train": 0, "ship": 0}
    assert b.lv3_posts == 3 and b.private_cities == 5 and b.goals == {}
    assert b.total == 9
    outcome = CARGO_EMPIRE.outcome(s)
    assert outcome is not None and outcome.scores == [45, 9] and outcome.winners == [0]
    rejects(t, 0, Gather(), "rule.game_over")
    assert CARGO_EMPIRE.view(s, SPECTATOR).players[1].private == ["Lisboa", "Madrid"]


def test_tiebreak_most_posts_then_most_cards_then_shared() -> None:
    base = {"cities": {"Paris": {"level": 3, "posts": [0, 1]}}, "round": 3, "turn": 7}
    t = at({**base, "players": [{"hand": {}}, {"hand": {}}]})
    t.submit(1, Gather())
    assert t.state.winners == [0, 1] or t.state.players[0].hand != t.state.players[1].hand
    t = at({**base, "cities": {"Paris": {"level": 2, "posts": [0, 1, 1]}},
            "players": [{"hand": {}}, {"hand": {}}]})
    t.submit(1, Gather())
    s = t.state
    assert s.scores[0].total == s.scores[1].total and s.winners == [1]


def test_the_game_ends_when_every_player_is_out_of_posts() -> None:
    t = at({"cities": {"Madrid": {"posts": [1]}},
            "players": [{"supply": 0, "hand": {}}, {"supply": 1, "hand": {"truck": 1}}]})
    assert types(t.submit(0, Gather()))[-1] == "turn_ended"
    events = t.submit(1, deliver("Madrid", "Paris", "white", "truck:Paris"))
    assert types(events)[-1] == "game_ended"


def test_solo_game_is_won_by_reaching_the_target() -> None:
    solo = {"cities": {"Paris": {"level": 3, "posts": [0]}, "Berlin": {"level": 3, "posts": [0]}},
            "round": 3, "turn": 3}
    best = {"truck": 10, "train": 10, "ship": 14}
    t = at({**solo, "players": [{"hand": {}, "markers": best, "private": ["Paris"]}]})
    t.submit(0, Gather())
    assert t.state.scores[0].total >= COMPONENTS.solo_target and t.state.winners == [0]
    t = at({**solo, "players": [{"hand": {}}]})
    t.submit(0, Gather())
    assert t.state.winners == []


def test_position_round_trip() -> None:
    t = at({"cities": {"Paris": {"level": 2, "cubes": 1, "demand": {"brown": 1}, "posts": [0]}},
            "market": ["ship"], "round": 2, "turn": 3})
    pos = CARGO_EMPIRE.export_position(t.state)
    again = LocalGame.from_position(CARGO_EMPIRE, SEED, pos)
    assert again.state == t.state
    assert CARGO_EMPIRE.position_seats(pos) == 2


def test_hands_and_private_cards_are_hidden_from_others() -> None:
    t = LocalGame.new(CARGO_EMPIRE, SEED, 2)
    mine = CARGO_EMPIRE.view(t.state, seat(0)).players
    assert mine[0].hand is not None and mine[0].private is not None
    assert mine[1].hand is None and mine[1].private is None
    for record in t.records:
        data = shown(CARGO_EMPIRE.event_view(record.event, SPECTATOR))
        if data["type"] in ("cards_drawn", "cities_dealt"):
            assert data.get("cards") is None and data.get("cities") is None


# --- review fixes ------------------------------------------------------------------------------
def test_other_viewers_do_not_learn_which_end_of_a_delivery_is_a_private_city() -> None:
    t = at({"cities": {"Lisboa": {"posts": [0]}},
            "players": [{"hand": {"truck": 3, "train": 3}, "private": ["Napoli"]}, {}]})
    route = ("truck:Madrid", "truck:Barcelona", "truck:Marseille", "train:Napoli")
    event = t.submit(0, deliver("Lisboa", "Napoli", "brown", *route, truck=1))[0]
    assert shown(CARGO_EMPIRE.event_view(event, seat(0)))["bonus_for"] == ["destination"]
    assert shown(CARGO_EMPIRE.event_view(event, AUDITOR))["bonus_for"] == ["destination"]
    for viewer in (seat(1), SPECTATOR):
        data = shown(CARGO_EMPIRE.event_view(event, viewer))
        assert data["bonus_for"] == ["city_card"]
        assert "origin" not in str(data["bonus_for"]) and "destination" not in data["bonus_for"]
    # The view shows no bonus reasons at all.
    assert "destination" not in str(shown(CARGO_EMPIRE.view(t.state, seat(1)))["players"])


def test_perfect_upgrade_stays_public_in_the_neutral_bonus_form() -> None:
    t = at({"cities": {"Marseille": {"posts": [0]}, "Wien": {"cubes": 1},
                       "Paris": {"cubes": 0, "demand": {"white": 1}}},
            "players": [{"hand": {"truck": 3}, "private": ["Paris"]}, {}]})
    event = t.submit(0, deliver("Marseille", "Paris", "orange", "truck:Paris", truck=2))[0]
    assert shown(CARGO_EMPIRE.event_view(event, SPECTATOR))["bonus_for"] == [
        "city_card", "perfect_upgrade"]
    assert shown(CARGO_EMPIRE.event_view(event, seat(0)))["bonus_for"] == [
        "destination", "perfect_upgrade"]


def test_a_position_may_not_give_a_seat_more_posts_than_the_game_has() -> None:
    three = {"Paris": {"posts": [0]}, "Wien": {"posts": [0]}, "Berlin": {"posts": [0]}}
    message = invalid({"cities": three, "players": [{"supply": 12}, {}]})
    assert "seat 0" in message
    at({"cities": {"Paris": {"posts": [0]}}, "players": [{"supply": 12}, {}]})


def test_tiebreak_counts_the_posts_actually_on_the_map() -> None:
    # Seat 0 shows 1 post and claims a small supply; seat 1 shows 2 posts. Equal VP.
    t = at({"cities": {"Paris": {"level": 2, "posts": [0, 1, 1]}}, "round": 3, "turn": 7,
            "players": [{"hand": {}, "supply": 0}, {"hand": {}}]})
    t.submit(1, Gather())
    s = t.state
    assert s.scores[0].total == s.scores[1].total and s.winners == [1]


def test_a_position_may_not_overflow_a_citys_post_spaces() -> None:
    # LV2 Paris: 4 posts + 3 demand spaces > 6 post spaces once the tile is removed.
    assert "post spaces" in invalid({"cities": {"Paris": {"level": 2, "posts": [0, 1, 0, 1]}}})
    # LV1 Paris: 2 posts + 2 LV1 + 3 LV2 demand spaces > 6.
    assert "post spaces" in invalid({"cities": {"Paris": {"posts": [0, 1]}}})
    # Valid ones still load: LV2 with 3 posts, LV1 with 1, LV3 with 6.
    t = at({"cities": {"Paris": {"level": 2, "posts": [0, 1, 0], "demand": {"brown": 1}},
                       "Wien": {"posts": [1]}, "Berlin": {"level": 3, "posts": [0] * 6}}})
    assert t.state.cities["Berlin"].posts == [0] * 6


def test_a_position_where_every_player_is_out_of_posts_is_refused() -> None:
    assert "out of posts" in invalid(
        {"players": [{"supply": 0, "hand": {}}, {"supply": 0, "hand": {}}]})


@pytest.mark.parametrize(("cards", "winners"), [(3, [0]), (2, [0, 1]), (1, [1])])
def test_tiebreak_on_equal_vp_and_posts_is_the_hand_size(cards: int, winners: list[int]) -> None:
    # Equal VP (no markers, no LV3, no goals) and one post each on the map; seat 1's last turn
    # is a gather from the deck: 2 cards. Seat 0 holds 3, 2 or 1 cards: more wins, equal shares.
    t = at({"cities": {"Paris": {"posts": [0]}, "Wien": {"posts": [1]}}, "round": 3, "turn": 7,
            "players": [{"hand": {"truck": cards}}, {"hand": {}}]})
    t.submit(1, Gather())
    s = t.state
    assert s.players[1].hand.total() == 2 and s.players[0].hand.total() == cards
    assert s.scores[0].total == s.scores[1].total
    assert s.winners == winners
