"""One test per rule and per rejection code."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from domain.curious_cargo import CURIOUS_CARGO as G
from domain.curious_cargo import events as ev
from domain.curious_cargo.components import BOARDS, CARD_IDS, TILE_IDS, TILES, TRUCKS
from domain.curious_cargo.lines import layout
from domain.curious_cargo.options import Options
from domain.curious_cargo.rules import check_placement, tile_source
from domain.kernel import AUDITOR, SPECTATOR, CommandError, LocalGame, RuleError, seat

from .support import SEED, at, kinds, refused, send, state


def shown(value: object) -> Any:
    """An event view as its JSON (builtins)."""
    return msgspec.to_builtins(value)


def new(**options: object) -> LocalGame:  # type: ignore[type-arg]
    return LocalGame.new(G, SEED, 2, G.decode_options(dict(options)))


# --- components ------------------------------------------------------------------------------
def test_component_counts() -> None:
    assert len(TILE_IDS) == 75 and len(CARD_IDS) == 25
    assert sum(1 for t in TILES.values() if t.kind == "S2") == 14
    assert [c for c in CARD_IDS if TRUCKS[c].ap == 2] == [f"T{n}" for n in range(17, 26)]


# --- set-up and draft --------------------------------------------------------------------------
def test_the_draft_keeps_one_and_passes_two() -> None:
    t = new(first_player=1)
    s = state(t)
    assert s.step == "draft" and G.to_act(s) == [0, 1] and s.top == 1
    dealt = [list(p.dealt) for p in s.players]
    assert all(len(d) == 3 for d in dealt) and len(s.deck) == 19
    refused(t, 0, "rule.card_not_held", type="keep_card", card=dealt[1][0])
    send(t, 1, type="keep_card", card=dealt[1][0])
    refused(t, 1, "rule.not_your_turn", type="keep_card", card=dealt[1][1])
    send(t, 0, type="keep_card", card=dealt[0][2])
    s = state(t)
    assert sorted(s.players[0].cards) == sorted([dealt[0][2], *dealt[1][1:]])
    assert sorted(s.players[1].cards) == sorted([dealt[1][0], *dealt[0][:2]])
    assert s.phase == "construction" and s.order == [1, 0]


def test_without_the_draft_everyone_keeps_three() -> None:
    t = new(draft=False, first_player=0)
    s = state(t)
    assert s.phase == "construction" and [len(p.cards) for p in s.players] == [3, 3]


def test_a_random_first_player_and_two_seats_only() -> None:
    firsts = {state(LocalGame.new(G, bytes([n]) * 32, 2, Options())).top for n in range(12)}
    assert firsts == {0, 1}
    with pytest.raises(RuleError) as info:
        LocalGame.new(G, SEED, 3, Options())
    assert info.value.code == "rule.seats"
    with pytest.raises(CommandError) as bad:
        G.decode_options({"first_player": 2})
    assert bad.value.code == "options.invalid"


# --- construction ---------------------------------------------------------------------------
def test_actions_run_out_and_tokens_add_two() -> None:
    t = at({"players": [{"tokens": {"construction": 1}}, {}]})
    for _ in range(3):
        send(t, 0, type="draw_tile")
    assert len(state(t).players[0].hand) == 3
    refused(t, 0, "rule.no_actions", type="draw_tile")
    send(t, 0, type="use_construction_token")
    assert state(t).actions_left == 2 and state(t).supply.construction == 10
    refused(t, 0, "rule.token_already_used", type="use_construction_token")


def test_the_empty_bag_and_missing_tokens_and_splitters() -> None:
    t = at({"players": [{}, {}], "bag": []})
    refused(t, 0, "rule.bag_empty", type="draw_tile")
    refused(t, 0, "rule.no_token", type="use_construction_token")
    t = at({"players": [{"tokens": {"construction": 1}}, {}]})
    refused(t, 0, "rule.no_splitter", type="place_splitter", colour="teal", at="b3", rot=0)


def test_tiles_come_from_the_hand_or_a_stack_top_only() -> None:
    t = at({"players": [{"storage": [["S2r1", "S2r2"]]}, {"hand": ["S2r3"]}]})
    refused(t, 0, "rule.tile_not_held", type="play_tile", tile="S2r1", at="b3", rot=0)
    refused(t, 0, "rule.tile_not_held", type="play_tile", tile="S2r3", at="b3", rot=0)
    send(t, 0, type="play_tile", tile="S2r2", at="b3", rot=0)
    assert state(t).players[0].storage[0] == ["S2r1"]


def test_rotation_and_placement_checks() -> None:
    t = at({"players": [{"hand": ["S2r1"]}, {}]})
    refused(t, 0, "rule.invalid_rotation", type="play_tile", tile="S2r1", at="b3", rot=45)
    refused(t, 0, "rule.off_grid", type="play_tile", tile="S2r1", at="z3", rot=0)
    refused(t, 0, "rule.off_grid", type="play_tile", tile="S2r1", at="h3", rot=0)
    refused(t, 0, "rule.blocked_square", type="play_tile", tile="S2r1", at="a3", rot=0)
    refused(t, 0, "rule.blocked_square", type="play_tile", tile="S2r1", at="b4", rot=0)
    with pytest.raises(RuleError) as info:
        check_placement(BOARDS[1], layout([]), "Q9", "b3", 0, 5)
    assert info.value.code == "rule.unknown_tile"


def test_a_gear_pays_only_when_first_covered_and_while_the_supply_lasts() -> None:
    t = at({"players": [{"hand": ["S3t1", "S3t2"]}, {"tokens": {"construction": 9}}]})
    send(t, 0, type="play_tile", tile="S3t1", at="e3", rot=0)
    assert state(t).players[0].construction == 1 and state(t).supply.construction == 0
    send(t, 0, type="play_tile", tile="S3t2", at="b8", rot=0)  # gear b8, supply empty
    assert state(t).players[0].construction == 1
    t = at({"players": [{"board": [{"tile": "S3t1", "at": "e3", "rot": 0}], "hand": ["S2r1"],
                         "forklift": 1}, {}]})
    events = send(t, 0, type="play_tile", tile="S2r1", at="f3", rot=0)
    assert isinstance(events[0], ev.TilePlayed) and events[0].gears == 0


def test_the_forklift_takes_every_bonus_passed_and_reaches_a_star() -> None:
    t = at({"players": [{"forklift": 9, "hand": ["S3t1"],
                         "board": [{"tile": "S2r1", "at": "b3", "rot": 0}]}, {}]})
    state(t).players[0].forklift = 0
    state(t).supply.trucking = 0
    events = send(t, 0, type="play_tile", tile="S3t1", at="e3", rot=0)
    moved = events[-1]
    assert isinstance(moved, ev.ForkliftMoved) and moved.to == 2
    assert moved.bonuses == []  # the trucking token on 2 is lost: the supply has none


def test_the_forklift_never_moves_back_and_stops_at_ten() -> None:
    t = at({"players": [{"forklift": 10, "hand": ["S2r1"]}, {}]})
    send(t, 0, type="play_tile", tile="S2r1", at="b3", rot=0)
    assert state(t).players[0].forklift == 10
    from domain.curious_cargo.state import stars

    assert stars(state(t).players[0]) == 1


def test_cleanup_stores_tiles_and_returns_tokens_above_three() -> None:
    t = at({"turn": 1, "order": [1, 0],
            "players": [{"hand": ["S2r1", "S2r2"], "tokens": {"construction": 5}}, {}]})
    send(t, 0, type="end_turn")
    s = state(t)
    assert s.step == "cleanup" and G.to_act(s) == [0]
    refused(t, 1, "rule.not_your_turn", type="store", placements=[])
    refused(t, 0, "rule.invalid_store", type="store", placements=[{"tile": "S2r1", "stack": 0}])
    refused(t, 0, "rule.invalid_store", type="store",
            placements=[{"tile": "S2r1", "stack": 0}, {"tile": "S2r2", "stack": 3}])
    events = send(t, 0, type="store", placements=[{"tile": "S2r2", "stack": 1},
                                                  {"tile": "S2r1", "stack": 1}])
    s = state(t)
    assert s.players[0].storage == [[], ["S2r2", "S2r1"], []]
    assert s.players[0].construction == 3 and s.supply.construction == 7
    assert "TokensReturned" in kinds(events) and s.phase == "trucking"


def test_the_splitter_cap_returns_red_first_from_a_loaded_position() -> None:
    # D26: no game from set-up holds 4 splitters, but a position may; the cap of 3 applies.
    t = at({"turn": 1, "order": [1, 0],
            "players": [{"splitters": {"red": 2, "teal": 2}}, {}]})
    events = send(t, 0, type="end_turn")
    returned = [e for e in events if isinstance(e, ev.TokensReturned)]
    assert len(returned) == 1 and returned[0].splitters == {"red": 1}
    s = state(t)
    assert s.players[0].splitters == {"red": 1, "teal": 2} and s.supply.splitters["red"] == 1


def test_commands_of_the_other_phase_and_step_are_refused() -> None:
    t = at({"players": [{"cards": ["T10"]}, {}]})
    refused(t, 0, "rule.wrong_phase", type="play_truck", card="T10", target=0)
    refused(t, 0, "rule.wrong_step", type="store", placements=[])
    refused(t, 0, "rule.wrong_step", type="keep_card", card="T10")
    refused(t, 0, "rule.wrong_step", type="choose_loads", docks=[])
    t = at({"phase": "trucking", "players": [{"hand": ["S2r1"]}, {}]})
    refused(t, 0, "rule.wrong_phase", type="play_tile", tile="S2r1", at="b3", rot=0)
    with pytest.raises(CommandError):
        G.decode_command({"type": "fly"})


# --- trucking -----------------------------------------------------------------------------
def test_truck_plays_need_the_card_the_ap_and_a_seat() -> None:
    t = at({"phase": "trucking", "players": [{"cards": ["T17", "T22", "T01"]}, {}]})
    refused(t, 0, "rule.card_not_held", type="play_truck", card="T02", target=0)
    refused(t, 0, "rule.invalid_target", type="play_truck", card="T17", target=2)
    send(t, 0, type="play_truck", card="T01", target=1)
    refused(t, 0, "rule.not_enough_ap", type="play_truck", card="T17", target=0)
    refused(t, 0, "rule.action_taken", type="discard_for_tiles", card="T22")
    refused(t, 0, "rule.action_taken", type="trade_tiles", stacks=[0, 1])
    assert [x.card for x in state(t).players[1].shipping_lane] == ["T01"]


def test_the_trucking_token_needs_a_card_and_is_once_a_turn() -> None:
    t = at({"phase": "trucking", "deck": [], "players": [{"tokens": {"trucking": 2}}, {}]})
    refused(t, 0, "rule.no_truck_card", type="use_trucking_token")
    t = at({"phase": "trucking", "players": [{"tokens": {"trucking": 2}}, {}]})
    send(t, 0, type="use_trucking_token")
    refused(t, 0, "rule.token_already_used", type="use_trucking_token")
    t = at({"phase": "trucking", "players": [{}, {}]})
    refused(t, 0, "rule.no_token", type="use_trucking_token")


def test_discarding_a_card_for_tiles_fills_the_hand_and_ends_the_turn() -> None:
    t = at({"phase": "trucking", "players": [{"cards": ["T08"]}, {}]})
    refused(t, 0, "rule.card_not_held", type="discard_for_tiles", card="T01")
    events = send(t, 0, type="discard_for_tiles", card="T08")
    assert kinds(events) == ["CardDiscarded", "TileDrawn", "TurnEnded"]
    s = state(t)
    assert len(s.players[0].hand) == 3 and s.discarded_cards == ["T08"] and s.turn == 1
    t = at({"phase": "trucking", "bag": ["S2r1"], "players": [{"cards": ["T08"]}, {}]})
    send(t, 0, type="discard_for_tiles", card="T08")
    assert state(t).players[0].hand == ["S2r1"]


def test_tiles_got_in_trucking_go_into_storage_at_the_trucking_cleanup() -> None:
    # Manual §4: "After each phase, perform End of Phase Cleanup"; the cleanup's first line is
    # "Any Conveyor tiles in hand go into storage". Tiles from action b are stored, not held.
    t = at({"phase": "trucking", "turn": 1, "order": [1, 0],
            "bag": ["S2r1", "S2r2", "S3t1", "S3t2"],
            "players": [{"cards": ["T08"], "tokens": {"trucking": 5}}, {}]})
    send(t, 0, type="discard_for_tiles", card="T08")
    s = state(t)
    assert s.phase == "trucking" and s.step == "cleanup" and G.to_act(s) == [0]
    first, second, third = s.players[0].hand
    assert [type(c).__name__ for c in G.legal(s, 0)] == ["Store"] * 3
    refused(t, 1, "rule.not_your_turn", type="store", placements=[])
    refused(t, 0, "rule.invalid_store", type="store", placements=[{"tile": first, "stack": 0}])
    refused(t, 0, "rule.wrong_step", type="end_turn")
    events = send(t, 0, type="store", placements=[{"tile": third, "stack": 2},
                                                  {"tile": first, "stack": 0},
                                                  {"tile": second, "stack": 2}])
    s = state(t)
    assert s.players[0].hand == [] and s.players[0].storage == [[first], [], [third, second]]
    assert s.players[0].trucking == 3  # tokens above 3 go back in the same cleanup
    assert kinds(events)[-2:] == ["TokensReturned", "PhaseStarted"]
    assert s.phase == "construction" and s.round == 2 and s.step == "turn"
    # Only stack tops are playable now: ``third`` lies under ``second``.
    assert tile_source(s.players[0], third) is None
    assert tile_source(s.players[0], second) == "2"


def test_the_trucking_cleanup_stores_before_the_game_ends() -> None:
    # The bag runs out in trucking: the tiles drawn are stored, then the game ends (D14's order).
    t = at({"phase": "trucking", "turn": 1, "order": [1, 0], "bag": ["S2r1"],
            "players": [{"cards": ["T08"]}, {}]})
    send(t, 0, type="discard_for_tiles", card="T08")
    assert state(t).step == "cleanup"
    events = send(t, 0, type="store", placements=[{"tile": "S2r1", "stack": 1}])
    s = state(t)
    assert s.step == "finished" and "bag_empty" in events[-1].triggers
    assert s.players[0].storage[1] == ["S2r1"] and s.players[0].hand == []


def test_trading_needs_stacks_and_a_deck() -> None:
    t = at({"phase": "trucking", "players": [{"storage": [["S2r1"], ["S2r2"]]}, {}]})
    refused(t, 0, "rule.invalid_stacks", type="trade_tiles", stacks=[0])
    refused(t, 0, "rule.invalid_stacks", type="trade_tiles", stacks=[0, 3])
    refused(t, 0, "rule.stack_empty", type="trade_tiles", stacks=[0, 0])
    t = at({"phase": "trucking", "deck": [], "players": [{"storage": [["S2r1"], ["S2r2"]]}, {}]})
    refused(t, 0, "rule.deck_empty", type="trade_tiles", stacks=[0, 1])


def test_full_receiving_slots_lose_the_good_and_trucks_leave_the_receiving_lane() -> None:
    board = [{"tile": "S3t1", "at": "e3", "rot": 0}]
    # T17 pushes T10 and T01 on: T01 leaves seat 0's lane into seat 1's receiving lane, where
    # the chain pushes T04 to 3–5 (its teal faces a full R3 and is lost) and T22 out of the game
    # with its red good.
    t = at({"phase": "trucking", "order": [0, 1], "players": [
        {"cards": ["T17"], "shipping_lane": [{"card": "T10", "rear": 5},
                                             {"card": "T01", "rear": 9, "goods": {"0": "teal"}}]},
        {"board": board, "received": {"teal": 4}, "forklift": 1,
         "receiving_lane": [{"card": "T04", "rear": 2, "goods": {"0": "teal"}},
                            {"card": "T22", "rear": 5, "goods": {"0": "red"}}]},
    ]})
    send(t, 0, type="play_truck", card="T17", target=0)
    s = state(t)
    lane = {x.card: (x.rear, x.goods) for x in s.players[1].receiving_lane}
    assert lane == {"T01": (1, {0: "teal"}), "T04": (3, {})}
    assert s.lost_goods == {"red": 1, "teal": 1}
    assert s.players[1].received["teal"] == 4


def test_end_triggers_shipped_goal_bag_and_deck() -> None:
    for extra, trigger in (
        ({"players": [{"shipped": {"red": 5, "teal": 4}}, {}]}, "shipped"),
        ({"bag": []}, "bag_empty"),
        ({"deck": []}, "deck_empty"),
    ):
        t = at({"phase": "trucking", "turn": 1, "players": [{}, {}], **extra})
        events = send(t, state(t).order[1], type="end_turn")
        ended = events[-1]
        assert isinstance(ended, ev.GameEnded) and trigger in ended.triggers
        refused(t, 0, "rule.game_over", type="end_turn")


def test_ties_break_on_points_then_the_track() -> None:
    from domain.curious_cargo.rules import score, winners

    t = at({"top": 1, "players": [{"shipped": {"red": 2, "teal": 2}, "forklift": 4},
                                  {"shipped": {"red": 2, "teal": 2}, "forklift": 4}]})
    s = state(t)
    assert winners(s, [score(s, p) for p in s.players]) == [1]
    s.players[0].construction = 1
    assert winners(s, [score(s, p) for p in s.players]) == [0]


# --- positions and hidden information ---------------------------------------------------------
@pytest.mark.parametrize(
    "bad",
    [
        {"players": [{}]},
        {"players": [{"hand": ["S2r1"]}, {"hand": ["S2r1"]}]},
        {"players": [{"cards": ["T99"]}, {}]},
        {"players": [{"board": [{"tile": "S2r1", "at": "b3", "rot": 0}]}, {}]},
        {"players": [{"board": [{"tile": "S2r1", "at": "a3", "rot": 0}]}, {}]},
        {"players": [{"shipping_lane": [{"card": "T01", "rear": 10}]}, {}]},
        {"players": [{"shipping_lane": [{"card": "T01", "rear": 1, "goods": {"1": "red"}}]}, {}]},
        {"players": [{"tokens": {"construction": 6}}, {"tokens": {"construction": 6}}]},
        {"players": [{"board": [{"tile": f"S2r{n}", "at": "b2", "rot": 0} for n in range(1, 8)]
                      + [{"tile": "S2t1", "at": "c2", "rot": 0}]}, {}]},
    ],
)
def test_invalid_positions_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(CommandError) as info:
        at(bad)
    assert info.value.code == "position.invalid"


def test_a_position_round_trips() -> None:
    t = at({"phase": "trucking", "players": [
        {"board": [{"tile": "S2r1", "at": "b3", "rot": 0}], "forklift": 1, "cards": ["T10"],
         "storage": [["C2t1"]], "shipping_lane": [{"card": "T04", "rear": 3,
                                                   "goods": {"1": "red"}}]},
        {"cards": ["T17"], "tokens": {"trucking": 2}, "splitters": {"teal": 1}},
    ]})
    position = G.export_position(state(t))
    again = LocalGame.from_position(G, SEED, position)
    assert again.state == state(t)


def test_cards_are_hidden_from_the_other_seat_and_spectators() -> None:
    t = new(first_player=0)
    mine = G.view(state(t), seat(0))
    theirs = G.view(state(t), seat(1))
    spectator = G.view(state(t), SPECTATOR)
    audit = G.view(state(t), AUDITOR)
    assert mine.players[0].dealt and theirs.players[0].dealt is None
    assert spectator.players[1].dealt is None and spectator.deck is None
    assert audit.deck and audit.players[1].dealt
    dealt = t.events[1]
    assert G.event_view(dealt, seat(0)).cards and G.event_view(dealt, seat(1)).cards is None
    for s in (0, 1):
        send(t, s, type="keep_card", card=state(t).players[s].dealt[0])
    passed = t.events[-2] if isinstance(t.events[-2], ev.CardsPassed) else t.events[-3]
    assert isinstance(passed, ev.CardsPassed)
    assert G.event_view(passed, seat(1)).passed and G.event_view(passed, SPECTATOR).passed is None


def test_the_view_shows_boards_lanes_stacks_tokens_and_the_track() -> None:
    t = at({"phase": "trucking", "players": [
        {"board": [{"tile": "C2t1", "at": "c5", "rot": 90}, {"tile": "D2t1", "at": "b5",
                                                             "rot": 0}],
         "forklift": 1, "storage": [["S2r1"]], "tokens": {"trucking": 2},
         "shipping_lane": [{"card": "T10", "rear": 3, "goods": {"0": "red"}}]}, {}]})
    v = shown(G.view(state(t), SPECTATOR))  # as served
    p = v["players"][0]
    assert p["squares"]["b5"]["height"] == 2 and p["squares"]["c4"]["height"] == 1
    assert p["squares"]["c4"]["segments"] == [{"colour": "teal", "edges": "NE"}]
    assert p["docks"]["S5"] == {"colour": "teal", "active": True}
    assert p["docks"]["S3"] == {"colour": None, "active": False}
    assert p["connections"] == 1 and p["scaffolds"] == 4
    assert p["shipping_lane"] == [{"card": "T10", "layout": "...C", "rear": 3, "front": 6,
                                   "goods": {"0": "red"}}]
    assert p["storage"] == [["S2r1"], [], []] and p["tokens"] == {"construction": 0,
                                                                   "trucking": 2}
    assert v["track"]["bonuses"]["10"] == "star" and v["shipping_board"]["goal"] == 9
    assert v["phase"] == "trucking" and v["to_act"] == [0]


def test_a_loaded_position_hides_the_other_seats_cards_and_the_deck() -> None:
    t = at({"players": [{"cards": ["T10"]}, {"cards": ["T17"]}], "deck": ["T01", "T02"]})
    loaded = t.events[0]
    assert isinstance(loaded, ev.PositionLoaded)
    mine = shown(G.event_view(loaded, seat(0)))["position"]
    assert mine["players"][0]["cards"] == ["T10"] and mine["players"][1]["cards"] is None
    assert mine["deck"] is None
    spectator = shown(G.event_view(loaded, SPECTATOR))["position"]
    assert [p["cards"] for p in spectator["players"]] == [None, None]
    assert shown(G.event_view(loaded, AUDITOR))["position"]["deck"] == ["T01", "T02"]
    drawn = ev.CardsDrawn(0, ["T11"])
    assert shown(G.event_view(drawn, seat(1))) == {"type": "cards_drawn", "seat": 0, "cards": None,
                                            "count": 1}
    kept = ev.CardKept(1, "T12")
    assert G.event_view(kept, seat(0)).card is None and G.event_view(kept, seat(1)).card
