"""Player names (issue 25): a name must show something, and names that look alike — TR39
confusables, default-ignorable code points, NFKC and case — are one player."""

from __future__ import annotations

import asyncio

import pytest

from service.application import lobby, names
from service.application.bodies import CreateGame
from service.application.clocks import ClockLimits
from service.application.errors import ApplicationError
from service.application.names import (
    _prototypes,
    alike,
    all_distinct,
    is_visible,
    player_name,
    skeleton,
)
from service.http.problemmap import problem_of

#: Names that show nothing: each is 400 ``lobby.bad_name``.
INVISIBLE = [
    "\u3164",  # HANGUL FILLER
    "\u3164\u3164\u3164",
    "\u115f",  # HANGUL CHOSEONG FILLER
    "\u1160",  # HANGUL JUNGSEONG FILLER
    "\uffa0",  # HALFWIDTH HANGUL FILLER
    "\u2800",  # BRAILLE PATTERN BLANK
    "\u2800\u3164",
    "\u0301",  # a combining mark alone
    "\u0301\u0302\u0303\u0304",  # combining marks only
    "\u3164\u0301",
    "\ufe0f",  # VARIATION SELECTOR-16
    "\U000e0100",  # VARIATION SELECTOR-17
    "\u034f",  # COMBINING GRAPHEME JOINER
    "\u17b4\u17b5",  # Khmer inherent vowels
    "\U0001d159",  # MUSICAL SYMBOL NULL NOTEHEAD
    "\U00016fe4",  # KHITAN SMALL SCRIPT FILLER
    "\u3000\u3164\u3000",  # ideographic spaces around a filler
    "\u2003\u2800",  # an em space and a blank
]


@pytest.mark.parametrize("name", INVISIBLE)
def test_a_name_of_nothing_visible_is_refused(name: str) -> None:
    with pytest.raises(ApplicationError) as caught:
        player_name(name)
    assert (problem_of(caught.value).status, caught.value.code) == (400, "lobby.bad_name")


@pytest.mark.parametrize("name", ["a\u2028b", "Ann\u2029Lee"])
def test_a_line_or_paragraph_break_inside_a_name_is_refused(name: str) -> None:
    """Review of issue 25: U+2028/U+2029 (categories Zl, Zp) broke a name over two lines
    wherever it is shown; only spaces (Zs) may stand between a name's parts."""
    with pytest.raises(ApplicationError) as caught:
        player_name(name)
    assert (problem_of(caught.value).status, caught.value.code) == (400, "lobby.bad_name")


@pytest.mark.parametrize(
    "name",
    ["a", "Ann", "7", "!", "\u2605", "\u263a\ufe0f", "\u00e9", "\u3164a", "a\u0301", "\u65e5"],
)
def test_a_name_with_something_to_see_is_accepted(name: str) -> None:
    assert player_name(name)


def test_visible_means_a_letter_digit_mark_of_punctuation_or_symbol() -> None:
    assert all(is_visible(ch) for ch in "aZ\u0430\u65e59.!\u2605")
    assert not any(is_visible(ch) for ch in " \u3164\u2800\u115f\u0301\ufe0f\u00ad\u3000")


#: Pairs that are one player.
ALIKE = [
    ("ann", "\u0430nn"),  # Cyrillic а
    ("Ann", "\u0410nn"),  # Cyrillic А
    ("ann", "\u0410NN"),  # Cyrillic А, upper case
    ("a", "a\ufe0f"),  # a variation selector
    ("a", "a\U000e0100"),
    ("ann", "ann\u3164"),  # a trailing Hangul filler
    ("ab", "a\u00adb"),  # not reachable through player_name (a Cf), still alike
    ("Ann", "ann"),
    ("ann", "\uff21\uff4e\uff4e"),  # fullwidth
    ("Iris", "lris"),  # capital I and small l
    ("paypal", "\u0440\u0430\u0443\u0440\u0430l"),  # Cyrillic р а у
    ("modern", "rnodern"),  # m and rn
    ("O0", "OO"),
    ("Jos\u00e9", "Jose\u0301"),
    ("\u65e5", "\u2f47"),  # 日 and the Kangxi radical ⽇
    ("\u0391\u0392", "AB"),  # Greek capitals
    ("a b", "a  b"),  # a web page shows a run of spaces as one (review of issue 25)
    ("a b", "a \u3000\u2003b"),
    ("Ann Lee", "Ann\u00a0\u00a0Lee"),
]


@pytest.mark.parametrize(("a", "b"), ALIKE)
def test_lookalike_names_are_one_player(a: str, b: str) -> None:
    assert alike(a, b) and alike(b, a)
    assert not all_distinct([a, "someone", b])


@pytest.mark.parametrize(("a", "b"), [("ann", "anna"), ("Ann", "Bob"), ("a", "b"), ("1", "2")])
def test_different_names_are_not_alike(a: str, b: str) -> None:
    assert not alike(a, b)
    assert all_distinct([a, b])


def test_the_skeleton_is_a_fixed_point_and_holds_unicodes_table() -> None:
    mapping = _prototypes()
    assert len(mapping) > 6000  # confusables.txt has some 6,300 lines
    assert mapping["\u0430"] == "a" and mapping["1"] == "l" and mapping["m"] == "rn"
    for target in mapping.values():
        assert skeleton(target) == target


#: The most expensive character to compare by: U+FDFA, whose NFKC is 18 characters.
WORST = "\ufdfa"


def test_a_join_against_many_invited_names_computes_each_skeleton_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Review of issue 25: a join compares its name with every invited name (up to 64), on the
    event loop and under the game's row lock; each comparison used to compute both names'
    skeletons afresh (~2.7 ms for a 64-character name of U+FDFA: ~0.35 s a join, at the read
    quota's 12,000 a minute). Each name's keys are now computed once."""
    calls = 0
    real = names.skeleton

    def counting(text: str) -> str:
        nonlocal calls
        calls += 1
        return real(text)

    monkeypatch.setattr(names, "skeleton", counting)
    names.name_keys.cache_clear()
    invited = [WORST * 63 + chr(0x4E00 + i) for i in range(64)]
    for attempt in range(20):
        stranger = WORST * 63 + chr(0x3041 + attempt)
        assert not any(alike(stranger, n) for n in invited)
    assert calls <= 2 * (64 + 20), calls


def test_a_players_list_longer_than_the_seats_is_refused_before_its_names_are_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Review of issue 25: ``players`` has no length of its own (a 64 KB body holds some 300
    names of 64 U+FDFA): each was validated and skeletonised before its count was compared
    with the seats."""
    read = 0
    real = names.player_name

    def counting(value: str) -> str:
        nonlocal read
        read += 1
        return real(value)

    monkeypatch.setattr(lobby, "player_name", counting)
    many = [WORST * 63 + chr(0x4E00 + i) for i in range(300)]
    req = CreateGame(game="empire-builder", seats=2, players=many)
    with pytest.raises(ApplicationError) as refused:
        bare = lobby.Lobby.__new__(lobby.Lobby)
        bare.clock_limits = ClockLimits()  # the only collaborator read before the names
        asyncio.run(bare.create(req))
    assert (problem_of(refused.value).status, refused.value.code) == (422, "lobby.bad_players")
    assert read == 0
