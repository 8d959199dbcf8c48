"""Moving, fees, loads, deliveries, upgrades, trade-ins and the end: the manual's "Moving",
"Building after a move", "Loading", "Unloading", "Dumping", "Upgrading" and the terms."""

from __future__ import annotations

import itertools
from typing import Any

from domain.empire_builder import EMPIRE_BUILDER
from domain.empire_builder.board import CARDS, LOADS, MAP
from domain.empire_builder.commands import Deliver, Move, PickUp, Upgrade
from domain.kernel import CommandError

from .support import at, card_with, centre, play, rejects, ring, route, track_to, types


def line(length: int) -> list[int]:
    """A track from a Chicago ring milepost at least ``length`` sections long."""
    start = next(m for m in ring("Chicago") if MAP.adjacent[m])
    far = next(m for m in ring("Denver" if "Denver" in MAP.majors else "Dallas") if MAP.adjacent[m])
    path = route(start, far)
    assert len(path) > length
    return path[: length + 1]


def mover(track: list[int], **player: Any) -> Any:
    return at({"players": [{"train": centre("Chicago"), "track": [track], **player}, {}]})


def test_a_train_moves_nine_mileposts_a_turn() -> None:
    track = line(14)
    t = mover(track)
    error = rejects(t, 0, Move(track[:10]), "rule.no_moves_left")
    assert error.details["step"] == 10
    play(t, 0, {"type": "move", "path": track[:5]})
    play(t, 0, {"type": "move", "path": track[5:9]})
    assert t.state.players[0].train == track[8]
    rejects(t, 0, Move([track[9]]), "rule.no_moves_left")
    assert not [c for c in EMPIRE_BUILDER.legal(t.state, 0) if isinstance(c, Move)]


def test_twelve_after_the_speed_upgrade() -> None:
    track = line(14)
    t = mover(track, speed=12)
    play(t, 0, {"type": "move", "path": track[:12]})
    rejects(t, 0, Move([track[12]]), "rule.no_moves_left")


def test_the_first_step_out_of_the_centre_crosses_the_city_free() -> None:
    track = line(3)
    t = mover(track)
    other = next(m for m in ring("Chicago") if m != track[0])
    play(t, 0, {"type": "move", "path": [other, centre("Chicago"), track[0], track[1]]})
    assert t.state.players[0].money == 60


def test_moving_needs_track_between_neighbours() -> None:
    track = line(3)
    t = mover(track)
    play(t, 0, {"type": "move", "path": [track[0]]})
    off = next(n for n in sorted(MAP.adjacent[track[0]]) if n != track[1])
    error = rejects(t, 0, Move([off]), "rule.no_track")
    assert error.details["step"] == 1
    far = next(m for m in range(MAP.size) if m not in MAP.adjacent[track[0]]
               and m not in MAP.inside[track[0]])
    rejects(t, 0, Move([track[1], far]), "rule.not_adjacent")
    rejects(t, 0, Move([MAP.size]), "rule.no_such_milepost")
    rejects(t, 0, Move([]), "rule.empty_path")


def test_an_opponents_track_costs_4_million_once_per_opponent_per_turn() -> None:
    track = line(8)
    t = at({"players": [{"train": centre("Chicago"), "track": [track[:3]]},
                        {"track": [track[2:5]]}, {"track": [track[4:8]]}]})
    events = play(t, 0, {"type": "move", "path": track[:4]})
    assert [f.to for f in events[0].fees] == [1]
    play(t, 0, {"type": "move", "path": track[4:5]})
    play(t, 0, {"type": "move", "path": track[5:7]})
    play(t, 0, {"type": "move", "path": [track[5], track[4]]})
    money = [p.money for p in t.state.players]
    assert money == [60 - 8, 64, 64]
    play(t, 0, {"type": "end_turn"})
    assert t.state.turn.paid == []


def test_a_fee_needs_the_money() -> None:
    track = line(5)
    t = at({"players": [{"train": centre("Chicago"), "track": [track[:3]], "money": 3},
                        {"track": [track[2:5]]}]})
    error = rejects(t, 0, Move(track[:4]), "rule.no_money")
    assert error.details["step"] == 4


def test_any_number_of_trains_share_a_milepost() -> None:
    track = line(3)
    t = at({"players": [{"train": centre("Chicago"), "track": [track]},
                        {"train": track[1]}]})
    play(t, 0, {"type": "move", "path": track[:2]})
    assert t.state.players[0].train == t.state.players[1].train


def test_building_ends_movement_and_loading() -> None:
    track = line(5)
    t = mover(track[:3])
    play(t, 0, {"type": "move", "path": track[:1]})
    play(t, 0, {"type": "build", "path": track[2:4]})
    rejects(t, 0, Move([track[1]]), "rule.after_building")
    rejects(t, 0, PickUp("Steel"), "rule.after_building")
    assert not [c for c in EMPIRE_BUILDER.legal(t.state, 0) if isinstance(c, (Move, PickUp))]


