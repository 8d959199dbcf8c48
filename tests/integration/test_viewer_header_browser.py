"""The viewer's header (issue 29): the players by name, and once the game is over its scores
and winners — in a game watched to its end and in a finished game opened later; the events'
time column stays in view at the 1400 px the screenshots use."""

from __future__ import annotations

import random

import pytest
from playwright.sync_api import Page

from examples.bot import play
from examples.client import ManifestClient

from .serverproc import ServerProcess
from .test_viewer_browser import browser, page_of, ready, shot  # noqa: F401 (a fixture)

pytestmark = pytest.mark.integration


def header(page: Page) -> list[list[str]]:
    rows = page.locator("#players tbody tr")
    return [[c.strip() for c in rows.nth(i).inner_text().split("\t")] for i in range(rows.count())]


def test_header_names_players_then_scores_and_winners(
    server: ServerProcess,
    browser,  # noqa: F811
) -> None:
    with ManifestClient(server.url) as api:
        game = api.create("cargo-empire", players=["ann", "bob"])
        page = page_of(browser)
        page.goto(f"{server.url}/viewer/#/games/{game.id}")
        ready(page, "game")
        assert page.get_attribute("#players", "data-finished") == "false"
        assert [row[:2] for row in header(page)] == [["0", "ann"], ["1", "bob"]]
        assert page.locator("#players th").count() == 2  # no scores while it is played
        # the time column is not cut at 1400 px: the events box needs no sideways scroll
        fits = "(b => b.scrollWidth <= b.clientWidth + 1)(document.querySelector('.logbox'))"
        assert page.evaluate(fits)

        play(api, game, rng=random.Random(7))  # watched to its end
        final = api.game(game.id)
        assert final.result is not None
        page.wait_for_function("document.getElementById('players').dataset.finished === 'true'")
        scores, winners = final.result["scores"], final.result["winners"]
        names = {0: "ann", 1: "bob"}
        rows = header(page)
        assert [(r[0], r[1], r[2]) for r in rows] == [
            (str(s), names[s], str(scores[s])) for s in (0, 1)
        ]
        for s in (0, 1):
            assert ("winner" in rows[s][3:]) == (s in winners), rows
        outcome = page.inner_text("#outcome")
        if winners:
            assert outcome == f"Finished: won by {' and '.join(names[w] for w in winners)}."
        else:
            assert outcome == "Finished: no winner."
        shot(page, "game-finished-header")

        # a finished game opened afresh says the same
        page.goto(f"{server.url}/viewer/#/")
        ready(page, "list")
        page.goto(f"{server.url}/viewer/#/games/{game.id}")
        ready(page, "game")
        assert header(page) == rows and page.inner_text("#outcome") == outcome
        assert page.evaluate(fits)
