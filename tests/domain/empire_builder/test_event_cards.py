"""Event cards (``data/events.json``) on hand-made positions: each kind drawn and resolved, the
player drawing again; floods block rebuilding until the end of the drawer's next turn; a lost
load blocks only its chooser; strikes and snow act exactly in their area."""

from __future__ import annotations

import itertools
from typing import Any

from domain.empire_builder import EMPIRE_BUILDER
from domain.empire_builder.board import CARDS, LOADS, MAP, SUPPLIES, edge_key
from domain.empire_builder.cards import EVENTS, event_card
from domain.empire_builder.commands import LoseLoad, Move, PickUp
from domain.kernel import seat

from .support import at, card_with, centre, play, rejects, ring, types

BY_NAME = {e.name: e for e in EVENTS}
FLOOD = BY_NAME["Mississippi flood"]
DERAIL = BY_NAME["Derailment near Chicago and Pittsburgh"]
LOST = BY_NAME["Lost load near Kansas City and St. Louis"]
STRIKE = BY_NAME["Dock strike in the Northeast"]
RAIL = BY_NAME["Rail workers strike on the drawing player's track"]
TAX = BY_NAME["Excess profit tax"]
SNOW = BY_NAME["Blizzard in the Rockies"]
ANY_AREA = frozenset().union(*(e.area for e in EVENTS))


def drawing(card: int, players: list[dict[str, Any]], **extra: Any) -> Any:
    """A table where seat 0's next draw is event card ``card`` (the only card in the deck; the
    discard pile then becomes the deck)."""
    return at({"players": players, "deck": [card], "discard": list(range(60, 70)), **extra})


def trade_in(t: Any) -> list[str]:
    return types(play(t, 0, {"type": "trade_in"}))


def test_drawing_an_event_resolves_it_and_the_player_draws_again() -> None:
    t = drawing(TAX.id, [{"money": 60}, {"money": 30}])
    events = play(t, 0, {"type": "trade_in"})
    assert types(events) == ["traded_in", "event_card_drawn", "discard_reshuffled", "card_drawn",
                             "card_drawn", "card_drawn", "turn_ended"]
    assert all(0 <= c < len(CARDS) for c in t.state.players[0].cards)  # a full hand of demands
    assert TAX.id in t.state.discard or TAX.id in t.state.deck


def test_tax_by_brackets() -> None:
    t = drawing(TAX.id, [{"money": 49}, {"money": 50}, {"money": 150}, {"money": 260}])
    trade_in(t)
    assert [p.money for p in t.state.players] == [49, 40, 130, 235]
    assert t.state.effects == []  # a tax acts once


def river_edge() -> tuple[int, int, int]:
    """(n, a, b): a–b crosses the Mississippi, n–a is plain; none is a city or in any area."""
    for key in sorted(FLOOD.edges):
        a, b = divmod(key, 4096)
        for x, y in ((a, b), (b, a)):
            for n in sorted(MAP.adjacent[x]):
                if (MAP.adjacent[x][n] == 0 and all(MAP.city_at[m] is None for m in (n, x, y))
                        and not {n, x, y} & ANY_AREA):
                    return n, x, y
    raise LookupError


def test_a_flood_erases_track_across_its_river_and_blocks_rebuilding_until_the_drawers_next_turn_ends() -> None:  # noqa: E501
    n, a, b = river_edge()
    t = drawing(FLOOD.id, [{}, {"track": [[n, a, b]], "money": 60}])
    events = play(t, 0, {"type": "trade_in"})
    flood = EMPIRE_BUILDER.to_builtins(events[1])
    assert flood["kind"] == "flood" and flood["erased"] == [[min(a, b), max(a, b), 1]]
    assert edge_key(a, b) not in t.state.track and t.state.track[edge_key(n, a)] == 1
    view = EMPIRE_BUILDER.view(t.state, seat(1))
    assert view.effects[0].river == "Mississippi" and view.effects[0].drawer == 0
    # seat 1's turn: no rebuilding across the river
    rejects(t, 1, {"type": "build", "path": [a, b]}, "rule.flooded")
    assert not [c for c in EMPIRE_BUILDER.legal(t.state, 1)
                if getattr(c, "path", None) == [a, b]]
    play(t, 1, {"type": "end_turn"})
    # the drawer's next turn: still flooded (seat 1 surveys it)
    survey = EMPIRE_BUILDER.ask(t.state, seat(1),
                                EMPIRE_BUILDER.decode_query({"type": "survey", "path": [a, b]}))
    assert survey["problem"]["code"] == "rule.flooded"
    play(t, 0, {"type": "end_turn"})
    assert t.state.effects == []
    # over: seat 1 rebuilds
    play(t, 1, {"type": "build", "path": [a, b]})
    assert t.state.track[edge_key(a, b)] == 1


