"""The kernel's shared mechanics: registry, command decoding, the table, viewers."""

from __future__ import annotations

import msgspec
import pytest

from domain.jolly_cargo.commands import EndTurn, Move, Step
from domain.kernel import (
    AUDITOR,
    SPECTATOR,
    BotGameStalled,
    CommandError,
    LocalGame,
    Rng,
    RuleError,
    UnknownGame,
    best_by_trial,
    decoder,
    play_bot_game,
    play_random_game,
    seat,
)
from domain.registry import all_games, get_game


def test_registry_knows_games_by_id() -> None:
    game = get_game("jolly-cargo")
    assert game.id == "jolly-cargo"
    assert [g.id for g in all_games()] == [
        "jolly-cargo",
        "cargo-empire",
        "empire-builder",
        "curious-cargo",
    ]
    with pytest.raises(UnknownGame):
        get_game("chess")


def test_commands_decode_into_typed_tagged_unions() -> None:
    game = get_game("jolly-cargo")
    assert game.decode_command({"type": "end_turn"}) == EndTurn()
    raw = b'{"type": "move", "workers": ["red-M"], "steps": [{"dir": "E", "kind": "push"}]}'
    assert game.decode_command(raw) == Move(["red-M"], [Step("E", "push")])


@pytest.mark.parametrize(
    "raw",
    [
        b"{not json",
        b"[]",
        b'{"type": "fly"}',
        b'{"workers": ["red-M"], "steps": []}',
        b'{"type": "move", "workers": "red-M", "steps": []}',
        b'{"type": "move", "workers": ["red-M"], "steps": [{"dir": "NE"}]}',
        b'{"type": "end_turn", "extra": 1}',
        {"type": "place_crate", "square": 3},
    ],
)
def test_malformed_commands_are_command_errors(raw: object) -> None:
    with pytest.raises(CommandError) as caught:
        get_game("jolly-cargo").decode_command(raw)  # type: ignore[arg-type]
    assert caught.value.code == "command.invalid"
    assert caught.value.message


def test_options_and_positions_decode_or_name_what_is_wrong() -> None:
    game = get_game("jolly-cargo")
    assert game.decode_options(None) == game.options_type()
    with pytest.raises(CommandError) as caught:
        game.decode_options({"fast_variant": "yes"})
    assert caught.value.code == "options.invalid"
    with pytest.raises(CommandError) as caught:
        game.decode_position({"players": []})
    assert caught.value.code == "position.invalid"


def test_schemas_are_json_schema_documents() -> None:
    game = get_game("jolly-cargo")
    for schema in (game.options_schema(), game.position_schema(), game.command_schema()):
        assert "$defs" in schema or "properties" in schema


def test_table_numbers_events_and_changes_nothing_on_a_rejected_command() -> None:
    game = get_game("jolly-cargo")
    table = LocalGame.new(game, bytes(32), 2)
    assert [r.number for r in table.records] == list(range(1, table.version + 1))
    before = table.version
    with pytest.raises(RuleError):
        table.submit(1, game.legal(table.state, 0)[0])  # seat 1 acting out of turn
    assert table.version == before
    table.submit(0, game.legal(table.state, 0)[0])
    assert table.records[-1].seat == 0 and table.records[-1].number == table.version


def test_bot_games_are_reproducible() -> None:
    game = get_game("jolly-cargo")
    a, result_a = play_random_game(game, bytes([7]) * 32, 3)
    b, result_b = play_random_game(game, bytes([7]) * 32, 3)
    assert result_a == result_b
    assert [r.event for r in a.records] == [r.event for r in b.records]


class _Refused:
    """A bot that sends a command the rules refuse: seat 1 acting out of turn's first command."""

    def choose(self, state: object, seat: int) -> object:
        return EndTurn()


def test_bot_tables_play_per_seat_bots_and_refuse_what_the_rules_refuse() -> None:
    from domain.jolly_cargo.greedy import GreedyBot

    game = get_game("jolly-cargo")
    seed = bytes([9]) * 32
    a, result_a = play_bot_game(game, seed, [GreedyBot(Rng(seed, 10)), GreedyBot(Rng(seed, 11))])
    b, result_b = play_bot_game(game, seed, [GreedyBot(Rng(seed, 10)), GreedyBot(Rng(seed, 11))])
    assert result_a == result_b  # seeded: the same game again
    assert [r.event for r in a.records] == [r.event for r in b.records]
    with pytest.raises(RuleError):  # a crate is placed first: end_turn is refused
        play_bot_game(game, seed, [_Refused(), _Refused()])


