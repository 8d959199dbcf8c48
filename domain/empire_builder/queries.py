"""Questions a seat asks about the current state, answered without appending anything
(``POST /v1/games/{id}/queries``): the manual's "survey", a route planner and the auto move
preview. Every answer is what the matching command would do now: a survey's ``cost`` is what a
``build`` of the same path is charged, the planner's path is a legal ``build`` (within the turn's
money) costing what it says, and the auto move preview is the ``auto_move`` command's move.

A seat that is not to act asks as at the start of its next turn (nothing spent or moved yet)."""

from __future__ import annotations

import heapq
import itertools
from typing import Any, ClassVar

import msgspec

from domain.kernel import RuleError, Viewer, seat_of

from .board import ENTRY_COST, MAP, edge_key, parse_milepost
from .events import Fee
from .legal import build_starts
from .rules import auto_path, build_event, move_event, step_problem
from .state import State, Turn


class SurveyAnswer(msgspec.Struct, frozen=True, tag="survey", tag_field="type"):
    """``cost``: what a ``build`` of the path is charged (up to its first pair that is no
    buildable section); ``problem``: the first rule the build would break (``code``,
    ``message`` and the rule's details), null: it would be accepted."""

    cost: int
    problem: dict[str, Any] | None


class PlanAnswer(msgspec.Struct, frozen=True, tag="plan", tag_field="type"):
    """The cheapest legal build (``path`` null: none reaches ``to``), its ``cost``, and what a
    ``build`` of it would break now (``problem``; null: accepted)."""

    path: list[int] | None
    cost: int | None
    problem: dict[str, Any] | None


class AutoMoveAnswer(msgspec.Struct, frozen=True, tag="auto_move", tag_field="type"):
    """Where ``auto_move`` would go (``path``, empty when refused: ``problem`` says why), the
    milepost it stops at (the train's, null before it is placed) and the fees it pays."""

    path: list[int]
    stops_at: int | None
    fees: list[Fee]
    problem: dict[str, Any] | None


class Survey(msgspec.Struct, frozen=True, tag="survey", tag_field="type",
             forbid_unknown_fields=True):
    """What building along ``path`` would cost, and the first rule it would break."""

    answer_type: ClassVar[type[SurveyAnswer]] = SurveyAnswer
    path: list[int]


class Plan(msgspec.Struct, frozen=True, tag="plan", tag_field="type",
           forbid_unknown_fields=True):
    """The cheapest legal build from own track (or a major city) to ``to``: a milepost id or a
    city's name."""

    answer_type: ClassVar[type[PlanAnswer]] = PlanAnswer
    to: int | str


class AutoMovePreview(msgspec.Struct, frozen=True, tag="auto_move", tag_field="type",
                      forbid_unknown_fields=True):
    """Where ``auto_move {toward}`` would stop and the fees it would pay."""

    answer_type: ClassVar[type[AutoMoveAnswer]] = AutoMoveAnswer
    toward: int


Query = Survey | Plan | AutoMovePreview
#: What ``ask`` answers, by the query's ``type`` (each query's ``answer_type``).
Answer = SurveyAnswer | PlanAnswer | AutoMoveAnswer


def _as_seat(state: State, viewer: Viewer) -> tuple[State, int]:
    seat = seat_of(viewer)
    if seat is None:
        raise RuleError("query.needs_seat", "this question is asked with a seat token")
    if state.phase != "play":
        raise RuleError("rule.game_over", "the game is over")
    if state.current() != seat:
        state = state.copy()
        state.turn = Turn()
    return state, seat


def _problem(error: RuleError) -> dict[str, Any]:
    return {"code": error.code, "message": error.message, **error.details}


def ask(state: State, viewer: Viewer, query: Query) -> dict[str, Any]:
    """The answer to ``query``, as the builtins of its ``answer_type`` (tagged like it)."""
    state, seat = _as_seat(state, viewer)
    answer: Answer
    if isinstance(query, Survey):
        answer = SurveyAnswer(**survey(state, seat, query.path))
    elif isinstance(query, Plan):
        answer = PlanAnswer(**plan(state, seat, query.to))
    else:
        try:
            moved = move_event(state, seat, auto_path(state, seat, query.toward))
        except RuleError as error:
            answer = AutoMoveAnswer([], state.players[seat].train, [], _problem(error))
        else:
            answer = AutoMoveAnswer(moved.path, moved.path[-1], list(moved.fees), None)
    found: dict[str, Any] = msgspec.to_builtins(answer)
    return found


def survey(state: State, seat: int, path: list[int]) -> dict[str, Any]:
    """``cost``: the sum of the entry costs of the path's sections (up to the first pair that
    is no buildable section); ``problem``: the first rule a ``build`` of it would break (None:
    it would be accepted, charged ``cost``)."""
    cost = 0
    for a, b in itertools.pairwise(path):
        if not (0 <= a < MAP.size and 0 <= b < MAP.size) or b not in MAP.adjacent[a]:
            break
        cost += MAP.entry_cost(a, b)
    try:
        built = build_event(state, seat, path)
    except RuleError as error:
        return {"cost": cost, "problem": _problem(error)}
    return {"cost": built.cost, "problem": None}


def plan(state: State, seat: int, to: int | str) -> dict[str, Any]:
    """Dijkstra over the buildable sections nobody owns, priced by entry cost, from every
    milepost a build may start at; sections the city limits forbid are left out. ``path`` is
    None when nothing reaches ``to``; ``problem`` is what a ``build`` of the path would break
    now (the money or the $20M a turn), None when it would be accepted."""
    if isinstance(to, str):
        city = MAP.cities.get(to)
        if city is None:
            raise RuleError("rule.no_such_city", f"{to!r} is not a city of the map")
        targets = set(city.mileposts)
    else:
        try:
            targets = {parse_milepost(to)}
        except ValueError as e:
            raise RuleError("rule.no_such_milepost", str(e)) from None
    starts = build_starts(state, seat)  # own track's mileposts, and the majors' if a start is left
    reached = targets.intersection(starts)
    if reached:
        return {"path": [min(reached)], "cost": 0, "problem": None}
    far = {m: 0 for m in starts}
    back: dict[int, int] = {}
    heap = [(0, m) for m in sorted(set(starts))]
    heapq.heapify(heap)
    end = None
    while heap:
        d, m = heapq.heappop(heap)
        if d > far.get(m, d):
            continue
        if m in targets:
            end = m
            break
        for n, extra in MAP.adjacent[m].items():
            price = ENTRY_COST[MAP.terrain[n]] + extra
            if edge_key(m, n) in state.track or d + price >= far.get(n, 1 << 30):
                continue
            if state.effects or MAP.city_at[m] is not None or MAP.city_at[n] is not None:
                # the city limits and event cards: a cost far below zero passes the money checks
                found = step_problem(state, seat, m, n, {}, -(1 << 30))
                if isinstance(found, tuple):
                    continue
            far[n] = d + price
            back[n] = m
            heapq.heappush(heap, (d + price, n))
    if end is None:
        return {"path": None, "cost": None, "problem": None}
    path = [end]
    while path[-1] in back:
        path.append(back[path[-1]])
    path.reverse()
    answer = survey(state, seat, path)
    return {"path": path, "cost": answer["cost"], "problem": answer["problem"]}
