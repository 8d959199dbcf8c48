"""Player boards 1–6 and the 3-colour variant (docs/rules/curious-cargo.md "Player boards",
"The 3-colour variant", D30–D36): options checked at creation, the boards' design checks, and
one test per rule the variant adds."""

from __future__ import annotations

import hashlib
from collections import deque
from typing import Any

import msgspec
import pytest

from domain.curious_cargo import CURIOUS_CARGO as G
from domain.curious_cargo import EDITIONS
from domain.curious_cargo import commands as cmd
from domain.curious_cargo.components import (
    BOARDS,
    DOCKS,
    OPPOSITE,
    SQUARES,
    STEP,
    Colour,
    neighbour,
    xy,
)
from domain.curious_cargo.greedy import GreedyBot
from domain.curious_cargo.lines import active_docks, layout
from domain.curious_cargo.options import Options
from domain.curious_cargo.rules import end_triggers, score
from domain.curious_cargo.state import State, stars
from domain.curious_cargo.svg import svg
from domain.kernel import AUDITOR, CommandError, LocalGame, Rng, play_bot_game, play_random_game

from .support import SEED, at, kinds, refused, send, state


def variant(position: dict[str, Any], board: int = 1) -> Any:
    return at({"options": {"colours": 3, "board": board}, **position})


def docks_of(s: State, seat: int = 0) -> dict[str, Colour]:
    return active_docks(BOARDS[s.options.board_number()], layout(s.players[seat].board).top)


# --- options ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "raw",
    [
        {"board": 0},
        {"board": 7},
        {"board": "2"},
        {"board": None},
        {"colours": 4},
        {"colours": 1},
        {"colours": "3"},
        {"colours": True},
    ],
)
def test_bad_board_or_colours_are_refused(raw: dict[str, Any]) -> None:
    with pytest.raises(CommandError) as info:
        G.decode_options(raw)
    assert info.value.code == "options.invalid"


def test_the_options_schema_offers_boards_1_to_6_and_2_or_3_colours() -> None:
    props = G.options_schema()["$defs"]["Options"]["properties"]
    assert set(BOARDS) == {1, 2, 3, 4, 5, 6}
    assert props["board"]["enum"] == sorted(BOARDS)
    assert props["colours"]["enum"] == [2, 3]


def test_absent_options_leave_set_up_events_as_they_were() -> None:
    # Games stored before these options re-run to the same bytes (docs/rules "Rules editions").
    assert msgspec.to_builtins(Options()) == {"first_player": None, "draft": True}
    opened = msgspec.to_builtins(G.start(Options(first_player=1), 2, Rng(SEED, 1))[0])
    assert opened == {
        "type": "game_started",
        "options": {"first_player": 1, "draft": True},
        "first": 1,
    }
    chosen = msgspec.to_builtins(Options(board=3, colours=3))
    assert chosen == {"first_player": None, "draft": True, "board": 3, "colours": 3}


# --- the boards' design (D30) ----------------------------------------------------------------
def _mirror(square: str) -> str:
    x, y = xy(square) or (0, 0)
    return f"{'abcdefgh'[7 - x]}{11 - y}"


@pytest.mark.parametrize("number", sorted(BOARDS))
def test_every_board_is_playable_by_design(number: int) -> None:
    board = BOARDS[number]
    inward = {d.inward for d in DOCKS}
    colours = [p.colour for p in board.ports]
    assert len(board.ports) == 12 and colours.count("red") == colours.count("teal") == 6
    assert len(board.walls) + len(board.gears) == 10 and len(board.gears) >= 4
    assert not (inward | board.gears) & board.blocked  # every dock can be reached; gears open
    open_squares = [sq for sq in SQUARES if sq not in board.blocked]
    starts = []
    for port in board.ports:  # every port faces an open square of the grid
        facing = neighbour(port.square, port.edge)
        assert facing is not None and facing not in board.blocked, port
        starts.append(facing)
    # every dock's square is reachable from a port through open squares
    seen, todo = set(starts), deque(starts)
    while todo:
        sq = todo.popleft()
        for edge in STEP:
            nxt = neighbour(sq, edge)
            if nxt is not None and nxt in open_squares and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    assert inward <= seen
    # 180° symmetric: the receiving side is the shipping side turned round, so neither is easier
    assert {_mirror(s) for s in board.machine_squares} == set(board.machine_squares)
    assert {_mirror(s) for s in board.walls} == set(board.walls)
    assert {_mirror(s) for s in board.gears} == set(board.gears)
    ports = {(p.square, p.edge, p.colour) for p in board.ports}
    assert {(_mirror(s), OPPOSITE[e], c) for s, e, c in ports} == ports


