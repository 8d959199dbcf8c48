"""Deliveries: routes, payments, every rejection code, upgrades and development."""

from __future__ import annotations

from domain.cargo_empire import CARGO_EMPIRE
from domain.cargo_empire.board import BEST, LAND, PORTS
from domain.cargo_empire.commands import Gather, PlacePost
from domain.cargo_empire.legal import legal

from .support import at, deliver, rejects, types

ONE = {"players": [{"hand": {"truck": 8, "train": 4, "ship": 3}}]}


def test_the_map_has_every_route_length_and_a_long_land_route_between_ports() -> None:
    assert LAND["Lisboa"]["Napoli"] == 5 and BEST["Lisboa"]["Napoli"] == 1
    assert {"Lisboa", "Napoli"} <= PORTS
    assert LAND["Madrid"]["Paris"] == 1 and LAND["Lisboa"]["Paris"] == 2
    assert LAND["Lisboa"]["London"] == 3 and LAND["Lisboa"]["Hamburg"] == 4


def test_a_delivery_moves_the_cube_out_and_the_post_onto_the_demand_space() -> None:
    t = at({"cities": {"Madrid": {"posts": [0]}}})
    events = t.submit(0, deliver("Madrid", "Paris", "white", "truck:Paris", truck=0))
    assert types(events)[:1] == ["delivered"] and types(events)[-1] == "turn_ended"
    s = t.state
    assert s.cities["Madrid"].cubes == 1
    assert s.cities["Paris"].demand["white"] == 0
    assert s.cubes_delivered["white"] == 1
    assert s.players[0].markers["truck"] == 1
    assert s.players[0].hand.total() == 15 - 1 + 1  # one card paid, one drawn
    assert s.players[0].supply == CARGO_EMPIRE.export_position(s).players[0].supply
    assert s.current() == 1


def test_the_overpay_example_from_the_rules_text() -> None:
    # Madrid–Paris–... : Lisboa to Barcelona is 2 land steps (via Madrid); Truck + Train overpays.
    t = at({"cities": {"Lisboa": {"posts": [0]}}})
    error = rejects(
        t, 0, deliver("Lisboa", "Barcelona", "brown", "truck:Madrid", "train:Barcelona"),
        "rule.overpaid",
    )
    assert "fewer" in error.message
    rejects(
        t, 0, deliver("Lisboa", "Barcelona", "brown", "train:Madrid", "train:Barcelona"),
        "rule.overpaid",
    )
    t.submit(0, deliver("Lisboa", "Barcelona", "brown", "train:Barcelona"))


def test_two_trucks_for_two_steps_do_not_overpay() -> None:
    t = at({"cities": {"Lisboa": {"posts": [0]}}})
    t.submit(0, deliver("Lisboa", "Barcelona", "brown", "truck:Madrid", "truck:Barcelona"))
    assert t.state.cities["Barcelona"].demand["brown"] == 0
    assert t.state.players[0].markers["truck"] == 2


def test_sea_exception_allows_the_shortest_land_route_when_a_sea_route_is_shorter() -> None:
    # Lisboa → Napoli: one Ship step by sea, five steps by land. The land route is allowed.
    land = ("truck:Madrid", "truck:Barcelona", "truck:Marseille", "truck:Milano", "truck:Napoli")
    t = at({"cities": {"Lisboa": {"posts": [0]}}})
    t.submit(0, deliver("Lisboa", "Napoli", "brown", *land))
    assert t.state.cities["Napoli"].demand["brown"] == 0
    # … and so is the sea route.
    t = at({"cities": {"Lisboa": {"posts": [0]}}})
    t.submit(0, deliver("Lisboa", "Napoli", "brown", "ship:Napoli", ship=0))
    assert t.state.players[0].markers["ship"] == 2


def test_sea_exception_only_admits_a_shortest_land_route() -> None:
    t = at({"cities": {"Lisboa": {"posts": [0]}}})
    detour = ("truck:Madrid", "truck:Barcelona", "truck:Marseille", "truck:Paris",
              "truck:Marseille", "truck:Milano", "truck:Napoli")
    rejects(t, 0, deliver("Lisboa", "Napoli", "brown", *detour), "rule.sea_exception_not_met")


def test_a_route_must_be_shortest() -> None:
    t = at({"cities": {"Madrid": {"posts": [0]}}})
    rejects(
        t, 0, deliver("Madrid", "Paris", "white", "truck:Barcelona", "truck:Marseille",
                      "truck:Paris"),
        "rule.route_not_shortest",
    )