def test_a_derailment_costs_trains_inside_a_turn_and_a_load() -> None:
    inside = centre("Chicago")
    outside = centre("Los Angeles")
    t = drawing(DERAIL.id, [{}, {"train": inside, "loads": ["Coal", "Steel"]},
                            {"train": outside, "loads": ["Coal"]},
                            {"train": inside, "loads": ["Oil", "Oil"]}])
    events = play(t, 0, {"type": "trade_in"})
    derail = EMPIRE_BUILDER.to_builtins(events[1])
    # seat 3's loads are alike: one goes at once; seat 1's owner chooses which it loses
    assert derail["derailed"] == [{"seat": 1, "load": None}, {"seat": 3, "load": "Oil"}]
    assert derail["choosers"] == [1] and t.state.pending == [1]
    assert t.state.players[3].loads == ["Oil"] and t.state.players[2].loads == ["Coal"]
    # seat 1's turn is lost at once: seat 2 is to act, seat 1 may only choose its lost load
    assert types(events)[-2:] == ["turn_ended", "turn_lost"]
    assert t.state.current() == 2 and t.state.players[1].skip == 0
    assert EMPIRE_BUILDER.to_act(t.state) == [1, 2]
    assert EMPIRE_BUILDER.legal(t.state, 1) == [LoseLoad("Coal"), LoseLoad("Steel")]
    play(t, 1, {"type": "lose_load", "load": "Steel"})
    assert t.state.players[1].loads == ["Coal"] and t.state.pending == []
    assert types(play(t, 2, {"type": "end_turn"}))[-1] == "turn_lost"  # seat 3's
    play(t, 0, {"type": "end_turn"})
    assert t.state.current() == 1  # only one turn lost


def test_a_lost_load_is_chosen_by_its_owner_and_blocks_only_the_chooser() -> None:
    # seat 0 delivers (its turn goes on) and draws the lost load card; seat 2's train is inside
    cid, i = next(card_with(d.city, d.load) for card in CARDS for d in card
                  if MAP.cities[d.city].mileposts[0] not in ANY_AREA
                  and MAP.cities[d.city].size != "major")
    demand = CARDS[cid][i]
    held = {cid, 100, 101, *range(3, 12)}
    t = at({"players": [{"cards": [cid, 100, 101], "loads": [demand.load],
                         "train": centre(demand.city)},
                        {"train": centre("Los Angeles")},
                        {"train": centre("Kansas City"), "loads": ["Coal", "Steel"]},
                        {"train": centre("St. Louis"), "loads": ["Oil", "Oil"]}],
            "deck": [LOST.id], "discard": [c for c in range(40, 60) if c not in held]})
    events = play(t, 0, {"type": "deliver", "card": 0, "demand": i})
    assert types(events)[:2] == ["load_delivered", "event_card_drawn"]
    drawn = EMPIRE_BUILDER.to_builtins(events[1])
    assert drawn["choosers"] == [2] and drawn["lost"] == [{"seat": 3, "load": "Oil"}]
    assert t.state.players[3].loads == ["Oil"]  # no choice to make: one Oil lost
    assert t.state.pending == [2] and EMPIRE_BUILDER.to_act(t.state) == [0, 2]
    assert EMPIRE_BUILDER.legal(t.state, 2) == [LoseLoad("Coal"), LoseLoad("Steel")]
    # the drawer plays on; the next player too
    play(t, 0, {"type": "end_turn"})
    play(t, 1, {"type": "end_turn"})
    # seat 2 must choose first
    rejects(t, 2, {"type": "end_turn"}, "rule.choose_lost_load")
    rejects(t, 2, {"type": "lose_load", "load": "Oil"}, "rule.load_not_carried")
    rejects(t, 1, {"type": "lose_load", "load": "Coal"}, "rule.no_lost_load")
    play(t, 2, {"type": "lose_load", "load": "Steel"})
    assert t.state.players[2].loads == ["Coal"] and t.state.pending == []
    play(t, 2, {"type": "end_turn"})


def test_the_chooser_may_choose_out_of_turn() -> None:
    t = at({"players": [{}, {"train": centre("Kansas City"), "loads": ["Coal", "Steel"]}],
            "pending": [1]})
    assert EMPIRE_BUILDER.to_act(t.state) == [0, 1]
    play(t, 1, {"type": "lose_load", "load": "Coal"})
    assert EMPIRE_BUILDER.to_act(t.state) == [0]


def supplied(city: str) -> str:
    return next(x for x in SUPPLIES[city] if LOADS[x].chips)