def test_the_boards_differ() -> None:
    layouts = {(b.machine_squares, b.walls, b.gears, b.ports) for b in BOARDS.values()}
    assert len(layouts) == len(BOARDS) == 6


def test_the_board_decides_where_lines_run_and_pieces_lie() -> None:
    # C2r1 at b3: b3 WE, c3 WN. Board 2's port c4 S (red) feeds c3 from the north: S3 red.
    # On board 1 nothing faces c3's north and d3's port faces c3's east, which the tile lacks.
    for board, expected in ((1, {}), (2, {"S3": "red"})):
        t = at({"options": {"board": board}, "players": [{"hand": ["C2r1"]}, {}]})
        send(t, 0, type="play_tile", tile="C2r1", at="b3", rot=0)
        assert docks_of(state(t)) == expected
    # c4 is a machine square on board 2, open on board 1
    t = at({"options": {"board": 2}, "players": [{"hand": ["S2r1"]}, {}]})
    refused(t, 0, "rule.blocked_square", type="play_tile", tile="S2r1", at="b4", rot=0)
    t = at({"options": {"board": 1}, "players": [{"hand": ["S2r1"]}, {}]})
    send(t, 0, type="play_tile", tile="S2r1", at="b5", rot=270)
    # board 2's gear c6 (a machine on board 1) pays a construction token
    t = at({"options": {"board": 2}, "players": [{"hand": ["S2r1"]}, {}]})
    send(t, 0, type="play_tile", tile="S2r1", at="c6", rot=90)
    assert state(t).players[0].construction == 1
    t = at({"options": {"board": 1}, "players": [{"hand": ["S2r1"]}, {}]})
    refused(t, 0, "rule.blocked_square", type="play_tile", tile="S2r1", at="c6", rot=90)


def test_a_position_is_checked_against_its_own_board() -> None:
    with pytest.raises(CommandError) as info:
        at(
            {
                "options": {"board": 2},
                "players": [{"board": [{"tile": "S2r1", "at": "c4", "rot": 90}]}, {}],
            }
        )
    assert info.value.code == "position.invalid"
    at(
        {
            "options": {"board": 1},
            "players": [{"board": [{"tile": "S2r1", "at": "c4", "rot": 90}]}, {}],
        }
    )


@pytest.mark.parametrize("number", sorted(BOARDS))
@pytest.mark.parametrize("colours", [2, 3])
def test_every_board_plays_to_an_ending_with_either_bot(number: int, colours: int) -> None:
    seed = hashlib.sha256(f"curious-cargo/board/{number}/{colours}".encode()).digest()
    options = Options(board=number, colours=colours)  # type: ignore[arg-type]
    table, outcome = play_random_game(G, seed, 2, options)
    assert table.state.step == "finished" and G.fold(table.events) == table.state
    bots = [GreedyBot(Rng(seed, 1_000_000 + k)) for k in (0, 1)]
    table, outcome = play_bot_game(G, seed, bots, options)
    ended = table.events[-1]
    assert type(ended).__name__ == "GameEnded"
    if colours == 2:  # the greedy bot ends games by shipping or a star (the real endings)
        assert {"shipped", "star"} & set(ended.triggers), ended.triggers
    assert outcome.scores == [score(table.state, p).total for p in table.state.players]


# --- the 3-colour variant (D31–D36) ------------------------------------------------------------
def test_variant_set_up_deals_purple_goods_and_one_purple_splitter_each() -> None:
    s: State = G.fold(G.start(Options(colours=3, draft=False), 2, Rng(SEED, 1)))
    for p in s.players:
        assert p.splitters == {"red": 0, "teal": 0, "purple": 1}
        assert p.shipped == p.received == {"red": 0, "teal": 0, "purple": 0}
    assert s.supply.splitters == {"red": 2, "teal": 2, "purple": 0}
    base: State = G.fold(G.start(Options(draft=False), 2, Rng(SEED, 1)))
    assert base.players[0].splitters == {"red": 0, "teal": 0}
    assert base.supply.splitters == {"red": 2, "teal": 2}  # purple ones back in the box
    assert "purple" not in base.players[0].shipped and "purple" not in base.lost_goods