def test_pick_up_at_a_supply_city_one_load_at_a_time_up_to_capacity() -> None:
    t = mover(line(2))
    play(t, 0, {"type": "pick_up", "load": "Steel"})
    play(t, 0, {"type": "pick_up", "load": "Steel"})
    assert t.state.players[0].loads == ["Steel", "Steel"]
    assert t.state.turn.moved == 0
    rejects(t, 0, PickUp("Machinery"), "rule.train_full")
    t = mover(line(2), capacity=3)
    for load in ("Steel", "Machinery", "Steel"):
        play(t, 0, {"type": "pick_up", "load": load})
    rejects(t, 0, PickUp("Steel"), "rule.train_full")
    t = mover(line(2))
    rejects(t, 0, PickUp("Coal"), "rule.not_supplied_here")
    rejects(t, 0, PickUp("Unobtainium"), "rule.no_such_load")


def test_no_pick_up_while_every_chip_is_on_a_train() -> None:
    chips = LOADS["Steel"].chips
    t = at({"players": [{"train": centre("Chicago"), "loads": ["Steel"] * (chips - 2)},
                        {"train": centre("Dallas"), "loads": ["Steel", "Steel"], "capacity": 3}]})
    rejects(t, 0, PickUp("Steel"), "rule.no_chips")
    assert PickUp("Steel") not in EMPIRE_BUILDER.legal(t.state, 0)
    play(t, 0, {"type": "dump", "load": "Steel"})
    play(t, 0, {"type": "pick_up", "load": "Steel"})


def test_deliver_fills_one_demand_and_the_card_is_replaced_at_once() -> None:
    cid, i = next((card_with(c.city, c.load)) for card in CARDS for c in card
                  if MAP.cities[c.city].size != "major")
    demand = CARDS[cid][i]
    t = at({"players": [{"cards": [cid, 100, 101], "loads": [demand.load],
                         "train": centre(demand.city)}, {}]})
    assert Deliver(0, i) in EMPIRE_BUILDER.legal(t.state, 0)
    events = play(t, 0, {"type": "deliver", "card": 0, "demand": i})
    assert types(events) == ["load_delivered", "card_drawn"]
    p = t.state.players[0]
    assert p.money == 60 + demand.payoff and p.loads == []
    assert p.cards[0] not in (cid, -1) and p.cards[1:] == [100, 101]
    assert cid in t.state.discard
    assert t.state.turn.moved == 0


def test_delivery_refusals() -> None:
    cid, i = 0, 0
    demand = CARDS[cid][i]
    elsewhere = next(n for n in sorted(MAP.cities) if n != demand.city)
    t = at({"players": [{"cards": [cid, 100, 101], "loads": [demand.load],
                         "train": centre(elsewhere)}, {}]})
    rejects(t, 0, Deliver(0, i), "rule.wrong_city")
    rejects(t, 0, Deliver(0, 3), "rule.no_such_demand")
    rejects(t, 0, Deliver(3, 0), "rule.no_such_demand")
    t = at({"players": [{"cards": [cid, 100, 101], "train": centre(demand.city)}, {}]})
    rejects(t, 0, Deliver(0, i), "rule.load_not_carried")


def test_dump_anywhere_for_free() -> None:
    t = at({"players": [{"train": track_to(ring("Dallas")[0])[0], "loads": ["Coal"]}, {}]})
    play(t, 0, {"type": "dump", "load": "Coal"})
    assert t.state.players[0].loads == [] and t.state.players[0].money == 60
    rejects(t, 0, {"type": "dump", "load": "Coal"}, "rule.load_not_carried")


def test_upgrades_cost_20_at_the_start_of_a_turn_either_or_both_over_time() -> None:
    t = mover(line(3))
    legal = EMPIRE_BUILDER.legal(t.state, 0)
    assert Upgrade("speed") in legal and Upgrade("capacity") in legal
    play(t, 0, {"type": "upgrade", "kind": "speed"})
    assert (t.state.players[0].speed, t.state.players[0].money) == (12, 40)
    rejects(t, 0, Upgrade("capacity"), "rule.not_start_of_turn")
    play(t, 0, {"type": "end_turn"})
    play(t, 1, {"type": "end_turn"})
    rejects(t, 0, Upgrade("speed"), "rule.already_upgraded")
    play(t, 0, {"type": "upgrade", "kind": "capacity"})
    assert t.state.players[0].capacity == 3
    t = mover(line(3))
    play(t, 0, {"type": "move", "path": line(3)[:1]})
    rejects(t, 0, Upgrade("speed"), "rule.not_start_of_turn")
    t = mover(line(3), money=19)
    rejects(t, 0, Upgrade("speed"), "rule.no_money")


