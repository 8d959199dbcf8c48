"""The spec's 13 worked examples, as written (positions start empty, seat 0, construction)."""

from __future__ import annotations

from domain.curious_cargo import events as ev
from domain.curious_cargo.lines import layout
from domain.curious_cargo.rules import score, winners

from .support import at, docks, refused, send, state


def test_1_a_straight_pair_links_s3_and_a_blank_covers_it() -> None:
    t = at({"players": [{"hand": ["S2r1", "B2-1"]}, {}]})
    events = send(t, 0, type="play_tile", tile="S2r1", at="b3", rot=0)
    played = events[0]
    assert isinstance(played, ev.TilePlayed)
    assert played.squares == ["b3", "c3"] and played.level == 1 and played.connections == 1
    p = state(t).players[0]
    assert docks(p) == {"S3": "red"} and p.forklift == 1
    send(t, 0, type="play_tile", tile="B2-1", at="b3", rot=0)
    p = state(t).players[0]
    assert docks(p) == {} and p.forklift == 1
    assert layout(p.board).heights == {"b3": 2, "c3": 2}


def test_2_blocked_and_off_grid() -> None:
    t = at({"players": [{"hand": ["S2t1", "S2r2"]}, {}]})
    err = refused(t, 0, "rule.blocked_square", type="play_tile", tile="S2t1", at="c4", rot=0)
    assert err.details["square"] == "d4"
    refused(t, 0, "rule.off_grid", type="play_tile", tile="S2r2", at="e10", rot=270)


def test_3_a_bar_to_r3_covers_a_gear() -> None:
    t = at({"players": [{"hand": ["S3t1"]}, {}]})
    send(t, 0, type="play_tile", tile="S3t1", at="e3", rot=0)
    p = state(t).players[0]
    assert docks(p) == {"R3": "teal"} and p.construction == 1
    assert state(t).supply.construction == 9


def test_4_second_connection_moves_the_forklift_on_top() -> None:
    t = at({"players": [{"hand": ["S3t1", "S2r1"]}, {"forklift": 2}], "top": 1,
            "order": [1, 0], "turn": 1})
    send(t, 0, type="play_tile", tile="S3t1", at="b8", rot=0)
    p = state(t).players[0]
    assert docks(p) == {"S8": "teal"} and p.construction == 1 and p.forklift == 1
    events = send(t, 0, type="play_tile", tile="S2r1", at="f8", rot=0)
    moved = events[-1]
    assert isinstance(moved, ev.ForkliftMoved)
    assert moved.to == 2 and moved.bonuses == ["trucking"] and moved.on_top
    p = state(t).players[0]
    assert docks(p) == {"S8": "teal", "R8": "red"} and p.trucking == 1
    assert state(t).top == 0
    send(t, 0, type="end_turn")  # seat 0 was last: the trucking phase starts, seat 0 first
    assert state(t).phase == "trucking" and state(t).order == [0, 1]


def test_5_an_overhang_gets_a_scaffold_automatically() -> None:
    t = at({"players": [{"hand": ["C2t1", "D2t1"]}, {}]})
    send(t, 0, type="play_tile", tile="C2t1", at="c5", rot=90)
    assert docks(state(t).players[0]) == {} and state(t).players[0].forklift == 0
    events = send(t, 0, type="play_tile", tile="D2t1", at="b5", rot=0)
    played = events[0]
    assert isinstance(played, ev.TilePlayed)
    assert played.scaffolds == {"b5": 1} and played.level == 2
    p = state(t).players[0]
    assert docks(p) == {"S5": "teal"} and p.scaffolds == 4
    # With no scaffolding left the same placement is refused.
    t = at({"players": [{"board": [{"tile": "C2t1", "at": "c5", "rot": 90}], "hand": ["D2t1"]},
                        {}]})
    state(t).players[0].scaffolds = 0
    refused(t, 0, "rule.no_scaffolding", type="play_tile", tile="D2t1", at="b5", rot=0)


