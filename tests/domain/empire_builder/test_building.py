"""Building, rule by rule from the manual's "Building" and "Restrictions on Building"."""

from __future__ import annotations

import itertools

from domain.empire_builder import EMPIRE_BUILDER
from domain.empire_builder.board import INLET_COST, MAJOR, MAP, MEDIUM, MOUNTAIN, RIVER_COST, SMALL
from domain.empire_builder.commands import Build

from .support import at, centre, edge, feeder, owner, plain, play, rejects, ring, track_to


def build(a: int, b: int, money: int = 60) -> int:
    """The cost charged for building a→b from own track ending at a."""
    t = at({"players": [{"money": money, "track": [track_to(a, (b,))]}, {}]})
    before = t.state.players[0].money
    play(t, 0, {"type": "build", "path": [a, b]})
    assert owner(t, a, b) == 0
    return before - t.state.players[0].money


def test_costs_by_terrain_entered() -> None:
    assert build(*edge(lambda a, b: plain(a, b) and MAP.terrain[b] == 0)) == 1
    assert build(*edge(lambda a, b: plain(a, b) and MAP.terrain[b] == MOUNTAIN)) == 2
    assert build(*edge(lambda a, b: plain(a, b) and MAP.terrain[b] == SMALL)) == 3
    assert build(*edge(lambda a, b: plain(a, b) and MAP.terrain[b] == MEDIUM)) == 3
    assert build(*edge(lambda a, b: plain(a, b) and MAP.terrain[b] == MAJOR)) == 5


def test_river_and_inlet_crossings_cost_extra() -> None:
    river = edge(lambda a, b: MAP.terrain[b] == 0 and MAP.adjacent[a][b] == RIVER_COST)
    assert build(*river) == 1 + 2
    inlet = edge(lambda a, b: MAP.terrain[b] == 0 and MAP.adjacent[a][b] == INLET_COST)
    assert build(*inlet) == 1 + 3


def test_new_track_starts_from_a_major_city_or_own_track() -> None:
    t = at({"players": [{}, {"track": [track_to(edge(lambda a, b: True)[0])]}]})
    a, b = edge(lambda a, b: plain(a, b))
    error = rejects(t, 0, Build([a, b]), "rule.not_connected")
    assert error.details["step"] == 0
    start = next(m for m in ring("Dallas") if MAP.adjacent[m])
    step = min(MAP.adjacent[start])
    play(t, 0, {"type": "build", "path": [start, step]})
    onward = next(n for n in sorted(MAP.adjacent[step]) if n != start)
    play(t, 0, {"type": "build", "path": [step, onward]})
    assert t.state.turn.major_starts == 1


def test_twice_from_a_major_city_milepost_in_one_turn() -> None:
    t = at({"players": [{}, {}]})
    starts = [next(m for m in ring(city) if MAP.adjacent[m])
              for city in ("Chicago", "Atlanta", "Dallas")]
    for m in starts[:2]:
        play(t, 0, {"type": "build", "path": [m, min(MAP.adjacent[m])]})
    error = rejects(t, 0, Build([starts[2], min(MAP.adjacent[starts[2]])]), "rule.major_starts")
    assert error.details["step"] == 0
    # from own track that touches a major milepost it is no new start
    play(t, 0, {"type": "build", "path": [starts[0], sorted(MAP.adjacent[starts[0]])[-1]]})


def test_the_inside_of_a_major_city_is_not_built_on() -> None:
    t = at({"players": [{}, {}]})
    outer = ring("Atlanta")[0]
    error = rejects(t, 0, Build([outer, centre("Atlanta")]), "rule.major_interior")
    assert error.details["step"] == 1
    other = next(m for m in MAP.inside[outer] if m != centre("Atlanta"))
    rejects(t, 0, Build([outer, other]), "rule.major_interior")


def test_20_million_a_turn_all_spending_included() -> None:
    a, b = edge(lambda a, b: plain(a, b) and MAP.terrain[b] == 0)
    t = at({"players": [{"track": [track_to(a, (b,))]}, {}]})
    path = [a, b]
    while len(path) < 25:
        nxt = next((n for n in sorted(MAP.adjacent[path[-1]]) if n not in path), None)
        assert nxt is not None
        path.append(nxt)
    error = rejects(t, 0, Build(path), "rule.turn_limit")
    spent = 0
    for i, (x, y) in enumerate(itertools.pairwise(path), start=1):
        spent += MAP.entry_cost(x, y)
        if spent > 20:
            assert error.details["step"] == i
            break
    t = at({"players": [{"track": [track_to(a, (b,))]}, {}]})
    play(t, 0, {"type": "upgrade", "kind": "speed"})
    rejects(t, 0, Build([a, b]), "rule.turn_limit")
    assert not [c for c in EMPIRE_BUILDER.legal(t.state, 0) if isinstance(c, Build)]


def test_money_runs_out() -> None:
    a, b = edge(lambda a, b: plain(a, b) and MAP.terrain[b] == MOUNTAIN)
    t = at({"players": [{"money": 1, "track": [track_to(a, (b,))]}, {}]})
    rejects(t, 0, Build([a, b]), "rule.no_money")