def test_a_purple_splitter_facing_a_dock_makes_it_purple_when_a_line_reaches_it() -> None:
    # S2r1 at b3 runs M1's red port (d3 W) to S3; a purple splitter on b3 (W N E) turns S3 purple
    t = variant(
        {
            "players": [
                {
                    "board": [{"tile": "S2r1", "at": "b3"}],
                    "forklift": 1,
                    "tokens": {"construction": 1},
                    "splitters": {"purple": 1},
                },
                {},
            ]
        }
    )
    assert docks_of(state(t)) == {"S3": "red"}
    send(t, 0, type="place_splitter", colour="purple", at="b3", rot=0)
    assert docks_of(state(t)) == {"S3": "purple"}
    assert state(t).players[0].splitters["purple"] == 0
    # fed by nothing, a purple splitter facing a dock is idle
    t = variant({"players": [{"tokens": {"construction": 1}, "splitters": {"purple": 1}}, {}]})
    send(t, 0, type="place_splitter", colour="purple", at="b3", rot=0)
    assert docks_of(state(t)) == {}


def test_a_purple_splitter_branches_the_line_on_in_its_own_colour() -> None:
    # On c3, between the port and b3's red segment, it passes the red line on: S3 stays red
    t = variant(
        {
            "players": [
                {
                    "board": [{"tile": "S2r1", "at": "b3"}],
                    "forklift": 1,
                    "tokens": {"construction": 1},
                    "splitters": {"purple": 1},
                },
                {},
            ]
        }
    )
    send(t, 0, type="place_splitter", colour="purple", at="c3", rot=0)
    assert docks_of(state(t)) == {"S3": "red"}
    # the red line does not run on into a teal segment through it: colours stay apart (D5)
    t = variant(
        {
            "players": [
                {"board": [{"tile": "S2t1", "at": "b3"}, {"splitter": "purple", "at": "c3"}]},
                {},
            ]
        }
    )
    assert docks_of(state(t)) == {}


def test_purple_connections_count_on_the_track() -> None:
    # Board 3: M1's red port c5 W faces b5, beside dock S5. A purple splitter there (W N E) is
    # a whole connection by itself: S5 purple, the forklift moves 0 → 1.
    t = variant(
        {"players": [{"tokens": {"construction": 1}, "splitters": {"purple": 1}}, {}]}, board=3
    )
    events = send(t, 0, type="place_splitter", colour="purple", at="b5", rot=0)
    assert docks_of(state(t)) == {"S5": "purple"}
    assert kinds(events) == ["TokenUsed", "TilePlayed", "ForkliftMoved"]
    assert state(t).players[0].forklift == 1


def test_a_purple_shipping_dock_loads_purple_goods() -> None:
    board = [{"tile": "S2r1", "at": "b3"}, {"splitter": "purple", "at": "b3"}]
    t = variant(
        {
            "phase": "trucking",
            "at": "phase_start",
            "players": [
                {"board": board, "forklift": 1, "shipping_lane": [{"card": "T04", "rear": 2}]},
                {},
            ],
        }
    )
    s = state(t)
    assert s.players[0].shipped == {"red": 0, "teal": 0, "purple": 1}
    truck = s.players[0].shipping_lane[0]
    assert truck.goods == {1: "purple"}


def test_a_purple_receiving_dock_unloads_purple_and_the_fourth_is_a_star() -> None:
    board = [{"tile": "S2r1", "at": "f8"}, {"splitter": "purple", "at": "g8"}]
    t = variant(
        {
            "phase": "trucking",
            "at": "phase_start",
            "players": [
                {
                    "board": board,
                    "forklift": 1,
                    "received": {"purple": 3},
                    "receiving_lane": [{"card": "T01", "rear": 8, "goods": {0: "purple"}}],
                },
                {},
            ],
        }
    )
    s = state(t)
    assert docks_of(s) == {"R8": "purple"}
    assert s.players[0].received["purple"] == 4 and stars(s.players[0]) == 1
    assert "star" in end_triggers(s)


def _scored(shipped: dict[str, int], colours: int = 3) -> tuple[Any, list[str]]:
    options: dict[str, Any] = {"colours": colours} if colours == 3 else {}
    t = at({"options": options, "players": [{"shipped": shipped}, {}]})
    s = state(t)
    return score(s, s.players[0]), end_triggers(s)


def test_eligibility_needs_two_purple_shipped() -> None:
    sc, _ = _scored({"red": 4, "teal": 4, "purple": 1})
    assert not sc.eligible
    sc, _ = _scored({"red": 2, "teal": 2, "purple": 2})
    assert sc.eligible
    sc, _ = _scored({"red": 2, "teal": 2}, colours=2)
    assert sc.eligible