def test_best_by_trial_skips_refused_commands_and_breaks_ties_by_the_rng() -> None:
    game = get_game("jolly-cargo")
    table = LocalGame.new(game, bytes(32), 2)
    legal = game.legal(table.state, 0)
    trial = Rng(bytes(32), 1)
    picks = {
        repr(best_by_trial(game, table.state, 0, [EndTurn(), *legal], lambda s: 0.0,
                           Rng(bytes([n]) * 32, 0), trial))
        for n in range(8)
    }
    assert len(picks) > 1 and repr(EndTurn()) not in picks  # all tie; end_turn is refused
    first = legal[0]
    assert best_by_trial(game, table.state, 0, legal,
                         lambda s: 1.0 if s.crates.get(first.square) else 0.0,  # type: ignore[attr-defined]
                         Rng(bytes(32), 0), trial) == first
    with pytest.raises(BotGameStalled):
        best_by_trial(game, table.state, 0, [EndTurn()], lambda s: 0.0, Rng(bytes(32), 0), trial)


def test_a_state_round_trips_through_json() -> None:
    game = get_game("jolly-cargo")
    table, _ = play_random_game(game, bytes([3]) * 32, 2)
    for record in table.records[::50]:
        state = game.fold(r.event for r in table.records[: record.number])
        assert decoder(game.state_type).decode(msgspec.json.encode(state)) == state


@pytest.mark.parametrize("game_id", [g.id for g in all_games()])
def test_every_question_is_answered_after_every_event(game_id: str) -> None:
    """Replays look at the state after *each* event, including states inside one decision
    (between two events it appended together): to_act, outcome, every view and legal must
    answer there too, for every registered game."""
    game = get_game(game_id)
    seats = max(game.min_seats, 2) if game.max_seats > 1 else 1
    table, _ = play_random_game(game, bytes([11]) * 32, seats)
    state = None
    last = table.records[-1].number
    for record in table.records:
        state = game.evolve(state, record.event)
        for seat_no in game.to_act(state):
            assert all(game.to_builtins(c)["type"] for c in game.legal(state, seat_no))
        # The outcome is there exactly after the last event, and then nobody is to act.
        assert (game.outcome(state) is not None) == (record.number == last)
        if record.number == last:
            assert game.to_act(state) == []
        kind = game.to_builtins(record.event)["type"]
        for viewer in (SPECTATOR, AUDITOR, *(seat(i) for i in range(seats))):
            assert msgspec.json.decode(msgspec.json.encode(game.view(state, viewer)))
            assert msgspec.to_builtins(game.event_view(record.event, viewer))["type"] == kind


@pytest.mark.parametrize("game_id", [g.id for g in all_games()])
def test_a_question_from_a_seat_the_game_does_not_have_is_a_rule_error(game_id: str) -> None:
    """``Game.ask`` refuses a seat the game does not have (``rule.no_such_seat``) for every
    registered game, before the game looks at the question: no IndexError from a seat's list."""
    game = get_game(game_id)
    seats = max(game.min_seats, 2) if game.max_seats > 1 else 1
    table = LocalGame.new(game, bytes([5]) * 32, seats)
    asked = [
        {"type": "auto_move", "toward": 0},
        {"type": "plan", "to": 0},
        {"type": "survey", "path": [0, 1]},
    ]  # Empire Builder's; other games answer none
    queries = [game.decode_query(q) for q in asked] if game.query_type else [None]
    for query in queries:
        for bad in (seats, seats + 3, -1):
            with pytest.raises(RuleError) as caught:
                game.ask(table.state, seat(bad), query)
            assert caught.value.code == "rule.no_such_seat", caught.value.message
        for good in (SPECTATOR, seat(seats - 1)):  # a seat it has, or a spectator, goes on
            try:
                game.ask(table.state, good, query)
            except RuleError as error:
                assert error.code != "rule.no_such_seat"
    assert game.seats(table.state) == seats


@pytest.mark.parametrize("game_id", [g.id for g in all_games()])
def test_decide_and_evolve_never_change_the_state_they_are_given(game_id: str) -> None:
    """One emit discipline (a ``Run`` on a working copy) for all four games: whatever a
    decision does — accepted, or refused part-way after emitting — and whatever ``evolve``
    does, the state handed in is the same afterwards, byte for byte. (The service decides on
    its cached table: a decision that changed it would corrupt every later read and move.)"""
    game = get_game(game_id)
    seed = bytes([5]) * 32
    table = LocalGame.new(game, seed, game.min_seats, game.decode_options(game.bot_options))
    chooser = Rng(seed, 0)
    for _ in range(120):
        state = table.state
        if game.outcome(state) is not None:
            break
        waiting = game.to_act(state)
        seat_now = chooser.choice(waiting)
        legal = game.legal(state, seat_now)
        tried = [chooser.choice(legal) for _ in range(4)]
        others = [s for s in range(game.seats(state)) if s not in waiting]
        before = msgspec.json.encode(state)
        for command in tried:
            for by in [seat_now, *others[:1]]:  # another seat: refused by the rules
                try:
                    events = game.decide(state, by, command, table.rng())
                except RuleError:
                    events = []
                assert msgspec.json.encode(state) == before, (game_id, by, command)
                after = state
                for event in events:
                    after = game.evolve(after, event)
                assert msgspec.json.encode(state) == before, (game_id, "evolve", command)
        table.submit(seat_now, tried[0])
