"""Properties over random games of Curious Cargo (hypothesis), as for Cargo Empire.

A random game is a seed, options, a prefix length and a list of choice indices. A seeded bot first
plays ``prefix`` uniformly random legal commands; then, for each index, a seat to act plays
``legal[index % len(legal)]``, with the property checked after each command."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.curious_cargo import CURIOUS_CARGO as G
from domain.curious_cargo import commands as cmd
from domain.curious_cargo.components import (
    CARD_IDS,
    SPLITTER_COLOURS,
    SPLITTER_SUPPLY,
    SUPPLY,
    TILE_IDS,
)
from domain.curious_cargo.options import Options
from domain.curious_cargo.state import State
from domain.kernel import AUDITOR, SPECTATOR, LocalGame, Rng, RuleError, decoder, seat

AnyGame = LocalGame[Any, Any, Any, Any, Any]
PROPERTY = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])

game_plans = st.tuples(
    st.binary(min_size=32, max_size=32),
    st.builds(
        Options,
        first_player=st.sampled_from([None, 0, 1]),
        draft=st.booleans(),
        board=st.sampled_from([msgspec.UNSET, 1, 2, 3, 4, 5, 6]),  # every player board
        colours=st.sampled_from([msgspec.UNSET, 2, 3]),  # and the 3-colour variant
    ),
    st.integers(0, 120),
    st.lists(st.integers(0, 1 << 16), max_size=12),
)
Plan = tuple[bytes, Options, int, list[int]]


def play(plan: Plan, check: Any = None) -> AnyGame:
    seed, options, prefix, choices = plan
    table: AnyGame = LocalGame.new(G, seed, 2, options)
    bot = Rng(seed, 0)
    for choice in [bot.below(1 << 16) for _ in range(prefix)] + choices:
        waiting = G.to_act(table.state)
        if not waiting:
            break
        who = waiting[choice % len(waiting)]
        legal = G.legal(table.state, who)
        table.submit(who, legal[choice % len(legal)])
        if check is not None:
            check(table)
    return table


def assert_conserved(table: AnyGame) -> None:
    s: State = table.state
    tiles = list(s.bag) + list(s.discarded_tiles)
    for p in s.players:
        tiles += p.hand + [t for stack in p.storage for t in stack]
        tiles += [b.piece for b in p.board if not b.piece.startswith("splitter-")]
    assert sorted(tiles) == TILE_IDS
    cards = list(s.deck) + list(s.discarded_cards)
    for p in s.players:
        cards += p.cards + p.dealt
    assert sorted(cards) == CARD_IDS
    lanes = [t for p in s.players for t in (*p.shipping_lane, *p.receiving_lane)]
    assert {t.card for t in lanes} <= set(s.discarded_cards) and len(lanes) == len(
        {t.card for t in lanes})
    for colour in s.players[0].shipped:  # the board side's goods: purple too in the variant
        shipped = sum(p.shipped[colour] for p in s.players)
        on_trucks = sum(1 for t in lanes for g in t.goods.values() if g == colour)
        received = sum(p.received[colour] for p in s.players)
        assert shipped == on_trucks + received + s.lost_goods[colour]
    for colour in s.supply.splitters:
        on_boards = sum(1 for p in s.players for b in p.board if b.piece == f"splitter-{colour}")
        held = sum(p.splitters[colour] for p in s.players)
        assert on_boards + held + s.supply.splitters[colour] == SPLITTER_SUPPLY[colour]
    assert s.supply.construction + sum(p.construction for p in s.players) == SUPPLY[
        "construction"]
    assert s.supply.trucking + sum(p.trucking for p in s.players) == SUPPLY["trucking"]
    for p in s.players:
        assert p.scaffolds >= 0 and all(0 <= n <= 4 for n in p.received.values())
        assert all(0 <= n <= 6 for n in p.shipped.values())


@PROPERTY
@given(game_plans)
def test_tiles_cards_goods_and_tokens_are_conserved(plan: Any) -> None:
    play(plan, assert_conserved)


def sample(commands: list[Any], rng: Rng, n: int) -> list[Any]:
    if len(commands) <= n:
        return commands
    return [commands[rng.below(len(commands))] for _ in range(n)]


@PROPERTY
@given(game_plans)
def test_every_legal_command_is_accepted(plan: Any) -> None:
    def check(table: AnyGame) -> None:
        rng = Rng(table.seed, table.version)
        for who in range(2):
            for command in sample(G.legal(table.state, who), rng, 40):
                G.decide(table.state, who, command, table.rng())

    play(plan, check)


squares = st.sampled_from(["a1", "b3", "c5", "d6", "e10", "h9", "g3", "f10", "z1", "b11"])
commands = st.one_of(
    st.builds(cmd.KeepCard, st.sampled_from(CARD_IDS)),
    st.just(cmd.DrawTile()),
    st.builds(cmd.PlayTile, st.sampled_from([*TILE_IDS[:20], "Q1"]), squares,
              st.sampled_from([0, 90, 180, 270, 45])),
    st.just(cmd.UseConstructionToken()),
    st.builds(
        cmd.PlaceSplitter, st.sampled_from(SPLITTER_COLOURS), squares, st.sampled_from([0, 90])
    ),
    st.just(cmd.EndTurn()),
    st.builds(cmd.PlayTruck, st.sampled_from(CARD_IDS), st.integers(-1, 2)),
    st.just(cmd.UseTruckingToken()),
    st.builds(cmd.DiscardForTiles, st.sampled_from(CARD_IDS)),
    st.builds(cmd.TradeTiles, st.lists(st.integers(-1, 3), max_size=3)),
    st.builds(cmd.ChooseLoads, st.lists(st.sampled_from([2, 3, 5, 6, 8, 9]), max_size=3)),
)


def _canonical(command: Any) -> Any:
    """Legal lists one form of commands with several spellings (trade stacks in order)."""
    if isinstance(command, cmd.TradeTiles):
        return cmd.TradeTiles(sorted(command.stacks))
    if isinstance(command, cmd.ChooseLoads):
        return cmd.ChooseLoads(sorted(command.docks))
    return command


@PROPERTY
@given(game_plans, st.lists(commands, min_size=1, max_size=30), st.integers(-1, 2))
def test_a_command_is_accepted_exactly_when_it_is_legal(
    plan: Any, tries: list[Any], who: int
) -> None:
    table = play(plan)
    state = table.state
    legal = G.legal(state, who) if 0 <= who < 2 else []
    for command in [*tries, *legal[:10]]:
        try:
            G.decide(state, who, command, table.rng())
        except RuleError as error:
            assert error.code.startswith("rule."), error.code
            assert command not in legal, (command, error.code)
        else:
            if not isinstance(command, cmd.Store):  # legal lists one order per stack only
                assert _canonical(command) in legal, command


@PROPERTY
@given(game_plans)
def test_folding_the_events_from_scratch_gives_the_same_state(plan: Any) -> None:
    table = play(plan)
    assert G.fold(table.events) == table.state
    decoded = [G.decode_event(msgspec.json.encode(e)) for e in table.events]
    assert G.fold(decoded) == table.state
    if table.state.phase != "finished":
        position = G.decode_position(msgspec.json.encode(G.export_position(table.state)))
        again = LocalGame.from_position(G, bytes(32), position).state
        for field in ("players", "bag", "deck", "supply", "phase", "step", "round", "order",
                      "turn", "actions_left", "token_used", "ap_left", "ap_spent",
                      "trucking_token_used", "top", "pending"):
            assert getattr(again, field) == getattr(table.state, field), field


@PROPERTY
@given(game_plans)
def test_same_seed_and_commands_give_byte_identical_events(plan: Any) -> None:
    first, second = play(plan), play(plan)
    assert [msgspec.json.encode(e) for e in first.events] == [
        msgspec.json.encode(e) for e in second.events
    ]


def assert_hidden(table: AnyGame) -> None:
    s: State = table.state
    for me in [None, 0, 1]:
        # Swap every card the others hold (hand, dealt, kept) with the deck's: ``me`` must see
        # no difference.
        other = decoder(G.state_type).decode(msgspec.json.encode(s))
        pool = sorted(other.deck)
        for who, p in enumerate(other.players):
            if who == me:
                continue
            mapping = {c: pool[i % len(pool)] for i, c in enumerate(p.cards + p.dealt)} if pool \
                else {}
            p.cards = [mapping.get(c, c) for c in p.cards]
            p.dealt = [mapping.get(c, c) for c in p.dealt]
            p.kept = None if p.kept is None else mapping.get(p.kept, p.kept)
        other.deck = list(reversed(other.deck))
        viewer = SPECTATOR if me is None else seat(me)
        assert G.view(s, viewer) == G.view(other, viewer)
        for record in table.records:
            data = msgspec.to_builtins(G.event_view(record.event, viewer))
            if data["type"] in ("cards_dealt", "cards_drawn", "card_kept") and data["seat"] != me:
                assert data.get("cards") is None and data.get("card") is None
            if data["type"] == "cards_passed" and me is None:
                assert data["passed"] is None
    assert G.view(s, AUDITOR).deck == list(s.deck)


@PROPERTY
@given(game_plans)
def test_hidden_cards_never_reach_another_seat_or_a_spectator(plan: Any) -> None:
    play(plan, assert_hidden)


@PROPERTY
@given(game_plans)
def test_a_clone_is_equal_and_shares_nothing_mutable(plan: Any) -> None:
    from domain.curious_cargo.state import clone

    state = play(plan).state
    copy = clone(state)
    assert copy == state and decoder(G.state_type).decode(msgspec.json.encode(state)) == state
    for p in copy.players:
        p.hand.append("x")
        p.storage[0].append("x")
        p.splitters["red"] += 1
        for t in p.shipping_lane + p.receiving_lane:
            t.goods[9] = "red"
    copy.supply.splitters["teal"] += 1
    assert decoder(G.state_type).decode(msgspec.json.encode(state)) == state and copy != state


placed = st.fixed_dictionaries(
    {"at": squares, "rot": st.sampled_from([0, 90, 180, 270, 1])},
    optional={"tile": st.sampled_from([*TILE_IDS[:12], "Q1"]),
              "splitter": st.sampled_from(SPLITTER_COLOURS)},
)
trucks = st.fixed_dictionaries(
    {"card": st.sampled_from([*CARD_IDS[:8], "T99"]), "rear": st.integers(-1, 11)},
    optional={"goods": st.dictionaries(st.sampled_from(["0", "1", "2", "7"]),
                                       st.sampled_from(SPLITTER_COLOURS), max_size=2)},
)
player_positions = st.fixed_dictionaries(
    {},
    optional={
        "board": st.lists(placed, max_size=4),
        "hand": st.lists(st.sampled_from(TILE_IDS[:15]), max_size=3),
        "storage": st.lists(st.lists(st.sampled_from(TILE_IDS[10:30]), max_size=2), max_size=4),
        "cards": st.lists(st.sampled_from(CARD_IDS), max_size=3),
        "tokens": st.dictionaries(st.sampled_from(["construction", "trucking", "gold"]),
                                  st.integers(-1, 11), max_size=2),
        "forklift": st.integers(-1, 11),
        "shipped": st.dictionaries(st.sampled_from(SPLITTER_COLOURS), st.integers(-1, 7),
                                   max_size=3),
        "received": st.dictionaries(st.sampled_from(SPLITTER_COLOURS), st.integers(-1, 5),
                                    max_size=3),
        "splitters": st.dictionaries(st.sampled_from([*SPLITTER_COLOURS, "gold"]),
                                     st.integers(-1, 3), max_size=3),
        "shipping_lane": st.lists(trucks, max_size=2),
        "receiving_lane": st.lists(trucks, max_size=2),
    },
)
positions = st.fixed_dictionaries(
    {"players": st.lists(player_positions, min_size=1, max_size=3)},
    optional={
        "phase": st.sampled_from(["construction", "trucking"]),
        "at": st.sampled_from(["phase_start", "turn"]),
        "turn": st.integers(-1, 3),
        "top": st.integers(-1, 2),
        "round": st.integers(0, 3),
        "pending": st.lists(st.integers(-1, 2), max_size=2),
        "order": st.lists(st.integers(0, 2), max_size=3),
        "bag": st.lists(st.sampled_from(TILE_IDS), max_size=3),
        "options": st.fixed_dictionaries(
            {}, optional={"board": st.sampled_from([1, 2, 5, 6, 7]),
                          "colours": st.sampled_from([2, 3, 4])}),
    },
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions)
def test_a_hostile_position_loads_or_is_refused_as_invalid(raw: dict[str, Any]) -> None:
    from domain.kernel import CommandError

    try:
        table = LocalGame.from_position(G, bytes(32), G.decode_position(raw))
    except CommandError as error:
        assert error.code in ("position.invalid", "position.out_of_range"), error
        return
    for who in G.to_act(table.state):
        G.legal(table.state, who)
    G.view(table.state, SPECTATOR)
    assert G.fold(table.events) == table.state