def test_one_track_per_pair_of_mileposts_but_tracks_may_share_a_milepost() -> None:
    a, b = edge(lambda a, b: plain(a, b) and MAP.terrain[b] == 0 and feeder(b, (a,)) is not None)
    c = feeder(b, (a,))
    assert c is not None
    t = at({"players": [{"track": [track_to(a, (b,))]}, {"track": [[a, b]]}]})
    rejects(t, 0, Build([a, b]), "rule.track_exists")
    t = at({"players": [{"track": [track_to(a, (b,))]}, {"track": [[c, b]]}]})
    play(t, 0, {"type": "build", "path": [a, b]})
    assert owner(t, a, b) == 0 and owner(t, c, b) == 1
    rejects(t, 0, Build([b, a]), "rule.track_exists")
    t = at({"players": [{"track": [track_to(a, (b,))]}, {}]})
    rejects(t, 0, Build([a, b, a]), "rule.track_exists")


def test_steps_must_be_neighbouring_mileposts() -> None:
    a, b = edge(lambda a, b: plain(a, b))
    t = at({"players": [{"track": [track_to(a, (b,))]}, {}]})
    far = next(m for m in range(MAP.size) if m not in MAP.adjacent[b] and m not in (a, b))
    error = rejects(t, 0, Build([a, b, far]), "rule.not_adjacent")
    assert error.details["step"] == 2
    rejects(t, 0, Build([a, MAP.size]), "rule.no_such_milepost")
    rejects(t, 0, Build([-1, a]), "rule.no_such_milepost")
    rejects(t, 0, Build([a]), "rule.empty_path")


def _city_edges(size: int) -> tuple[int, list[int]]:
    for city in sorted(MAP.cities.values(), key=lambda c: c.name):
        m = city.mileposts[0]
        if MAP.terrain[m] == size:
            ends = [n for n in sorted(MAP.adjacent[m]) if feeder(n, (m,)) is not None]
            if len(ends) >= 4:
                return m, ends
    raise LookupError


def test_two_players_into_a_small_city_three_into_a_medium() -> None:
    for size, cap in ((SMALL, 2), (MEDIUM, 3)):
        m, ends = _city_edges(size)
        players: list[dict[str, object]] = [{"track": [[ends[i], m]]} for i in range(cap)]
        players.append({"track": [track_to(ends[cap], (m,))]})
        t = at({"players": players, "turn_number": cap, "first": 0})
        error = rejects(t, cap, Build([ends[cap], m]), "rule.city_full")
        assert error.details["step"] == 1
        # a player already in the city may add sections
        t = at({"players": players, "turn_number": 0})
        play(t, 0, {"type": "build", "path": [m, ends[cap]]})


def test_no_more_than_three_sections_into_a_medium_or_small_city() -> None:
    for size in (SMALL, MEDIUM):
        m, ends = _city_edges(size)
        t = at({"players": [{"track": [[ends[0], m, ends[1]], [ends[2], m]]}, {}]})
        rejects(t, 0, Build([m, ends[3]]), "rule.city_sections")
        t = at({"players": [{"track": [[ends[0], m, ends[1]]]}, {}]})
        play(t, 0, {"type": "build", "path": [m, ends[2]]})


def test_any_number_of_players_build_into_a_major_city() -> None:
    outer = [m for m in ring("Chicago") if MAP.adjacent[m]]
    t = at({"players": [{}, {}, {}, {}]})
    for s in range(4):
        m = outer[s % len(outer)]
        ends = sorted(MAP.adjacent[m])
        play(t, s, {"type": "build", "path": [m, ends[s // len(outer)]]})
        play(t, s, {"type": "end_turn"})


def test_legal_lists_each_next_section_with_its_cost_and_a_wrong_cost_is_refused() -> None:
    a, b = edge(lambda a, b: plain(a, b) and MAP.terrain[b] == MOUNTAIN)
    t = at({"players": [{"track": [track_to(a, (b,))]}, {}]})
    listed = [c for c in EMPIRE_BUILDER.legal(t.state, 0) if isinstance(c, Build)]
    assert Build([a, b], 2) in listed
    assert all(c.cost == MAP.entry_cost(*c.path) for c in listed)
    rejects(t, 0, Build([a, b], 1), "rule.cost_mismatch")
    play(t, 0, {"type": "build", "path": [a, b], "cost": 2})


def test_building_out_of_a_major_city_own_track_reaches_elsewhere_is_no_new_start() -> None:
    # seat 0's track reaches Chicago at one outer milepost; Chicago's other outer mileposts
    # continue its network through the free zone, even with both starts of the turn used
    ring_posts = [m for m in ring("Chicago") if MAP.adjacent[m]]
    reached, other = ring_posts[0], ring_posts[1]
    out = min(MAP.adjacent[reached])
    t = at({"players": [{"track": [[reached, out]]}, {}]})
    for city in ("Dallas", "Atlanta"):
        m = next(m for m in ring(city) if MAP.adjacent[m])
        play(t, 0, {"type": "build", "path": [m, min(MAP.adjacent[m])]})
    assert t.state.turn.major_starts == 2
    step = min(n for n in MAP.adjacent[other] if n != out)
    listed = [c.path for c in EMPIRE_BUILDER.legal(t.state, 0) if isinstance(c, Build)]
    assert [other, step] in listed
    (built,) = play(t, 0, {"type": "build", "path": [other, step]})
    assert built.major_start is False and t.state.turn.major_starts == 2
    # a major city the track does not reach is still a new start: none is left
    far = next(m for m in ring("Seattle") if MAP.adjacent[m])
    rejects(t, 0, Build([far, min(MAP.adjacent[far])]), "rule.major_starts")
