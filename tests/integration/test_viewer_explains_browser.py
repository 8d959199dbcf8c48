"""The viewer explains (issue 43), in headless Chromium: a first-visit page saying how to start a
game; the events listed as sentences with the players' names in the browser's language; a URL
for every replay position (``#/games/{id}/{n}``); the header as of the selected position; why a
game ended and why its winners won (or why none); which seat a token shows; each game's piece
legend; the selected event's changes marked on the board — for the four games. English and
French screenshots go to ``$MANIFEST_TEST_OUTPUT/screenshots`` (copied to docs/screenshots/)."""

from __future__ import annotations

import random
from typing import Any, NamedTuple

import httpx
import pytest
from playwright.sync_api import Browser, Page

from examples.bot import play
from examples.client import ManifestClient

from .serverproc import ServerProcess
from .test_viewer_browser import WAIT_MS, board_at, browser, ready, shot  # noqa: F401

pytestmark = pytest.mark.integration

GAMES = ["jolly-cargo", "cargo-empire", "empire-builder", "curious-cargo"]


def page_in(browser: Browser, locale: str) -> Page:  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 900}, locale=locale)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_default_timeout(WAIT_MS)
    page.errors = errors  # type: ignore[attr-defined]
    return page


def _events(server: ServerProcess, game_id: str, lang: str, token: str | None = None) -> Any:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    r = httpx.get(
        f"{server.url}/v1/games/{game_id}/events",
        params={"limit": 1000, "lang": lang},
        headers=headers,
    )
    assert r.status_code == 200, r.text
    return r.json()["events"]


def test_first_visit_says_how_to_start_a_game(server: ServerProcess, browser: Browser) -> None:  # noqa: F811
    for locale, words in (("en-US", "To start one"), ("fr-FR", "Pour en commencer une")):
        page = page_in(browser, locale)
        page.goto(server.url + "/viewer/")
        ready(page, "list")
        welcome = page.inner_text("#welcome")
        assert words in welcome
        assert f"curl -s -X POST {server.url}/v1/games" in welcome
        assert "examples/bot.py" in welcome
        assert page.get_attribute("#api-docs", "href") == "/schema"
        shot(page, f"first-visit-{locale[:2]}")
        assert not page.errors  # type: ignore[attr-defined]
    with ManifestClient(server.url) as api:
        api.create("jolly-cargo", players=["ann", "bob"])
    page.goto(server.url + "/viewer/")
    ready(page, "list")
    assert page.locator("#welcome").count() == 0  # a server with games lists them


@pytest.mark.parametrize("game", GAMES)
def test_a_position_has_a_url_a_header_sentences_marks_and_a_legend(
    server: ServerProcess,
    browser: Browser,  # noqa: F811
    game: str,
) -> None:
    locale = "fr-FR" if game in ("jolly-cargo", "curious-cargo") else "en-GB"
    lang = locale[:2]
    with ManifestClient(server.url) as api:
        created = api.create(game, players=["ann", "bob"])
        seats = [api.seat(created, s.seat) for s in created.seats]
        rng = random.Random(4)
        for _ in range(8):  # a few moves: the header at a position differs from now's
            doc = api.game(created.id)
            seat = doc.to_act[0]
            legal = seats[seat].legal(created.id)
            seats[seat].command(
                created.id, rng.choice(legal.commands), expected_version=legal.version
            )
        total = api.game(created.id).version
    events = _events(server, created.id, lang)
    assert len(events) == total
    n = next(e["version"] for e in events if e["type"] not in ("lobby.created", "lobby.joined"))

    page = page_in(browser, locale)
    page.goto(f"{server.url}/viewer/#/games/{created.id}/{n}")  # a deep link
    ready(page, "game")
    board_at(page, n)
    assert page.inner_text("#position") == f"event {n} / {total}"
    assert page.get_attribute("#log tr.selected", "data-version") == str(n)
    # the events listed as sentences, names and all, in the browser's language
    cells = page.locator("#log td.t")
    assert [cells.nth(i).inner_text() for i in range(cells.count())] == [
        e["sentence"]["text"] for e in events
    ]
    joined = next(e for e in events if e["type"] == "lobby.joined")
    said = {"fr": f"ann prend la place {joined['data']['seat']}", "en": "ann took seat 0"}[lang]
    assert said in [cells.nth(i).inner_text() for i in range(cells.count())]
    # the header as of event n, then moving on moves the URL and the header
    as_of = {"fr": f"à l’événement {n} / {total}", "en": f"as of event {n} / {total}"}[lang]
    assert page.inner_text("#as-of").startswith(as_of)
    page.click("#next")
    board_at(page, n + 1)
    assert page.evaluate("location.hash") == f"#/games/{created.id}/{n + 1}"
    page.reload()
    ready(page, "game")
    board_at(page, n + 1)
    # the legend of the game's pieces
    assert page.locator("#legend li").count() >= 4
    # an event that names a place: its pieces marked on the board
    marked = None
    for e in reversed(events):
        if e["type"] in (
            "worker_placed",
            "post_placed",
            "tile_played",
            "track_built",
            "crate_placed",
            "train_placed",
            "workers_moved",
        ):
            marked = e["version"]
            break
    assert marked is not None, [e["type"] for e in events]
    page.goto(f"{server.url}/viewer/#/games/{created.id}/{marked}")
    board_at(page, marked)
    assert int(page.get_attribute("#board", "data-changed") or "0") > 0
    assert page.locator("#board .change-mark").count() > 0
    # the picture itself is the server's, untouched (the marks lie over it)
    assert page.locator("#board svg .change-mark").count() == 0
    shot(page, f"position-{game}-{lang}")
    spectator = {"fr": "vu en spectateur", "en": "viewed as a spectator"}[lang]
    assert page.inner_text("#viewer-seat") == spectator

    # a seat's token: the viewer says which seat it shows
    page.goto(f"{server.url}/viewer/#/games/{created.id}?token={created.seats[1].token}")
    ready(page, "game")
    page.wait_for_function("document.getElementById('viewer-seat').dataset.seat === '1'")
    assert (
        page.inner_text("#viewer-seat")
        == {
            "fr": "vu depuis la place 1 (bob)",
            "en": "viewed as seat 1 (bob)",
        }[lang]
    )
    assert not page.errors  # type: ignore[attr-defined]