def test_6_crossing_lines_stay_apart() -> None:
    t = at({"players": [{"hand": ["X2r1", "S2t1", "C2t1"]}, {}]})
    send(t, 0, type="play_tile", tile="X2r1", at="c3", rot=180)
    assert docks(state(t).players[0]) == {"S3": "red"}
    send(t, 0, type="play_tile", tile="S2t1", at="c5", rot=90)
    send(t, 0, type="play_tile", tile="C2t1", at="b2", rot=0)
    p = state(t).players[0]
    assert docks(p) == {"S2": "teal", "S3": "red"} and p.forklift == 2


def test_7_a_splitter_branches_a_line_with_a_token() -> None:
    t = at({"players": [{"hand": ["S2r1", "C2r1"], "splitters": {"red": 1},
                         "tokens": {"construction": 1}}, {}]})
    send(t, 0, type="play_tile", tile="S2r1", at="b3", rot=0)
    send(t, 0, type="play_tile", tile="C2r1", at="b2", rot=0)
    assert state(t).actions_left == 1
    events = send(t, 0, type="place_splitter", colour="red", at="c3", rot=180)
    p = state(t).players[0]
    assert docks(p) == {"S2": "red", "S3": "red"} and p.forklift == 2 and p.trucking == 1
    assert state(t).actions_left == 1 and p.splitters == {"red": 0, "teal": 0}
    assert any(isinstance(e, ev.TokenUsed) for e in events)
    state(t).players[0].construction = 1  # even holding another token, a second is refused
    refused(t, 0, "rule.token_already_used", type="use_construction_token")


SEAT0_BOARD = [
    {"tile": "S2r1", "at": "b3", "rot": 0},
    {"tile": "C2t1", "at": "b5", "rot": 0},
    {"tile": "S3t1", "at": "b8", "rot": 0},
]


def test_8_a_played_truck_pushes_a_chain_into_the_other_receiving_lane() -> None:
    t = at({
        "phase": "trucking", "order": [1, 0],
        "players": [
            {"board": SEAT0_BOARD, "forklift": 3,
             "shipping_lane": [{"card": "T10", "rear": 1}, {"card": "T01", "rear": 6,
                                                           "goods": {"0": "teal"}}]},
            {"cards": ["T17"], "forklift": 3},
        ],
    })
    p0 = state(t).players[0]
    assert docks(p0) == {"S3": "red", "S5": "teal", "S8": "teal"}
    send(t, 1, type="play_truck", card="T17", target=0)
    p0, p1 = state(t).players
    lane = {x.card: (x.rear, x.goods) for x in p0.shipping_lane}
    assert lane == {"T17": (1, {2: "red"}), "T10": (6, {2: "teal"})}
    assert [(x.card, x.rear, x.goods) for x in p1.receiving_lane] == [("T01", 1, {0: "teal"})]
    assert p0.shipped == {"red": 1, "teal": 1}


def test_9_clashing_docks_ask_the_owner_to_choose() -> None:
    board = [{"tile": "S2r1", "at": "b3", "rot": 0}, {"tile": "C2r1", "at": "b2", "rot": 0},
             {"splitter": "red", "at": "c3", "rot": 180}]
    base = {"phase": "trucking", "players": [{"board": board, "cards": ["T10", "T14"],
                                              "forklift": 2}, {}]}
    t = at(base)
    send(t, 0, type="play_truck", card="T10", target=0)
    assert state(t).pending == [0]
    from domain.curious_cargo import CURIOUS_CARGO as G

    assert G.legal(state(t), 0) == [G.decode_command({"type": "choose_loads", "docks": [2]}),
                                    G.decode_command({"type": "choose_loads", "docks": [3]})]
    refused(t, 0, "rule.invalid_load_choice", type="choose_loads", docks=[2, 3])
    send(t, 0, type="choose_loads", docks=[3])
    assert state(t).players[0].shipping_lane[0].goods == {2: "red"} and not state(t).pending
    t = at(base)
    send(t, 0, type="play_truck", card="T14", target=0)
    assert not state(t).pending
    assert state(t).players[0].shipping_lane[0].goods == {2: "red"}