def test_a_strike_stops_pick_ups_and_deliveries_exactly_in_its_area() -> None:
    effect = {"card": STRIKE.id, "drawer": 1, "turns_left": 2}
    for name, city in sorted(MAP.cities.items()):
        if not SUPPLIES[name]:
            continue
        t = at({"players": [{"train": city.mileposts[0]}, {}], "effects": [effect]})
        load = supplied(name)
        if city.mileposts[0] in STRIKE.area:
            rejects(t, 0, PickUp(load), "rule.strike")
            assert PickUp(load) not in EMPIRE_BUILDER.legal(t.state, 0)
        else:
            play(t, 0, {"type": "pick_up", "load": load})
    assert "New York" in {MAP.city_at[m] for m in STRIKE.area}


def test_a_strike_stops_deliveries_in_its_area() -> None:
    cid, i = next((c, j) for c in range(6, 100) for j, d in enumerate(CARDS[c])
                  if MAP.cities[d.city].mileposts[0] in STRIKE.area)
    demand = CARDS[cid][i]
    pos = {"players": [{"cards": [cid, 100, 101], "loads": [demand.load],
                        "train": centre(demand.city)}, {}]}
    t = at({**pos, "effects": [{"card": STRIKE.id, "drawer": 1, "turns_left": 1}]})
    rejects(t, 0, {"type": "deliver", "card": 0, "demand": i}, "rule.strike")
    t = at(pos)
    play(t, 0, {"type": "deliver", "card": 0, "demand": i})


def test_a_rail_strike_stops_trains_on_the_drawers_track_and_its_building() -> None:
    start = ring("Dallas")[0]
    nxt = next(n for n in sorted(MAP.adjacent[start]) if MAP.city_at[n] is None)
    further = next(n for n in sorted(MAP.adjacent[nxt]) if n != start and MAP.city_at[n] is None)
    t = drawing(RAIL.id, [{"track": [[start, nxt]], "train": start}, {"train": start}])
    assert "event_card_drawn" in trade_in(t)
    rejects(t, 1, Move([nxt]), "rule.strike")
    play(t, 1, {"type": "end_turn"})
    rejects(t, 0, Move([nxt]), "rule.strike")  # the drawer's own train too
    rejects(t, 0, {"type": "build", "path": [nxt, further]}, "rule.strike")
    play(t, 0, {"type": "end_turn"})
    play(t, 1, {"type": "move", "path": [nxt]})  # over


def test_snow_halves_speed_and_stops_building_in_its_area() -> None:
    effect = {"card": SNOW.id, "drawer": 1, "turns_left": 2}
    a = next(m for m in sorted(SNOW.area) if MAP.city_at[m] is None
             and any(n in SNOW.area and MAP.city_at[n] is None for n in MAP.adjacent[m]))
    b = next(n for n in sorted(MAP.adjacent[a]) if n in SNOW.area and MAP.city_at[n] is None)
    c = next(n for n in sorted(MAP.adjacent[b]) if n != a and MAP.city_at[n] is None)
    t = at({"players": [{"track": [[a, b, c]], "train": a}, {}], "effects": [effect]})
    rejects(t, 0, {"type": "build", "path": [a, next(n for n in sorted(MAP.adjacent[a])
                                                     if n not in (b,))]}, "rule.snow")
    assert t.state.players[0].money == 60
    # nine moves: four steps in snow, the fifth refused
    for k in range(4):
        play(t, 0, {"type": "move", "path": [b if k % 2 == 0 else a]})
    assert t.state.turn.moved == 8 and t.state.players[0].train == a
    rejects(t, 0, Move([b]), "rule.no_moves_left")
    # without the snow the same steps take one move each
    t = at({"players": [{"track": [[a, b, c]], "train": a}, {}]})
    play(t, 0, {"type": "move", "path": [b, a, b, a, b, a, b, a, b]})


def test_effects_in_the_view_and_the_position_round_trip() -> None:
    effect = {"card": SNOW.id, "drawer": 1, "turns_left": 2}
    t = at({"players": [{}, {}], "effects": [effect]})
    view = EMPIRE_BUILDER.view(t.state, seat(0))
    shown = view.effects[0]
    assert shown.kind == "snow" and shown.turns_left == 2
    assert shown.area == sorted(SNOW.area) and shown.cities == list(SNOW.cities)
    pos = EMPIRE_BUILDER.export_position(t.state)
    assert EMPIRE_BUILDER.to_builtins(pos)["effects"] == [effect]
    assert event_card(SNOW.id) == SNOW