@pytest.mark.parametrize("game", ["cargo-empire", "curious-cargo"])
def test_why_a_game_ended_and_the_header_as_of_a_position(
    server: ServerProcess,
    browser: Browser,  # noqa: F811
    game: str,
) -> None:
    with ManifestClient(server.url) as api:
        created = api.create(game, players=["ann", "bob"])
        final = play(api, created, rng=random.Random(9))
        assert final.result is not None
    for locale in ("en-US", "fr-FR"):
        lang = locale[:2]
        events = _events(server, created.id, lang)
        ended = [e for e in events if e["type"] == "game_ended"][-1]
        total = len(events)
        page = page_in(browser, locale)
        page.goto(f"{server.url}/viewer/#/games/{created.id}")
        ready(page, "game")
        board_at(page, total)
        assert page.get_attribute("#players", "data-finished") == "true"
        why = page.inner_text("#why")
        assert why == ended["sentence"]["text"]
        if final.result["winners"]:
            assert {"fr": "gagne", "en": "won"}[lang] in why
        else:
            assert {"fr": "personne ne gagne, car", "en": "no one won, because"}[lang] in why
        shot(page, f"finished-{game}-{lang}")
        # at an early position the header is that position's: no scores, no result, no reason
        page.goto(f"{server.url}/viewer/#/games/{created.id}/5")
        board_at(page, 5)
        page.wait_for_function("document.getElementById('players').dataset.finished === 'false'")
        assert page.locator("#players th").count() == 2
        assert not page.is_visible("#why")
        assert "finished" not in page.inner_text("#status")
        assert not page.errors  # type: ignore[attr-defined]


class NearTheEnd(NamedTuple):
    """A position one move from its end, the move, who sends it, who then wins and the words
    (English, French) that say why the game ended."""

    game: str
    position: dict[str, Any]
    move: dict[str, Any]
    mover: int
    winners: list[int]
    why: tuple[str, str]


_EB_PLAYERS = [  # seat 1 to act in its fourth turn (turn_number 7, first 0); its train placed
    {"cards": [0, 1, 2], "money": 50, "turns": 4, "train": 813, "track": [[812, 813, 814]]},
    {"cards": [3, 4, 5], "money": 80, "turns": 3, "train": 1304, "track": [[1304, 1303]]},
]