def test_a_mixed_land_and_sea_route_gets_no_exception() -> None:
    # Lisboa → Napoli by Truck to Madrid, Train to Marseille, Ship to Napoli: 4 steps, not 1.
    t = at({"cities": {"Lisboa": {"posts": [0]}}})
    rejects(
        t, 0, deliver("Lisboa", "Napoli", "brown", "truck:Madrid", "truck:Barcelona",
                      "ship:Napoli"),
        "rule.route_not_shortest",
    )


def test_wrong_card_for_a_step() -> None:
    t = at({"cities": {"Lisboa": {"posts": [0]}}})
    rejects(t, 0, deliver("Lisboa", "Barcelona", "brown", "truck:Barcelona"),
            "rule.wrong_card_for_step")
    rejects(t, 0, deliver("Lisboa", "Milano", "brown", "ship:Milano"), "rule.wrong_card_for_step")
    rejects(t, 0, deliver("Lisboa", "Napoli", "brown", "train:Napoli"),
            "rule.wrong_card_for_step")


def test_not_your_post_no_such_cube_and_no_free_demand_space() -> None:
    t = at({"cities": {"Lisboa": {"posts": [1]}, "Madrid": {"posts": [0]},
                       "Paris": {"demand": {"white": 1}}, "Wien": {"cubes": 1},
                       "Marseille": {"posts": [0], "cubes": 0}}})
    rejects(t, 0, deliver("Lisboa", "Barcelona", "brown", "train:Barcelona"),
            "rule.not_your_post")
    rejects(t, 0, deliver("Madrid", "Paris", "brown", "truck:Paris"), "rule.no_such_cube")
    rejects(t, 0, deliver("Marseille", "Paris", "orange", "truck:Paris"), "rule.no_such_cube")
    rejects(t, 0, deliver("Madrid", "Paris", "white", "truck:Paris"),
            "rule.no_free_demand_space")
    rejects(t, 0, deliver("Madrid", "Madrid", "white", "truck:Paris"), "rule.same_city")
    rejects(t, 0, deliver("Madrid", "Rome", "white", "truck:Paris"), "rule.no_such_city")


def test_other_rejections() -> None:
    t = at({"cities": {"Madrid": {"posts": [0]}},
            "players": [{"hand": {"truck": 0, "train": 1}}, {}]})
    rejects(t, 0, deliver("Madrid", "Paris", "white", "truck:Paris"), "rule.cards_not_in_hand")
    rejects(t, 0, deliver("Madrid", "Paris", "white"), "rule.route_incomplete")
    rejects(t, 0, deliver("Madrid", "Paris", "white", "train:Barcelona"),
            "rule.route_incomplete")
    rejects(t, 0, deliver("Madrid", "Paris", "white", "train:Paris", truck=1),
            "rule.bonus_vehicle_not_moved")
    rejects(t, 0, deliver("Madrid", "Paris", "white", "train:Paris", train=1),
            "rule.bonus_total")
    rejects(t, 1, Gather(), "rule.not_your_turn")
    rejects(t, 0, PlacePost("Wien"), "rule.wrong_phase")
    rejects(t, 0, Gather(7), "rule.no_such_market_card")
    broke = [{"supply": 0, "hand": {"truck": 2}}, {}]
    t2 = at({"cities": {"Madrid": {"posts": [0]}}, "players": broke})
    rejects(t2, 0, deliver("Madrid", "Paris", "white", "truck:Paris"), "rule.no_posts_left")


def test_bonus_moves_for_public_and_private_cities_split_among_moved_vehicles() -> None:
    t = at({"cities": {"Lisboa": {"posts": [0]}}, "public": ["Lisboa"],
            "players": [{"hand": {"truck": 3, "train": 3}, "private": ["Napoli"]}, {}]})
    route = ("truck:Madrid", "truck:Barcelona", "truck:Marseille", "train:Napoli")
    rejects(t, 0, deliver("Lisboa", "Napoli", "brown", *route, ship=2),
            "rule.bonus_vehicle_not_moved")
    rejects(t, 0, deliver("Lisboa", "Napoli", "brown", *route, truck=1), "rule.bonus_total")
    events = t.submit(0, deliver("Lisboa", "Napoli", "brown", *route, truck=1, train=1))
    assert events[0].bonus_for == ["origin", "destination"]  # type: ignore[attr-defined]
    assert t.state.players[0].markers == {"truck": 4, "train": 2, "ship": 0}
    splits = {(c.bonus.truck, c.bonus.train) for c in legal(at({
        "cities": {"Lisboa": {"posts": [0]}}, "public": ["Lisboa"],
        "players": [{"hand": {"truck": 3, "train": 3}, "private": ["Napoli"]}, {}]}).state, 0)
        if getattr(c, "route", None) == list(events[0].route)}  # type: ignore[attr-defined]
    assert splits == {(0, 2), (1, 1), (2, 0)}


