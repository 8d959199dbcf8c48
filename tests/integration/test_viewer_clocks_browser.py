"""The viewer shows each seat's turn clock running (issue 31), in headless Chromium: the seat
to act counts down to its deadline, and when its player leaves the seat to the bot, the live
stream brings the change and the viewer says the bot sits in."""

from __future__ import annotations

import httpx
from playwright.sync_api import Browser

from examples.client import ManifestClient

from .serverproc import ServerProcess
from .test_viewer_browser import browser, page_of, ready, shot

__all__ = ["browser"]  # the fixture, shared with the viewer's other browser tests

COUNTDOWN = """(seat) => {
  const cell = document.querySelector(`#clocks tr[data-seat="${seat}"] td.time`);
  return cell ? cell.textContent : null;
}"""


def test_the_viewer_shows_each_seats_clock_running(server: ServerProcess, browser: Browser) -> None:
    with ManifestClient(server.url) as api:  # the example client creates clocked games
        made = api.create(
            "cargo-empire", players=["ann", "bob"], clock={"kind": "turn", "seconds": 3600}
        )
    with httpx.Client(base_url=server.url, timeout=30) as client:
        created = client.get(f"/v1/games/{made.id}").json()
        gid, seat = made.id, created["to_act"][0]
        token = made.seats[seat].token
        page = page_of(browser)
        page.goto(f"{server.url}/viewer/#/games/{gid}")
        ready(page, "game")
        assert "3600 s per move" in page.inner_text("#clocks")
        first = page.evaluate(COUNTDOWN, seat)
        assert first == "1:00:00" or (first or "").startswith("59:"), first
        # running: the countdown changes on its own
        page.wait_for_function(f"({COUNTDOWN})({seat}) !== {first!r}")
        assert page.evaluate(COUNTDOWN, 1 - seat) == "—"  # not asked: not running
        shot(page, "clocks")
        r = client.post(
            f"/v1/games/{gid}/presence",
            json={"away": True},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert r.status_code == 200, r.text
        page.wait_for_function(f"({COUNTDOWN})({seat}) === 'bot sits in'")
        assert page.errors == []  # type: ignore[attr-defined]
