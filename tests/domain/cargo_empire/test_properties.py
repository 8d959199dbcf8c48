"""Properties over random games of Cargo Empire (hypothesis).

A random game is a seed, a player count, options, a prefix length and a list of choice indices. A
seeded bot first plays ``prefix`` uniformly random legal commands; then, for each index, the seat
to act plays ``legal[index % len(legal)]``, with the property checked after each command."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.cargo_empire import CARGO_EMPIRE
from domain.cargo_empire import commands as cmd
from domain.cargo_empire.board import CITIES, COLOURS, COMPONENTS, NAMES, VEHICLES
from domain.cargo_empire.events import PostRetired
from domain.cargo_empire.options import Options
from domain.cargo_empire.state import State
from domain.kernel import AUDITOR, SPECTATOR, LocalGame, Rng, RuleError, seat
from tests.support.budget import examples

AnyGame = LocalGame[Any, Any, Any, Any, Any]
PROPERTY = settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

game_plans = st.tuples(
    st.binary(min_size=32, max_size=32),
    st.integers(1, 5),
    st.builds(Options, starting_posts=st.sampled_from(["choose", "random"])),
    st.integers(0, 70),
    st.lists(st.integers(0, 1 << 16), max_size=20),
)
Plan = tuple[bytes, int, Options, int, list[int]]


def play(plan: Plan, check: Any = None) -> AnyGame:
    seed, seats, options, prefix, choices = plan
    table: AnyGame = LocalGame.new(CARGO_EMPIRE, seed, seats, options)
    bot = Rng(seed, 0)
    for choice in [bot.below(1 << 16) for _ in range(prefix)] + choices:
        waiting = CARGO_EMPIRE.to_act(table.state)
        if not waiting:
            break
        legal = CARGO_EMPIRE.legal(table.state, waiting[0])
        table.submit(waiting[0], legal[choice % len(legal)])
        if check is not None:
            check(table)
    return table


def assert_conserved(table: AnyGame) -> None:
    s: State = table.state
    for colour in COLOURS:
        on_tiles = sum(c.cubes for n, c in s.cities.items()
                       if c.level < 3 and (CITIES[n].lv1 if c.level == 1 else CITIES[n].lv2).cargo
                       == colour)
        unflipped = sum(CITIES[n].lv2.cubes for n, c in s.cities.items()
                        if c.level == 1 and CITIES[n].lv2.cargo == colour)
        total = sum(CITIES[n].lv1.cubes * (CITIES[n].lv1.cargo == colour)
                    + CITIES[n].lv2.cubes * (CITIES[n].lv2.cargo == colour) for n in NAMES)
        assert on_tiles + unflipped + s.cubes_delivered[colour] + s.cubes_removed[colour] == total
    for who, p in enumerate(s.players):
        on_map = sum(s.posts_in(n).count(who) for n in NAMES)
        retired = sum(1 for e in table.events if isinstance(e, PostRetired) and e.seat == who)
        assert on_map + p.supply + retired == s.posts_per_player
    for kind in VEHICLES:
        held = sum(p.hand.get(kind) for p in s.players)
        seen = held + s.deck.get(kind) + s.discard.get(kind) + s.market.count(kind)
        assert seen == getattr(COMPONENTS.deck, kind)
    for n, c in s.cities.items():
        assert len(c.posts) <= CITIES[n].post_spaces


@PROPERTY
@given(game_plans)
def test_cubes_posts_and_cards_are_conserved(plan: Any) -> None:
    play(plan, assert_conserved)


@PROPERTY
@given(game_plans)
def test_every_legal_command_is_accepted(plan: Any) -> None:
    def check(table: AnyGame) -> None:
        for who in range(table.state.seats):
            for command in CARGO_EMPIRE.legal(table.state, who):
                events = CARGO_EMPIRE.decide(table.state, who, command, table.rng())
                # Accepted: it causes events, they fold, and the command's turn is over.
                assert events and type(events[-1]).__name__ in ("TurnEnded", "GameEnded",
                                                                 "PostPlaced", "PlayBegan")
                after = CARGO_EMPIRE.fold(events, table.state)
                before = table.state
                assert (after.round, after.turn, after.placed) > (
                    before.round, before.turn, before.placed
                )

    play(plan, check)


cities = st.sampled_from([*NAMES, "Rome"])
legs = st.lists(st.builds(cmd.Leg, st.sampled_from(VEHICLES), cities), max_size=5)
moves = st.builds(cmd.Moves, st.integers(-1, 3), st.integers(0, 3), st.integers(0, 3))
commands = st.one_of(
    st.builds(cmd.PlacePost, cities),
    st.builds(cmd.Gather, st.one_of(st.none(), st.integers(-1, 5))),
    st.builds(cmd.Deliver, cities, cities, st.sampled_from(COLOURS), legs, moves),
)


@PROPERTY
@given(game_plans, st.lists(commands, min_size=1, max_size=30), st.integers(-1, 5))
def test_a_command_is_accepted_exactly_when_it_is_legal(
    plan: Any, tries: list[Any], who: int
) -> None:
    table = play(plan)
    state = table.state
    legal = CARGO_EMPIRE.legal(state, who) if 0 <= who < state.seats else []
    # Also try some near-miss deliveries: the legal ones with a leg dropped or the bonus moved.
    extra = [msgspec.structs.replace(c, route=c.route[:-1]) for c in legal[:5]
             if isinstance(c, cmd.Deliver)]
    for command in [*tries, *legal[:10], *extra]:
        try:
            CARGO_EMPIRE.decide(state, who, command, table.rng())
        except RuleError as error:
            assert error.code.startswith("rule."), error.code
            assert command not in legal, (command, error.code)
        else:
            assert command in legal, command


@PROPERTY
@given(game_plans)
def test_folding_the_events_from_scratch_gives_the_same_state(plan: Any) -> None:
    table = play(plan)
    assert CARGO_EMPIRE.fold(table.events) == table.state
    decoded = [CARGO_EMPIRE.decode_event(msgspec.json.encode(e)) for e in table.events]
    assert CARGO_EMPIRE.fold(decoded) == table.state
    if table.state.phase == "play":
        pos = CARGO_EMPIRE.export_position(table.state)
        again = LocalGame.from_position(CARGO_EMPIRE, bytes(32), pos).state
        assert again.players == table.state.players and again.cities == table.state.cities


@PROPERTY
@given(game_plans)
def test_same_seed_and_commands_give_byte_identical_events(plan: Any) -> None:
    first, second = play(plan), play(plan)
    assert [msgspec.json.encode(e) for e in first.events] == [
        msgspec.json.encode(e) for e in second.events
    ]


def assert_hidden(table: AnyGame) -> None:
    s: State = table.state
    if s.phase == "finished":
        return
    for me in [None, *range(s.seats)]:
        # Change every hand and private card set but ``me``'s: ``me`` must see no difference.
        other = s.copy()
        for who, p in enumerate(other.players):
            if who != me:
                p.hand.truck, p.hand.ship = p.hand.ship, p.hand.truck + 1
                p.hand.train -= 1
                p.private = ["Nowhere"] * len(p.private)
        viewer = SPECTATOR if me is None else seat(me)
        assert CARGO_EMPIRE.view(s, viewer) == CARGO_EMPIRE.view(other, viewer)
        for record in table.records:
            data = msgspec.to_builtins(CARGO_EMPIRE.event_view(record.event, viewer))
            if data["type"] in ("cards_drawn", "cities_dealt") and data["seat"] != me:
                assert data.get("cards") is None and data.get("cities") is None
    assert CARGO_EMPIRE.view(s, AUDITOR).players[0].hand is not None


@PROPERTY
@given(game_plans)
def test_hidden_cards_never_reach_another_seat_or_a_spectator(plan: Any) -> None:
    play(plan, assert_hidden)
