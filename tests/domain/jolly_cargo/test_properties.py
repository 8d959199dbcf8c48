"""Properties over random games of CARGO (hypothesis).

A random game is a seed, a player count, options, a prefix length and a list of choice
indices. A seeded bot first plays ``prefix`` uniformly random legal commands (so examples land
anywhere from set-up to the end of a game); then, for each index, one seat that is to act plays
``legal[index % len(legal)]``, with the property checked after each of those commands.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import msgspec
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from domain.jolly_cargo import JOLLY_CARGO
from domain.jolly_cargo import commands as cmd
from domain.jolly_cargo.board import COLOURS, DIRECTIONS, FILES
from domain.jolly_cargo.options import Options
from domain.jolly_cargo.pieces import crew
from domain.jolly_cargo.state import State
from domain.kernel import AUDITOR, SPECTATOR, CommandError, LocalGame, Rng, RuleError, seat
from tests.support.budget import examples

AnyGame = LocalGame[Any, Any, Any, Any, Any]
PROPERTY = settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

game_plans = st.tuples(
    st.binary(min_size=32, max_size=32),
    st.integers(2, 4),
    st.builds(
        Options,
        crate_placement=st.sampled_from(["players", "random"]),
        fast_variant=st.booleans(),
    ),
    st.integers(0, 900),
    st.lists(st.integers(0, 1 << 16), max_size=40),
)
Plan = tuple[bytes, int, Options, int, list[int]]


def play(plan: Plan, check: Any = None, *, check_prefix: bool = False) -> AnyGame:
    """Play the plan (calling ``check`` after commands) and return the table."""
    seed, seats, options, prefix, choices = plan
    table: AnyGame = LocalGame.new(JOLLY_CARGO, seed, seats, options)
    bot = Rng(seed, 0)
    for step, choice in enumerate([bot.below(1 << 16) for _ in range(prefix)] + choices):
        waiting = JOLLY_CARGO.to_act(table.state)
        if not waiting:
            break
        who = waiting[choice % len(waiting)]
        legal = JOLLY_CARGO.legal(table.state, who)
        table.submit(who, legal[(choice // 7) % len(legal)])
        if check is not None and (check_prefix or step >= prefix):
            check(table)
    event(f"phase reached: {table.state.phase}")
    return table


# --- conservation ----------------------------------------------------------------------------
def assert_conserved(table: AnyGame) -> None:
    s: State = table.state
    crates_out = s.seats * s.crates_per_player if s.phase != "crates" else len(s.crates)
    held = Counter(h.colour for h in s.held)
    sea = Counter(s.sea)
    for player in s.players:
        if player.colour is None:
            continue
        c = player.colour
        accounted = s.crates_on_dock(c) + held[c] + sea[c] + player.loaded
        assert accounted == s.crates_per_player, (c, accounted)
    assert len(s.crates) + len(s.held) + len(s.sea) + sum(p.loaded for p in s.players) == crates_out
    if s.phase in ("play", "finished"):
        places = Counter([*s.workers, *s.water, *s.doctor, *s.removed])
        everyone = [w for p in s.players for w in crew(p.colour)]  # type: ignore[arg-type]
        assert sorted(places) == sorted(everyone)
        assert all(n == 1 for n in places.values()), "a worker is in two places"
        if not s.options.fast_variant:
            assert s.removed == []


@PROPERTY
@given(game_plans)
def test_crates_and_workers_are_conserved(plan: Any) -> None:
    play(plan, assert_conserved, check_prefix=True)


# --- legal commands are accepted; everything else is rejected with a code ---------------------
def normal(command: Any) -> Any:
    if isinstance(command, cmd.Move):
        return cmd.Move(sorted(command.workers), list(command.steps))
    return command


@PROPERTY
@given(game_plans)
def test_every_legal_command_is_accepted(plan: Any) -> None:
    def check(table: AnyGame) -> None:
        for who in range(table.state.seats):
            for command in JOLLY_CARGO.legal(table.state, who)[:40]:
                events = JOLLY_CARGO.decide(table.state, who, command, table.rng())
                # Accepted: it causes events, and they fold into a different state.
                assert events
                assert JOLLY_CARGO.fold(events, table.state) != table.state

    play(plan, check)


squares = st.one_of(
    st.builds(lambda f, r: f + r, st.sampled_from(FILES), st.sampled_from("12345678")),
    st.sampled_from(["", "i9", "a0", "A1", "a10", "zz"]),
)
workers = st.one_of(
    st.sampled_from(sorted(w for c in COLOURS for w in crew(c))), st.sampled_from(["", "red-X"])
)
step_lists = st.lists(
    st.builds(cmd.Step, st.sampled_from(DIRECTIONS), st.sampled_from(["move", "push", "pull"])),
    max_size=3,
)
commands = st.one_of(
    st.builds(cmd.PlaceCrate, squares),
    st.builds(cmd.ChooseShip, st.sampled_from(COLOURS)),
    st.builds(cmd.PlaceWorker, workers, squares),
    st.builds(cmd.ReturnWorker, workers, squares),
    st.builds(cmd.Move, st.lists(workers, max_size=4), step_lists),
    st.builds(cmd.PlaceHeldCrate, st.sampled_from(COLOURS), squares),
    st.just(cmd.EndTurn()),
)


@PROPERTY
@given(game_plans, st.lists(commands, min_size=1, max_size=25), st.integers(-1, 4))
def test_a_command_is_accepted_exactly_when_it_is_legal(
    plan: Any, tries: list[Any], who: int
) -> None:
    table = play(plan)
    state = table.state
    legal = [normal(c) for c in JOLLY_CARGO.legal(state, who)] if 0 <= who < state.seats else []
    for command in tries:
        try:
            JOLLY_CARGO.decide(state, who, command, table.rng())
        except RuleError as error:
            assert error.code.startswith("rule."), error.code
            assert error.message
            assert normal(command) not in legal, (command, error.code)
        else:
            assert normal(command) in legal, command


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
shaped = st.fixed_dictionaries(
    {"type": st.sampled_from(["move", "place_crate", "end_turn", "return_worker", "nope"])},
    optional={"workers": json_values, "steps": json_values, "square": json_values},
)


@settings(max_examples=examples(300), deadline=None)
@given(st.one_of(json_values, shaped, st.binary(max_size=60)))
def test_malformed_input_is_a_command_error_never_a_crash(raw: Any) -> None:
    table: AnyGame = LocalGame.new(JOLLY_CARGO, bytes(32), 2)
    try:
        command = JOLLY_CARGO.decode_command(raw)
    except CommandError as error:
        assert error.code == "command.invalid"
        return
    try:
        JOLLY_CARGO.decide(table.state, 0, command, table.rng())
    except RuleError as error:
        assert error.code.startswith("rule.")


# --- folding and determinism -----------------------------------------------------------------
@PROPERTY
@given(game_plans)
def test_folding_the_events_from_scratch_gives_the_same_state(plan: Any) -> None:
    table = play(plan)
    assert JOLLY_CARGO.fold(table.events) == table.state
    encoded = [msgspec.json.encode(e) for e in table.events]
    decoded = [JOLLY_CARGO.decode_event(raw) for raw in encoded]
    assert JOLLY_CARGO.fold(decoded) == table.state


@PROPERTY
@given(game_plans)
def test_same_seed_and_commands_give_byte_identical_events(plan: Any) -> None:
    first = play(plan)
    second = play(plan)
    assert [msgspec.json.encode(e) for e in first.events] == [
        msgspec.json.encode(e) for e in second.events
    ]


# --- hidden information ----------------------------------------------------------------------
def assert_face_down_stays_hidden(table: AnyGame) -> None:
    s: State = table.state
    if not s.crates_face_down or not s.crates:
        return
    # Recolour every face-down crate: what a non-auditor sees must not change at all.
    other = s.copy()
    other.crates = {sq: COLOURS[(COLOURS.index(c) + 1) % 4] for sq, c in s.crates.items()}
    viewers = [SPECTATOR, *(seat(i) for i in range(s.seats))]
    for viewer in viewers:
        assert JOLLY_CARGO.view(s, viewer) == JOLLY_CARGO.view(other, viewer)
        for record in table.records:
            data = msgspec.to_builtins(JOLLY_CARGO.event_view(record.event, viewer))
            if data["type"] == "crate_placed":
                assert data["colour"] is None
    assert JOLLY_CARGO.view(s, AUDITOR) != JOLLY_CARGO.view(other, AUDITOR)


@PROPERTY
@given(game_plans)
def test_no_one_but_an_auditor_sees_a_face_down_crate(plan: Any) -> None:
    play(plan, assert_face_down_stays_hidden, check_prefix=True)