def test_trading_in_all_three_cards_forfeits_the_turn() -> None:
    t = mover(line(3))
    events = play(t, 0, {"type": "trade_in"})
    assert types(events) == ["traded_in", "card_drawn", "card_drawn", "card_drawn", "turn_ended"]
    assert sorted(t.state.discard) == [0, 1, 2]
    assert not set(t.state.players[0].cards) & {0, 1, 2}
    assert EMPIRE_BUILDER.to_act(t.state) == [1]
    t = mover(line(3))
    play(t, 0, {"type": "move", "path": line(3)[:1]})
    rejects(t, 0, {"type": "trade_in"}, "rule.not_start_of_turn")


def _network(majors: list[str]) -> list[list[int]]:
    """Track joining the majors in the order given, ring milepost to ring milepost."""
    paths = []
    for a, b in itertools.pairwise(majors):
        start = next(m for m in ring(a) if MAP.adjacent[m])
        end = next(m for m in ring(b) if MAP.adjacent[m])
        paths.append(route(start, end))
    return paths


def _winner(money: int, majors: list[str], **options: Any) -> Any:
    t = at({"players": [{"money": money, "track": _network(majors), "train": centre("Chicago")},
                        {}], "options": options})
    play(t, 0, {"type": "end_turn"})
    return EMPIRE_BUILDER.outcome(t.state)


def test_win_with_the_money_and_five_majors_joined_at_the_end_of_a_turn() -> None:
    five = ["Seattle", "Chicago", "Toronto", "New York", "Atlanta"]
    won = _winner(250, five)
    assert won is not None and won.winners == [0] and won.details["reason"] == "won"
    assert _winner(249, five) is None
    assert _winner(250, five[:4]) is None
    four = _winner(100, five[:4], money_to_win=100, majors_to_win=4)
    assert four is not None and four.winners == [0]


def test_the_turn_limit_ends_a_bot_game_won_by_the_richest() -> None:
    t = at({"players": [{"money": 70}, {"money": 50}, {"money": 70}], "turn_number": 8,
            "options": {"turn_limit": 3}})
    play(t, 2, {"type": "end_turn"})
    out = EMPIRE_BUILDER.outcome(t.state)
    assert out is not None and out.winners == [0, 2] and out.details["reason"] == "turn_limit"
    rejects(t, 0, {"type": "end_turn"}, "rule.game_over")
    assert EMPIRE_BUILDER.legal(t.state, 0) == []


def test_the_turn_limit_ranks_by_cash_less_debt_like_the_win_check() -> None:
    # seat 2 has the most cash but owes the bank: seat 0 is the richest, and the scores say so
    t = at({"players": [{"money": 70}, {"money": 50}, {"money": 75, "debt": 10}],
            "turn_number": 8, "options": {"turn_limit": 3}})
    play(t, 2, {"type": "end_turn"})
    out = EMPIRE_BUILDER.outcome(t.state)
    assert out is not None and out.details["reason"] == "turn_limit"
    assert out.winners == [0] and out.scores == [70, 50, 65]


def test_no_position_once_the_game_is_over() -> None:
    t = at({"players": [{}, {}], "turn_number": 1, "options": {"turn_limit": 1}})
    play(t, 1, {"type": "end_turn"})
    try:
        EMPIRE_BUILDER.export_position(t.state)
    except CommandError as error:
        assert error.code == "position.unavailable"
    else:
        raise AssertionError("exported a finished game")


def test_a_network_resumes_across_a_major_city_for_train_and_builder() -> None:
    """Track into one side of a major city and out of the other: the train crosses the free
    zone, and building may resume from any of the city's mileposts."""
    sides = [m for m in ring("Chicago") if MAP.adjacent[m]]
    west, east = sides[0], sides[-1]
    into = track_to(west, tuple(MAP.cities["Chicago"].mileposts))
    out_of = [east, next(n for n in sorted(MAP.adjacent[east]))]
    t = at({"players": [{"train": into[0], "track": [into, out_of]}, {}]})
    play(t, 0, {"type": "move", "path": [west, centre("Chicago"), east, out_of[1]]})
    assert t.state.players[0].money == 60
    other = next(m for m in sides if m not in (west, east))
    play(t, 0, {"type": "build", "path": [other, min(MAP.adjacent[other])]})


def test_a_major_citys_free_zone_joins_the_track_reaching_its_different_mileposts() -> None:
    from domain.empire_builder.rules import connected_majors

    sides = [m for m in ring("Chicago") if MAP.adjacent[m]]
    dallas = next(m for m in ring("Dallas") if MAP.adjacent[m])
    toronto = next(m for m in ring("Toronto") if MAP.adjacent[m])
    south, north = route(dallas, sides[-1]), route(sides[0], toronto)
    assert south[-1] != north[0]
    t = at({"players": [{"track": [south, north]}, {}]})
    assert connected_majors(t.state, 0) == 3
    t = at({"players": [{"track": [south, north[1:]]}, {}]})
    assert connected_majors(t.state, 0) == 2
