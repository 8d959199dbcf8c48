"""Drawing Transport cards: the discard pile goes back into the deck when the deck runs out,
in the middle of a draw too, and a draw after a delivery sees the cards that delivery spent.

The reshuffle is written once, in ``evolve`` (``discard_recycled``); ``decide`` sees its effect
through the state of the decision in progress. Hands of 8 trucks, 4 trains and 3 ships each
leave 4 trucks, 8 trains and 6 ships of the 48 cards for the deck and the discard pile."""

from __future__ import annotations

from domain.cargo_empire.commands import Gather

from .support import at, deliver, types

MADRID = {"Madrid": {"posts": [0]}}
#: all 48 cards in the two hands: the deck and the discard pile are empty
ALL_IN_HAND = {
    "players": [
        {"hand": {"truck": 12, "train": 8, "ship": 6}},
        {"hand": {"truck": 8, "train": 8, "ship": 6}},
    ]
}


def test_an_empty_deck_takes_the_discard_pile_back_in_the_middle_of_a_draw() -> None:
    t = at({"discard": {"truck": 3, "train": 8, "ship": 6}})  # the deck: one truck
    assert t.state.deck.total() == 1
    events = t.submit(0, Gather())
    assert types(events) == ["discard_recycled", "cards_drawn", "post_retired", "turn_ended"]
    drawn = events[1].cards
    assert drawn[0] == "truck" and len(drawn) == 2  # the only card, then one of the 17 back
    s = t.state
    assert s.discard.total() == 0 and s.deck.total() == 18 - 2
    assert s.players[0].hand.total() == 15 + 2


def test_a_draw_with_every_card_in_hand_draws_nothing() -> None:
    t = at(ALL_IN_HAND)
    assert t.state.deck.total() == 0 and t.state.discard.total() == 0
    events = t.submit(0, Gather())
    assert types(events) == ["post_retired", "turn_ended"]
    assert t.state.players[0].hand.total() == 26


def test_the_draw_after_a_delivery_sees_the_card_the_delivery_spent() -> None:
    t = at({"cities": MADRID, "discard": {"truck": 4, "train": 8, "ship": 6}})
    assert t.state.deck.total() == 0 and t.state.discard.total() == 18
    events = t.submit(0, deliver("Madrid", "Paris", "white", "truck:Paris", truck=0))
    assert types(events) == ["delivered", "discard_recycled", "cards_drawn", "turn_ended"]
    s = t.state
    assert s.discard.total() == 0 and s.deck.total() == 19 - 1
    assert s.players[0].hand.total() == 15 - 1 + 1


def test_with_every_card_in_hand_a_delivery_draws_back_the_card_it_spent() -> None:
    t = at({"cities": MADRID, **ALL_IN_HAND})
    assert t.state.deck.total() == 0 and t.state.discard.total() == 0
    events = t.submit(0, deliver("Madrid", "Paris", "white", "truck:Paris", truck=0))
    # the spent truck is the whole discard pile: it comes back and is drawn again
    assert types(events) == ["delivered", "discard_recycled", "cards_drawn", "turn_ended"]
    assert events[2].cards == ["truck"]
