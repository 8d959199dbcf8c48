"""Queries (survey, route planner, auto move preview): pure answers that match what the
matching command does, and never change the state."""

from __future__ import annotations

import itertools

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.empire_builder import EMPIRE_BUILDER
from domain.empire_builder.board import MAP
from domain.kernel import SPECTATOR, RuleError, seat

from .support import at, centre, play, ring, route

QUICK = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
RINGS = [m for name in MAP.majors for m in ring(name)]


def ask(t: object, viewer: object, query: dict[str, object]) -> dict[str, object]:
    state = t.state  # type: ignore[attr-defined]
    before = msgspec.json.encode(state)
    answer = EMPIRE_BUILDER.ask(state, viewer, EMPIRE_BUILDER.decode_query(query))  # type: ignore[arg-type]
    assert msgspec.json.encode(state) == before  # nothing changed
    return answer


@st.composite
def walks(draw: st.DrawFn) -> tuple[list[int], int]:
    path = [draw(st.sampled_from(RINGS))]
    for _ in range(draw(st.integers(1, 8))):
        options = sorted(MAP.adjacent[path[-1]])
        if not options:
            break
        # mostly onward, sometimes a milepost that is no neighbour (a survey names the break)
        if draw(st.integers(0, 9)) == 0:
            path.append(draw(st.integers(-2, MAP.size + 2)))
            break
        path.append(draw(st.sampled_from(options)))
    return path, draw(st.integers(0, 60))


@QUICK
@given(walks())
def test_survey_cost_is_what_the_build_is_charged(plan: tuple[list[int], int]) -> None:
    path, money = plan
    t = at({"players": [{"money": money}, {}]})
    answer = ask(t, seat(0), {"type": "survey", "path": path})
    problem = answer["problem"]
    if problem is None:
        version = t.version
        events = play(t, 0, {"type": "build", "path": path, "cost": answer["cost"]})
        assert EMPIRE_BUILDER.to_builtins(events[0])["cost"] == answer["cost"]
        assert t.version == version + 1
    else:
        assert isinstance(problem, dict)
        with pytest.raises(RuleError) as caught:
            play(t, 0, {"type": "build", "path": path})
        assert caught.value.code == problem["code"]
        assert caught.value.details.get("step") == problem.get("step")


def test_survey_names_the_first_rule_broken() -> None:
    a = ring("Chicago")[0]
    far = route(a, ring("Dallas")[0])
    t = at({"players": [{}, {}]})
    answer = ask(t, seat(0), {"type": "survey", "path": far})
    assert answer["problem"]["code"] == "rule.turn_limit"  # type: ignore[index]
    assert answer["cost"] == sum(MAP.entry_cost(x, y) for x, y in itertools.pairwise(far))
    assert ask(t, seat(0), {"type": "survey", "path": [a]})["problem"]["code"] == "rule.empty_path"  # type: ignore[index]


@pytest.mark.parametrize("target", ["Denver", "Memphis", "Boston", "Phoenix"])
def test_the_planners_path_built_costs_what_it_said(target: str) -> None:
    t = at({"players": [{"money": 500}, {}]})
    answer = ask(t, seat(0), {"type": "plan", "to": target})
    path = answer["path"]
    assert isinstance(path, list) and MAP.city_at[path[-1]] == target
    assert MAP.is_major(path[0])
    # over the $20M a turn: the problem says so, and the builds along it cost the total
    total = 0
    while True:
        ans = ask(t, seat(0), {"type": "plan", "to": target})
        if ans["cost"] == 0:
            break
        p, problem = ans["path"], ans["problem"]
        assert isinstance(p, list)
        if problem is None:
            play(t, 0, {"type": "build", "path": p, "cost": ans["cost"]})
            total += int(ans["cost"])  # type: ignore[call-overload]
            assert target in {MAP.city_at[m] for m in p}
            break
        # build the affordable head of it and carry on next turn
        assert problem["code"] == "rule.turn_limit"  # type: ignore[index]
        head = p[: problem["step"]]  # type: ignore[index]
        if len(head) >= 2:
            survey = ask(t, seat(0), {"type": "survey", "path": head})
            play(t, 0, {"type": "build", "path": head, "cost": survey["cost"]})
            total += int(survey["cost"])  # type: ignore[call-overload]
        play(t, 0, {"type": "end_turn"})
        play(t, 1, {"type": "end_turn"})
    assert 500 - t.state.players[0].money == total


def test_plan_from_own_track_prefers_it_and_a_reached_target_costs_nothing() -> None:
    a = ring("Chicago")[0]
    line = route(a, centre("Memphis"))[:4]
    t = at({"players": [{"track": [line]}, {}]})
    answer = ask(t, seat(0), {"type": "plan", "to": line[2]})
    assert answer == {"type": "plan", "path": [line[2]], "cost": 0, "problem": None}
    answer = ask(t, seat(0), {"type": "plan", "to": "Memphis"})
    assert answer["problem"] is None or answer["problem"]["code"] == "rule.turn_limit"  # type: ignore[index]


def test_bad_queries() -> None:
    t = at({"players": [{}, {}]})
    from domain.kernel import CommandError

    with pytest.raises(CommandError) as caught:
        EMPIRE_BUILDER.decode_query({"type": "telepathy"})
    assert caught.value.code == "query.invalid"
    with pytest.raises(RuleError) as refused:
        ask(t, seat(0), {"type": "plan", "to": "Atlantis"})
    assert refused.value.code == "rule.no_such_city"
    with pytest.raises(RuleError) as refused:
        ask(t, seat(0), {"type": "plan", "to": MAP.size})
    assert refused.value.code == "rule.no_such_milepost"
    with pytest.raises(RuleError) as refused:
        ask(t, SPECTATOR, {"type": "plan", "to": "Denver"})
    assert refused.value.code == "query.needs_seat"


def test_auto_move_preview_is_the_commands_move() -> None:
    start = ring("Chicago")[0]
    track = route(start, ring("Dallas")[0])[:7]
    t = at({"players": [{"train": start}, {"track": [track], "money": 60}]})
    answer = ask(t, seat(0), {"type": "auto_move", "toward": track[1]})
    assert answer["stops_at"] == track[-1] and answer["fees"] == [{"to": 1, "amount": 4}]
    events = play(t, 0, {"type": "auto_move", "toward": track[1]})
    assert EMPIRE_BUILDER.to_builtins(events[0])["path"] == answer["path"]
    # back the other way: 3 moves left, the fee already paid this turn
    answer = ask(t, seat(0), {"type": "auto_move", "toward": track[-2]})
    assert answer["path"] == [track[5], track[4], track[3]] and answer["fees"] == []
    assert answer["problem"] is None
    answer = ask(t, seat(1), {"type": "auto_move", "toward": track[1]})
    assert answer["problem"]["code"] == "rule.empty_path"  # type: ignore[index]
