"""The online version's extras on hand-made positions: borrowing under the terms, the player
card's face, and auto move (the manual's "Borrowing", "The player card" and "auto move")."""

from __future__ import annotations

import msgspec

from domain.empire_builder import EMPIRE_BUILDER
from domain.empire_builder.board import CARDS, FACES, MAP
from domain.empire_builder.commands import AutoMove, Borrow, Deliver, Move
from domain.kernel import seat

from .support import at, card_with, centre, play, rejects, ring, route, types

VIEWER = seat(1)


def deliverer(**player: object) -> tuple[object, int, int]:
    cid, i = next(card_with(c.city, c.load) for card in CARDS for c in card
                  if MAP.cities[c.city].size != "major")
    demand = CARDS[cid][i]
    t = at({"players": [{"cards": [cid, 100, 101], "loads": [demand.load],
                         "train": centre(demand.city), **player}, {}]})
    return t, i, demand.payoff


def test_borrowing_gives_the_amount_and_owes_twice_it_announced_to_everyone() -> None:
    t, _, _ = deliverer()
    assert Borrow(20) in EMPIRE_BUILDER.legal(t.state, 0)
    events = play(t, 0, {"type": "borrow", "amount": 15})
    assert types(events) == ["borrowed"]
    p = t.state.players[0]
    assert (p.money, p.debt) == (75, 30)
    # an event every viewer reads whole
    seen = msgspec.to_builtins(EMPIRE_BUILDER.event_view(events[0], VIEWER))
    assert seen == {"type": "borrowed", "seat": 0, "amount": 15, "owed": 30}
    view = EMPIRE_BUILDER.view(t.state, VIEWER)
    assert view.players[0].debt == 30 and view.options.borrowing is True
    # $20M a turn at most
    assert Borrow(5) in EMPIRE_BUILDER.legal(t.state, 0)
    rejects(t, 0, Borrow(6), "rule.borrow_limit")
    rejects(t, 0, Borrow(0), "rule.borrow_limit")
    rejects(t, 0, Borrow(-3), "rule.borrow_limit")
    rejects(t, 1, Borrow(1), "rule.not_your_turn")


def test_the_next_delivery_repays_twice_the_loan_and_cash_may_go_negative() -> None:
    # the cheapest demand in a small or medium city: its payoff is under the $40M owed
    cid, i = min(((cid, i) for cid, card in enumerate(CARDS) for i, c in enumerate(card)
                  if MAP.cities[c.city].size != "major"), key=lambda x: CARDS[x[0]][x[1]].payoff)
    demand = CARDS[cid][i]
    t = at({"players": [{"cards": [cid, 100, 101], "loads": [demand.load], "money": 0,
                         "train": centre(demand.city)}, {}]})
    play(t, 0, {"type": "borrow", "amount": 20})
    events = play(t, 0, {"type": "deliver", "card": 0, "demand": i})
    assert types(events) == ["load_delivered", "card_drawn"]
    assert EMPIRE_BUILDER.to_builtins(events[0])["repaid"] == 40
    p = t.state.players[0]
    assert p.debt == 0 and p.money == 20 + demand.payoff - 40
    assert demand.payoff < 20 and p.money < 0
    # only the next delivery: the debt is gone
    assert EMPIRE_BUILDER.view(t.state, VIEWER).players[0].debt == 0


def test_borrowing_refused_when_the_terms_disallow_it() -> None:
    t = at({"players": [{}, {}], "options": {"borrowing": False}})
    assert not [c for c in EMPIRE_BUILDER.legal(t.state, 0) if isinstance(c, Borrow)]
    rejects(t, 0, Borrow(5), "rule.no_borrowing")


def test_debt_counts_in_the_win_check() -> None:
    # a player with the money but owing the bank has not won
    majors = sorted(MAP.majors)[:1]
    a = ring(majors[0])[0]
    b = next(iter(sorted(MAP.adjacent[a])))
    opts = {"money_to_win": 60, "majors_to_win": 1}
    t = at({"players": [{"money": 65, "debt": 10, "track": [[a, b]]}, {}], "options": opts})
    events = play(t, 0, {"type": "end_turn"})
    assert types(events) == ["turn_ended"]
    t = at({"players": [{"money": 70, "debt": 10, "track": [[a, b]]}, {}], "options": opts})
    assert types(play(t, 0, {"type": "end_turn"})) == ["turn_ended", "game_ended"]


def test_a_seat_chooses_its_face_any_time() -> None:
    t = at({"players": [{}, {}]})
    events = play(t, 1, {"type": "choose_face", "face": FACES[3]})  # not seat 1's turn
    assert types(events) == ["face_chosen"]
    assert EMPIRE_BUILDER.view(t.state, VIEWER).players[1].face == FACES[3]
    assert t.state.current() == 0 and t.state.turn.acted is False  # cosmetic: no turn effect
    rejects(t, 0, {"type": "choose_face", "face": "nobody"}, "rule.no_such_face")
    rejects(t, 7, {"type": "choose_face", "face": FACES[0]}, "rule.no_such_seat")


def test_auto_move_runs_to_the_next_city_or_junction() -> None:
    start = ring("Chicago")[0]
    far = route(start, ring("Dallas")[0])
    track = far[:8]
    assert all(MAP.city_at[m] is None for m in track[1:])
    t = at({"players": [{"train": start, "track": [track]}, {}]})
    assert AutoMove(track[1]) in EMPIRE_BUILDER.legal(t.state, 0)
    events = play(t, 0, {"type": "auto_move", "toward": track[1]})
    # the end of the track: one way on only, so it stops there
    assert EMPIRE_BUILDER.to_builtins(events[0])["path"] == track[1:]
    # a junction stops it: a branch off the middle of the line
    mid = track[3]
    branch = next(n for n in sorted(MAP.adjacent[mid]) if n not in track)
    t = at({"players": [{"train": start, "track": [track, [mid, branch]]}, {}]})
    play(t, 0, {"type": "auto_move", "toward": track[1]})
    assert t.state.players[0].train == mid
    assert Move([track[4]]) in EMPIRE_BUILDER.legal(t.state, 0)


def test_auto_move_stops_where_the_moves_run_out() -> None:
    start = ring("Chicago")[0]
    track = route(start, ring("Dallas")[0])[:14]
    t = at({"players": [{"train": start, "track": [track]}, {}]})
    play(t, 0, {"type": "auto_move", "toward": track[1]})
    assert t.state.players[0].train == track[9] and t.state.turn.moved == 9


def test_delivery_without_debt_repays_nothing() -> None:
    t, i, payoff = deliverer()
    events = play(t, 0, {"type": "deliver", "card": 0, "demand": i})
    assert EMPIRE_BUILDER.to_builtins(events[0])["repaid"] == 0
    assert t.state.players[0].money == 60 + payoff
    assert Deliver(0, i) not in EMPIRE_BUILDER.legal(t.state, 0)