#: Positions one move from their end (each game's rules doc, "Position form"), so the end
#: reasons are tested in the browser for the two games too long to play to the end over HTTP
#: in a test (Tom Jolly's CARGO runs to some 2,800 events).
NEAR_THE_END = {
    # green (bob) has no crate left on the dock: red's end of turn ends the game; bob has the
    # most points
    "jolly-cargo": NearTheEnd(
        "jolly-cargo",
        {
            "players": [{"colour": "red", "score": 1}, {"colour": "green", "score": 4}],
            "crates": {"c4": "red"},
            "workers": {"b4": ["red-B"], "d4": ["green-D1"]},
            "to_move": 0,
        },
        {"type": "end_turn"},
        0,
        [1],
        (
            "bob has no crate left on the dock. bob won",
            "bob n’a plus de caisse sur le plateau. bob gagne",
        ),
    ),
    # a turn limit of 4: bob's end of his fourth turn ends the game; bob has the most money
    "empire-builder-turn-limit": NearTheEnd(
        "empire-builder",
        {"players": _EB_PLAYERS, "turn_number": 7, "options": {"turn_limit": 4}},
        {"type": "end_turn"},
        1,
        [1],
        (
            "the turn limit was reached, and bob won",
            "la limite de tours est atteinte, et bob gagne",
        ),
    ),
    # bob has $80M of the 60 asked and track into Chicago, the one major city asked
    "empire-builder-won": NearTheEnd(
        "empire-builder",
        {
            "players": _EB_PLAYERS,
            "turn_number": 7,
            "options": {"money_to_win": 60, "majors_to_win": 1},
        },
        {"type": "end_turn"},
        1,
        [1],
        ("bob won, having reached the money and the major cities", "bob gagne, en ayant réuni"),
    ),
}


def _why_in_both_languages(
    server: ServerProcess,
    browser: Browser,  # noqa: F811
    game_id: str,
    expected: dict[str, str],
) -> None:
    """The finished game's page says ``expected[lang]`` in ``#why``, in English and in French."""
    for locale in ("en-US", "fr-FR"):
        lang = locale[:2]
        total = len(_events(server, game_id, lang))
        page = page_in(browser, locale)
        page.goto(f"{server.url}/viewer/#/games/{game_id}")
        ready(page, "game")
        board_at(page, total)
        assert page.get_attribute("#players", "data-finished") == "true"
        assert page.is_visible("#why")
        assert page.inner_text("#why") == expected[lang]
        assert not page.errors  # type: ignore[attr-defined]


@pytest.mark.parametrize("case", sorted(NEAR_THE_END))
def test_why_a_game_from_a_position_ended(
    server: ServerProcess,
    browser: Browser,  # noqa: F811
    case: str,
) -> None:
    near = NEAR_THE_END[case]
    with ManifestClient(server.url) as api:
        created = api.create(near.game, players=["ann", "bob"], position=near.position)
        doc = api.game(created.id)
        assert doc.status == "active" and doc.to_act == [near.mover]
        api.seat(created, near.mover).command(created.id, near.move, expected_version=doc.version)
        final = api.game(created.id)
        assert final.status == "finished" and final.result is not None
        assert final.result["winners"] == near.winners
    # the viewer says the game_ended event's sentence: why it ended, and why bob won
    expected = {}
    for lang, words in zip(("en", "fr"), near.why, strict=True):
        ended = [e for e in _events(server, created.id, lang) if e["type"] == "game_ended"]
        assert len(ended) == 1
        expected[lang] = ended[0]["sentence"]["text"]
        assert words in expected[lang]
    _why_in_both_languages(server, browser, created.id, expected)


@pytest.mark.parametrize("ending", ["resign", "abort"])
def test_why_a_resigned_or_aborted_game_ended(
    server: ServerProcess,
    browser: Browser,  # noqa: F811
    ending: str,
) -> None:
    """No game event says why a resigned or aborted game ended: the viewer says it from the
    result's ``reason`` (docs/api.md "Ending a game")."""
    with ManifestClient(server.url) as api:
        created = api.create("curious-cargo", players=["ann", "bob"])
        doc = api.game(created.id)
        # ann resigns out of turn, or calls the game off before anyone moved
        api.seat(created, 0).command(created.id, {"type": ending}, expected_version=doc.version)
        final = api.game(created.id)
        assert final.status == "finished" and final.result is not None
    expected = {
        "resign": {
            "en": "bob won, because ann resigned",
            "fr": "bob gagne, car ann abandonne",
        },
        "abort": {
            "en": "no one won, because ann called the game off before every seat had moved:"
            " it ends with no result",
            "fr": "personne ne gagne, car ann annule la partie avant que chacun ait joué :"
            " elle s’achève sans résultat",
        },
    }[ending]
    assert final.result["reason"] == {"resign": "resigned", "abort": "aborted"}[ending]
    _why_in_both_languages(server, browser, created.id, expected)