def test_the_three_colour_side_ends_the_game_at_eleven_shipped() -> None:
    assert "shipped" not in _scored({"red": 5, "teal": 4, "purple": 1})[1]  # 10 < 11
    assert "shipped" in _scored({"red": 5, "teal": 4, "purple": 2})[1]
    assert "shipped" in _scored({"red": 5, "teal": 4}, colours=2)[1]  # 9: the two-colour goal


def test_a_column_is_complete_when_all_three_goods_left_it() -> None:
    sc, _ = _scored({"red": 5, "teal": 5, "purple": 4})
    assert sc.bonus == 0 and sc.shipping == 7 + 7 + 5
    sc, _ = _scored({"red": 6, "teal": 6, "purple": 6})
    assert sc.bonus == 8 and sc.shipping == 30


def test_the_two_colour_game_has_no_purple() -> None:
    t = at({"players": [{"tokens": {"construction": 1}}, {}]})
    refused(t, 0, "rule.no_splitter", type="place_splitter", colour="purple", at="b3", rot=0)
    for bad in (
        {"splitters": {"purple": 1}},
        {"board": [{"splitter": "purple", "at": "b3"}]},
        {"shipped": {"purple": 1}},
        {"shipping_lane": [{"card": "T04", "rear": 2, "goods": {0: "purple"}}]},
    ):
        with pytest.raises(CommandError) as info:
            at({"players": [bad, {}]})
        assert info.value.code == "position.invalid", bad


def test_views_legal_and_the_picture_show_purple() -> None:
    t = variant(
        {
            "players": [
                {
                    "tokens": {"construction": 1},
                    "splitters": {"purple": 1},
                    "shipped": {"purple": 2},
                },
                {},
            ]
        },
        board=4,
    )
    s = state(t)
    placements = [c for c in G.legal(s, 0) if isinstance(c, cmd.PlaceSplitter)]
    assert placements and {c.colour for c in placements} == {"purple"}
    schema = G.command_schema()["$defs"]["PlaceSplitter"]["properties"]["colour"]
    assert schema["enum"] == ["purple", "red", "teal"]  # the command a client builds
    view = G.view(s, AUDITOR)
    assert view.board.number == 4 and view.board.name == BOARDS[4].name
    assert view.shipping_board.colours == ["red", "teal", "purple"]
    assert view.shipping_board.goal == 11
    assert view.players[0].splitters["purple"] == 1
    assert view.players[0].shipped["purple"] == 2
    picture = svg(view)
    assert picture.count('data-shipping="purple"') == 12  # both seats' six purple columns
    assert picture.count('data-shipped="true"') == 2
    # board 4's machines are drawn, not board 1's (six machine squares per seat either way)
    assert picture.count('fill="#555"') == 12
    board_1 = msgspec.structs.replace(view.board, number=1)
    assert svg(msgspec.structs.replace(view, board=board_1)) != picture
    assert G.view(at({}).state, AUDITOR).board.number == 1
    assert "splitters: red 0 · teal 0 · purple 1" in picture
    send(t, 0, type="place_splitter", colour="purple", at="b3", rot=0)
    assert kinds(t.events[-2:]) == ["TokenUsed", "TilePlayed"]
    after = G.view(state(t), AUDITOR)
    assert after.players[0].squares["b3"].piece == "splitter-purple"
    assert svg(after).count('data-colour="purple"') == 1  # the splitter's segment, in purple


def test_edition_1_keeps_tiles_got_in_trucking_in_hand() -> None:
    # D28 before 2026-11-27: the trucking phase ended without a cleanup (docs/rules "Rules
    # editions"); a game recorded under edition 1 keeps that behaviour.
    position = G.decode_position(
        {
            "phase": "trucking",
            "at": "turn",
            "turn": 1,
            "order": [1, 0],
            "bag": ["S2r1", "S2r2", "S3t1", "S3t2"],
            "players": [{"cards": ["T08"]}, {}],
        }
    )
    for edition, step in ((1, "turn"), (2, "cleanup")):
        t = LocalGame.from_position(EDITIONS[edition], SEED, position)
        events = t.submit(0, G.decode_command({"type": "discard_for_tiles", "card": "T08"}))
        s: State = t.state
        assert s.edition == edition and s.step == step
        assert len(s.players[0].hand) == 3
        assert (kinds(events)[-1] == "PhaseStarted") == (edition == 1)