def test_perfect_upgrade_gives_a_bonus_move_and_flips_to_lv2() -> None:
    t = at({"cities": {"Marseille": {"posts": [0]},
                       "Paris": {"cubes": 0, "demand": {"white": 1}}, "Wien": {"cubes": 1}}})
    rejects(t, 0, deliver("Marseille", "Paris", "orange", "truck:Paris"), "rule.bonus_total")
    events = t.submit(0, deliver("Marseille", "Paris", "orange", "truck:Paris", truck=1))
    assert types(events)[:2] == ["delivered", "city_upgraded"]
    up = events[1]
    assert up.perfect and up.level == 2 and up.moved == [1, 0]  # type: ignore[attr-defined]
    paris = t.state.cities["Paris"]
    assert paris.level == 2 and paris.cubes == 3 and paris.posts == [1, 0]
    assert paris.demand == {"brown": None, "white": None, "orange": None}
    assert t.state.players[0].markers["truck"] == 2


def test_lv1_to_lv2_to_lv3_moves_posts_and_removes_the_tile_with_its_cargo() -> None:
    t = at({"players": [{"hand": {"truck": 8, "train": 4}}],
            "cities": {"Lisboa": {"posts": [0]}, "Madrid": {"posts": [0]},
                       "Marseille": {"posts": [0]}, "Paris": {"demand": {"white": 0}},
                       "Wien": {"cubes": 1}}})
    ev1 = t.submit(0, deliver("Marseille", "Paris", "orange", "truck:Paris"))
    assert ev1[1].level == 2 and not ev1[1].perfect  # type: ignore[attr-defined]
    assert t.state.cities["Paris"].posts == [0, 0]
    t.submit(0, deliver("Lisboa", "Paris", "brown", "train:Paris"))
    t.submit(0, deliver("Madrid", "Paris", "white", "truck:Paris"))
    ev4 = t.submit(0, deliver("Marseille", "Paris", "orange", "truck:Paris"))
    up = ev4[1]
    assert up.level == 3 and up.removed_cubes == 3 and up.moved == [0, 0, 0]  # type: ignore[attr-defined]
    paris = t.state.cities["Paris"]
    assert paris.level == 3 and paris.cubes == 0 and paris.demand == {} and len(paris.posts) == 5
    assert t.state.cubes_removed["grey"] == 3
    assert legal(t.state, 0) and all(getattr(c, "destination", None) != "Paris"
                                      for c in legal(t.state, 0))


def test_legal_commands_include_gather_and_are_all_accepted() -> None:
    t = at({"cities": {"Lisboa": {"posts": [0]}, "Madrid": {"posts": [0]}},
            "market": ["truck", "ship"]})
    options = legal(t.state, 0)
    assert Gather(None) in options and Gather(0) in options and Gather(1) in options
    assert legal(t.state, 1) == []
    for c in options:
        CARGO_EMPIRE.decide(t.state, 0, c, t.rng())


# --- review fixes ------------------------------------------------------------------------------
MADRID_WIEN = {"cities": {"Madrid": {"posts": [0]}, "Wien": {"level": 2}}}
OVERPAID_ACROSS_SEA = ("train:Lisboa", "ship:Marseille", "truck:Milano", "truck:Wien")


def test_overpay_is_judged_over_the_whole_route_not_per_land_stretch() -> None:
    # A single-step Train before the Ship and two Trucks after it: Truck + Ship + Train (3 of
    # those 4 cards) pays for the same path, so the payment overpays.
    t = at(MADRID_WIEN)
    rejects(t, 0, deliver("Madrid", "Wien", "white", *OVERPAID_ACROSS_SEA), "rule.overpaid")
    t.submit(0, deliver("Madrid", "Wien", "white", "truck:Lisboa", "ship:Marseille", "train:Wien"))
    assert t.state.cities["Wien"].demand["white"] == 0


def test_legal_offers_no_route_overpaid_across_a_sea_leg() -> None:
    t = at(MADRID_WIEN)
    routes = [list(c.route) for c in legal(t.state, 0) if getattr(c, "destination", "") == "Wien"]
    offered = {tuple((leg.card, leg.to) for leg in r) for r in routes}
    assert tuple(tuple(leg.split(":")) for leg in OVERPAID_ACROSS_SEA) not in offered
    assert (("truck", "Lisboa"), ("ship", "Marseille"), ("train", "Wien")) in offered