def test_the_planner_goes_around_a_flood() -> None:
    effect = {"card": FLOOD.id, "drawer": 1, "turns_left": 2}
    t = at({"players": [{"money": 500}, {}], "effects": [effect]})
    query = EMPIRE_BUILDER.decode_query({"type": "plan", "to": "St. Louis"})
    answer = EMPIRE_BUILDER.ask(t.state, seat(0), query)
    path = answer["path"]
    assert isinstance(path, list)
    assert not {edge_key(x, y) for x, y in itertools.pairwise(path)} & FLOOD.edges
    assert answer["problem"] is None or answer["problem"]["code"] == "rule.turn_limit"
    # without the flood the cheapest way crosses the river
    dry = at({"players": [{"money": 500}, {}]})
    path = EMPIRE_BUILDER.ask(dry.state, seat(0), query)["path"]
    assert {edge_key(x, y) for x, y in itertools.pairwise(path)} & FLOOD.edges


def test_hostile_positions_with_events_are_refused() -> None:
    from domain.kernel import CommandError

    bad: list[dict[str, Any]] = [
        {"effects": [{"card": 5, "drawer": 0, "turns_left": 1}]},  # a demand card
        {"effects": [{"card": FLOOD.id, "drawer": 9, "turns_left": 1}]},
        {"effects": [{"card": FLOOD.id, "drawer": 0, "turns_left": 3}]},
        {"effects": [{"card": 10_000, "drawer": 0, "turns_left": 1}]},
        {"pending": [1]},  # seat 1's train carries nothing
        {"pending": [5]},
        # seat 1 would choose two loads but carries one
        {"players": [{}, {"train": centre("Kansas City"), "loads": ["Oil"]}], "pending": [1, 1]},
        {"deck": [FLOOD.id, FLOOD.id]},
        {"deck": [10_000]},
    ]
    for extra in bad:
        try:
            at({"players": [{}, {}], **extra})
        except CommandError as error:
            assert error.code in ("position.invalid", "position.out_of_range"), extra
        else:
            raise AssertionError(f"accepted {extra}")
    hand = {"players": [{"cards": [FLOOD.id, 1, 2]}, {}]}
    try:
        at(hand)
    except CommandError as error:
        assert error.code == "position.invalid"
    else:
        raise AssertionError("an event card in a hand was accepted")


def not_frozen(t: Any) -> None:
    """Every seat the game waits for has something to send, and no seat is waited for to choose
    more loads than its train carries (the position validator's own rule)."""
    state = t.state
    for s in EMPIRE_BUILDER.to_act(state):
        assert EMPIRE_BUILDER.legal(state, s), f"seat {s} is waited for with nothing legal"
    for s in set(state.pending):
        assert state.pending.count(s) <= len(state.players[s].loads)


def test_a_derailment_of_a_train_whose_owner_is_choosing_a_lost_load_freezes_nothing() -> None:
    # seat 1 must still choose a lost load; its one load goes in a derailment meanwhile
    t = drawing(DERAIL.id, [{}, {"train": centre("Chicago"), "loads": ["Coal"]}],
                pending=[1])
    trade_in(t)
    assert t.state.players[1].loads in ([], ["Coal"])
    not_frozen(t)
    for _ in range(4):  # the game goes on: whoever is waited for acts
        s = EMPIRE_BUILDER.to_act(t.state)[-1]
        t.submit(s, EMPIRE_BUILDER.legal(t.state, s)[-1])
        not_frozen(t)
    assert t.state.pending == []


def test_the_same_lost_load_card_after_a_reshuffle_takes_a_second_load_or_frees_the_chooser() -> None:  # noqa: E501
    # seat 1 is choosing and carries Oil only: the card drawn again takes it at once
    t = drawing(LOST.id, [{}, {"train": centre("Kansas City"), "loads": ["Oil"]}], pending=[1])
    trade_in(t)
    assert t.state.players[1].loads == [] and t.state.pending == []
    not_frozen(t)
    play(t, 1, {"type": "end_turn"})
    # seat 1 is choosing and carries two kinds: hit again, it chooses twice
    t = drawing(LOST.id, [{}, {"train": centre("Kansas City"), "loads": ["Oil", "Coal"]}],
                pending=[1])
    trade_in(t)
    assert t.state.pending == [1, 1]
    not_frozen(t)
    play(t, 1, {"type": "lose_load", "load": "Coal"})
    assert t.state.pending == [1]
    play(t, 1, {"type": "lose_load", "load": "Oil"})
    assert t.state.pending == [] and t.state.players[1].loads == []
    not_frozen(t)


def test_pending_is_a_seat_once_per_load_to_choose_in_the_position_form() -> None:
    t = at({"players": [{}, {"train": centre("Kansas City"), "loads": ["Oil", "Coal"]}],
            "pending": [1, 1]})
    assert t.state.pending == [1, 1]
    assert EMPIRE_BUILDER.export_position(t.state).pending == [1, 1]