def test_10_receiving_a_fourth_good_is_a_star_and_ends_the_game() -> None:
    t = at({
        "phase": "trucking", "at": "phase_start",
        "players": [
            {"shipped": {"red": 2, "teal": 2}},
            {"received": {"teal": 3}, "forklift": 2, "shipped": {"red": 2, "teal": 2},
             "board": [{"tile": "S3t1", "at": "e3", "rot": 0},
                       {"tile": "S2r1", "at": "f8", "rot": 0}],
             "receiving_lane": [{"card": "T04", "rear": 2, "goods": {"0": "red", "1": "teal"}},
                                {"card": "T10", "rear": 6, "goods": {"2": "red"}}]},
        ],
    })
    p1 = state(t).players[1]
    assert p1.received == {"red": 1, "teal": 4}
    assert [x.goods for x in p1.receiving_lane] == [{0: "red"}, {}]
    assert state(t).phase == "trucking" and state(t).step == "turn"
    send(t, 1, type="end_turn")
    send(t, 0, type="end_turn")
    assert state(t).phase == "finished" and state(t).winners == [1]


def test_11_a_trucking_token_must_spend_ap() -> None:
    t = at({"phase": "trucking", "players": [{"cards": ["T10"], "tokens": {"trucking": 1}},
                                             {}]})
    send(t, 0, type="use_trucking_token")
    assert state(t).ap_left == 4 and len(state(t).players[0].cards) == 2
    refused(t, 0, "rule.must_spend_ap", type="end_turn")
    send(t, 0, type="play_truck", card="T10", target=0)
    send(t, 0, type="end_turn")
    assert state(t).turn == 1


def test_12_trading_stack_tops_for_a_card() -> None:
    storage = [["S2r3", "L3t1"], ["C2t2"], []]
    t = at({"phase": "trucking", "players": [{"storage": storage}, {}]})
    refused(t, 0, "rule.stack_empty", type="trade_tiles", stacks=[0, 2])
    events = send(t, 0, type="trade_tiles", stacks=[0, 0])
    assert isinstance(events[0], ev.TilesTraded) and events[0].tiles == ["L3t1", "S2r3"]
    p = state(t).players[0]
    assert p.storage == [[], ["C2t2"], []] and len(p.cards) == 1
    assert state(t).discarded_tiles == ["L3t1", "S2r3"]


def test_13_scoring_stars_points_and_eligibility() -> None:
    def table(teal1: int) -> object:
        return at({"players": [
            {"shipped": {"red": 4, "teal": 3}, "received": {"red": 2, "teal": 4},
             "forklift": 6, "tokens": {"construction": 2, "trucking": 1}},
            {"shipped": {"red": 6, "teal": teal1}, "received": {"red": 1, "teal": 1},
             "forklift": 7},
        ]})

    t = table(5)
    s = state(t)
    s0, s1 = score(s, s.players[0]), score(s, s.players[1])
    assert (s0.shipping, s0.bonus, s0.receiving, s0.track, s0.unused, s0.total) == (
        8, 0, 9, 3, 3, 23)
    assert (s1.shipping, s1.bonus, s1.receiving, s1.track, s1.unused, s1.total) == (
        17, 4, 2, 3, 0, 26)
    assert s0.stars == 1 and s1.stars == 0
    assert winners(s, [s0, s1]) == [0]
    t = table(1)
    s = state(t)
    sc = [score(s, p) for p in s.players]
    assert not sc[1].eligible and winners(s, sc) == [0]
    t = at({"players": [{"shipped": {"red": 1}}, {"shipped": {"teal": 6}}]})
    s = state(t)
    assert winners(s, [score(s, p) for p in s.players]) == []
