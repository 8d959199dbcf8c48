"""The viewer page in headless Chromium (Debian's ``chromium``, driven by Playwright; nothing is
downloaded at run time): the list of games and its filters, a finished game stepped through to
its last event and back with the board matching ``/replay/{n}`` at every step, a dispute file
verified in the browser (and a tampered one refused), and a live game followed while a bot plays.

Screenshots go to ``$MANIFEST_TEST_OUTPUT/screenshots`` (default ``test-output/``)."""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from examples.bot import play
from examples.client import ManifestClient
from ledger.merkle import Tree

from .serverproc import ROOT, ServerProcess

pytestmark = pytest.mark.integration
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
WAIT_MS = 20_000
SHOTS = Path(os.environ.get("MANIFEST_TEST_OUTPUT", ROOT / "test-output")) / "screenshots"

#: What a picture holds, read from the DOM: every classed element with its data-* attributes.
DOM_PIECES = """() => Array.from(document.querySelectorAll('#board svg [class]')).map(e =>
  [e.getAttribute('class'), ...Array.from(e.attributes)
     .filter(a => a.name.startsWith('data-')).map(a => a.name + '=' + a.value).sort()]
  .join('|')).sort()"""


def pieces(svg: str) -> list[str]:
    """The same as DOM_PIECES, from the SVG the server answers."""
    out = []
    for e in ET.fromstring(svg).iter():
        cls = e.get("class")
        if cls is None:
            continue
        data = sorted(f"{k}={v}" for k, v in e.attrib.items() if k.startswith("data-"))
        out.append("|".join([cls, *data]))
    return sorted(out)


@pytest.fixture
def browser(server: ServerProcess) -> Iterator[Browser]:
    """Chromium for one test, started after (and closed before) the server and its database:
    Playwright's sync API runs an event loop that the database fixtures' asyncio.run must not
    meet."""
    path = os.environ.get("MANIFEST_CHROMIUM") or shutil.which("chromium")
    assert path, "Debian's chromium is missing: scripts/test installs it"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def page_of(browser: Browser) -> Page:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_default_timeout(WAIT_MS)
    page.errors = errors  # type: ignore[attr-defined]
    return page


def shot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def ready(page: Page, what: str) -> None:
    page.wait_for_function(f"document.getElementById('app').dataset.ready === '{what}'")


def board_at(page: Page, n: int) -> None:
    page.wait_for_function(f"document.getElementById('board').dataset.version === '{n}'")


def test_list_finished_game_scrubbing_and_dispute(server: ServerProcess, browser: Browser) -> None:
    with ManifestClient(server.url) as api:
        finished = api.create("cargo-empire", players=["ann", "bob"])
        play(api, finished, rng=random.Random(5))
        live = api.create("jolly-cargo", players=["cy", "di"])
        total = api.game(finished.id).version

        page = page_of(browser)
        page.goto(server.url + "/viewer/")
        ready(page, "list")
        rows = page.locator("#games tbody tr[data-id]")
        assert {rows.nth(i).get_attribute("data-id") for i in range(rows.count())} == {
            finished.id,
            live.id,
        }
        shot(page, "list")  # ordinary names: the README's screenshot (docs/screenshots/)
        # a hostile player name: shown as text, never run
        hostile = api.create("jolly-cargo", players=["ed<img src=x onerror=window.pwned=1>", "fy"])
        page.reload()
        ready(page, "list")
        assert rows.count() == 3
        assert "ed<img src=x onerror=window.pwned=1>" in page.inner_text("#games")
        assert page.evaluate("window.pwned") is None
        assert page.locator("#games img").count() == 0
        page.select_option("#filter-status", "finished")
        ready(page, "list")
        assert rows.count() == 1 and rows.first.get_attribute("data-id") == finished.id
        page.select_option("#filter-status", "")
        page.select_option("#filter-game", "jolly-cargo")
        ready(page, "list")
        shown = {rows.nth(i).get_attribute("data-id") for i in range(rows.count())}
        assert shown == {live.id, hostile.id}
        assert rows.first.get_attribute("data-status") == "active"
        page.select_option("#filter-game", "")
        ready(page, "list")

        page.click(f"#games tr[data-id='{finished.id}'] a")
        ready(page, "game")
        board_at(page, total)
        page.wait_for_function("document.getElementById('audit').dataset.ok === 'true'")
        assert "audit ✓" in page.inner_text("#audit")
        assert page.locator("#log tbody tr").count() == total

        def check(n: int) -> list[str]:
            board_at(page, n)
            assert page.inner_text("#position") == f"event {n} / {total}"
            assert page.get_attribute("#log tr.selected", "data-version") == str(n)
            shown: list[str] = page.evaluate(DOM_PIECES)
            assert shown == pieces(api.board_svg(finished.id, n)), n
            return shown

        page.keyboard.press("Home")
        start = check(1)
        seen = {tuple(start)}
        for n in range(2, total + 1):  # through every event to the last
            page.keyboard.press("ArrowRight")
            board_at(page, n)
            if n % 10 == 0 or n > total - 3:
                seen.add(tuple(check(n)))
        assert page.is_disabled("#next") and page.is_disabled("#last")
        page.keyboard.press("ArrowRight")  # past the end: stays
        check(total)
        for n in range(total - 1, total - 6, -1):  # and back
            page.keyboard.press("ArrowLeft")
            check(n)
        page.click("#first")
        assert check(1) == start
        assert len(seen) > 3, "the board never changed"
        page.click("#last")
        check(total)
        shot(page, "game")

        # a dispute file, verified in the browser: pick an event a command caused
        n = next(
            e["version"]
            for e in api.events(finished.id)
            if e["seat"] is not None and e["version"] >= total // 2
        )
        page.locator(f"#log tr[data-version='{n}']").click()
        check(n)
        page.click("#dispute-open")
        verdict = page.locator("#dispute .verdict")
        verdict.wait_for()
        assert verdict.get_attribute("data-ok") == "true", page.inner_text("#dispute")
        marks = page.locator("#proof-checks li")
        assert marks.count() >= 5
        proof = page.inner_text("#proof-checks")
        for name in ("link:", "events:", "inclusion:", "tree head:", "receipt:"):
            assert name in proof, proof
        assert all(marks.nth(i).get_attribute("class") == "yes" for i in range(marks.count())), (
            page.inner_text("#proof-checks")
        )
        shot(page, "dispute")
        assert page.errors == []  # type: ignore[attr-defined]


def test_verify_js_refuses_tampering(server: ServerProcess, browser: Browser) -> None:
    """verify.js checks the RFC 9162 inclusion proof against the signed tree head: each
    tampering fails exactly the check that covers it."""
    with ManifestClient(server.url) as api:
        created = api.create("cargo-empire", players=["solo"])
        play(api, created, rng=random.Random(1))
        dispute = api.dispute(created.id, 5)
        last = api.dispute(created.id, api.game(created.id).version)
        keys = api.keys()
    assert len(dispute["inclusion"]["path"]) >= 2
    page = page_of(browser)
    page.goto(server.url + "/viewer/")
    ready(page, "list")
    script = """async ([dispute, keys, change]) => {
      const { verifyDispute } = await import('/viewer/verify.js');
      const d = structuredClone(dispute);
      const p = d.inclusion, t = p.tree_head, c = d.chain;
      const flip = (hex) => (hex[0] === '0' ? '1' : '0') + hex.slice(1);
      if (change === 'canonical') c.canonical = c.canonical.replace('"version":5', '"version":6');
      if (change === 'prev_hash') d.chain.prev_hash = flip(d.chain.prev_hash);
      if (change === 'hash') d.chain.hash = flip(d.chain.hash);
      if (change === 'path') p.path[1] = flip(p.path[1]);
      if (change === 'path_short') p.path.pop();
      if (change === 'path_long') p.path.push('00'.repeat(32));
      if (change === 'index') p.leaf_index += 1;
      if (change === 'root') t.root = flip(t.root);
      if (change === 'size') { t.size += 1; p.tree_size += 1; }
      if (change === 'signature') t.signature = btoa('x'.repeat(64));
      if (change === 'key') keys = [{ ...keys[0], public_key: btoa('y'.repeat(32)) }];
      if (change === 'key_id') t.key_id = 'ffffffffffffffff';
      if (change === 'game') { t.game = 'another'; }
      if (change === 'receipt') d.receipt.signature = btoa('x'.repeat(64));
      if (change === 'garbage') d.inclusion = 'nonsense';
      const verdict = await verifyDispute(d, keys);
      return [verdict.ok, verdict.checks.filter((c) => c.ok === false).map((c) => c.check)];
    }"""
    changes = {
        "none": [True, []],
        "canonical": [False, ["link"]],
        "prev_hash": [False, ["link"]],
        "hash": [False, ["link", "events", "inclusion"]],
        "path": [False, ["inclusion"]],
        "path_short": [False, ["inclusion"]],
        "path_long": [False, ["inclusion"]],
        "index": [False, ["inclusion"]],
        "root": [False, ["inclusion", "tree head"]],
        # a left leaf's path is the same in a tree one larger: the signature binds the size
        "size": [False, ["tree head"]],
        "signature": [False, ["tree head"]],
        "key": [False, ["tree head", "receipt"]],
        "key_id": [False, ["tree head"]],
        "game": [False, ["tree head"]],
        "receipt": [False, ["receipt"]],
        "garbage": [False, ["format"]],
    }
    results = {change: page.evaluate(script, [dispute, keys, change]) for change in changes}
    assert results == changes
    # the last event: its hash is also the signed tree head's chain head
    script_last = """async ([d, keys]) => {
      const { verifyDispute } = await import('/viewer/verify.js');
      const v = await verifyDispute(d, keys);
      return [v.ok, v.checks.map((c) => c.check)];
    }"""
    ok, names = page.evaluate(script_last, [last, keys])
    assert ok and "head" in names and "inclusion" in names


def test_verify_js_inclusion_matches_the_servers_trees(
    server: ServerProcess, browser: Browser
) -> None:
    """The browser's RFC 9162 verification accepts every audit path ledger/merkle.py builds
    (every leaf of trees of 1 to 33 leaves) and refuses each at the next index, at its sibling's,
    or for another leaf. (Not at another size: RFC 9162 paths of a left leaf are the same in
    trees of several sizes, which is why the tree head's signature covers the size.)"""
    cases = []
    for size in range(1, 34):
        leaves = [hashlib.sha256(f"{size}:{i}".encode()).digest() for i in range(size)]
        tree = Tree(leaves)
        root = tree.root().hex()
        for index in range(size):
            path = [h.hex() for h in tree.inclusion_proof(index)]
            cases.append([index, size, tree.levels[0][index].hex(), path, root])
    page = page_of(browser)
    page.goto(server.url + "/viewer/")
    ready(page, "list")
    script = """async (cases) => {
      const { verifyInclusion, hexToBytes } = await import('/viewer/verify.js');
      const out = [];
      for (const [index, size, leaf, path, root] of cases) {
        const hashes = path.map(hexToBytes);
        const at = (i, l) => verifyInclusion(i, size, hexToBytes(l), hashes, hexToBytes(root));
        const other = (leaf[0] === '0' ? '1' : '0') + leaf.slice(1);
        out.push([await at(index, leaf), await at(index + 1, leaf), await at(index, other),
                  await at(index ^ 1, leaf)]);
      }
      return out;
    }"""
    results = page.evaluate(script, cases)
    assert len(results) == len(cases) == 33 * 34 // 2
    for (index, size, *_), (right, next_index, other, sibling) in zip(cases, results, strict=True):
        assert right, (index, size)
        assert not next_index and not other, (index, size)
        assert not sibling, (index, size)


def test_follow_a_live_game_with_a_seat_token(server: ServerProcess, browser: Browser) -> None:
    with ManifestClient(server.url) as api:
        created = api.create("jolly-cargo", players=["eve", "fay"])
        token = created.seats[0].token
        start = api.game(created.id).version
        page = page_of(browser)
        page.goto(f"{server.url}/viewer/#/games/{created.id}?token={token}")
        ready(page, "game")
        board_at(page, start)
        assert "live" in page.inner_text("#status")
        assert "viewed as seat 0" in page.inner_text(".game-head")  # which seat (issue 43)

        moves = 12
        errors: list[BaseException] = []

        def bot() -> None:
            try:
                rng = random.Random(2)
                seats = [api.seat(created, s) for s in (0, 1)]
                for _ in range(moves):
                    (who,) = api.game(created.id).to_act
                    legal = seats[who].legal(created.id)
                    seats[who].command(
                        created.id, rng.choice(legal.commands), expected_version=legal.version
                    )
                    page_wait.wait(0.25)
            except BaseException as error:  # reported by the test thread
                errors.append(error)

        page_wait = threading.Event()
        thread = threading.Thread(target=bot, daemon=True)
        thread.start()
        seen = set()
        for _ in range(200):
            page.wait_for_timeout(100)
            seen.add(page.get_attribute("#board", "data-version"))
            if not thread.is_alive():
                break
        thread.join(30)
        assert not errors, errors
        final = api.game(created.id).version
        assert final == start + moves
        board_at(page, final)
        assert len(seen - {str(start)}) >= 2, f"the board did not follow: {seen}"
        assert page.locator("#log tbody tr").count() == final
        assert page.inner_text("#position") == f"event {final} / {final}"
        seat0 = api.as_token(token)
        shown: list[str] = page.evaluate(DOM_PIECES)
        assert shown == pieces(seat0.board_svg(created.id, final))
        crates = [p for p in shown if p.startswith("crate ")]
        assert len(crates) == moves and all("data-colour" not in p for p in crates)
        shot(page, "live")
        assert page.errors == []  # type: ignore[attr-defined]


def test_curious_cargo_and_empire_builder_boards_in_the_viewer(
    server: ServerProcess, browser: Browser
) -> None:
    """The viewer shows the other two games' pictures as the server draws them: Empire Builder
    track and trains, Curious Cargo trucks and goods, and a seat token's own truck cards."""
    cc_position = {"at": "turn", "phase": "trucking", "players": [
        {"cards": ["T17", "T05"], "board": [{"tile": "S2r1", "at": "b3", "rot": 0}],
         "forklift": 1, "shipping_lane": [{"card": "T10", "rear": 1, "goods": {"2": "red"}}]},
        {"cards": ["T22"]}]}
    eb_position = {"players": [
        {"money": 48, "cards": [0, 1, 2], "track": [[812, 813, 814]], "turns": 4, "train": 813},
        {"money": 60, "cards": [3, 4, 5], "loads": ["Coal"], "train": 1206, "speed": 12,
         "turns": 3}], "first": 0, "turn_number": 7}
    with ManifestClient(server.url) as api:
        eb = api.create("empire-builder", players=["gil", "hal"], position=eb_position)
        cc = api.create("curious-cargo", players=["ivy", "jo"], position=cc_position)
        page = page_of(browser)
        for created in (eb, cc):
            page.goto(f"{server.url}/viewer/#/games/{created.id}")
            ready(page, "game")
            version = api.game(created.id).version
            board_at(page, version)
            shown: list[str] = page.evaluate(DOM_PIECES)
            assert shown == pieces(api.board_svg(created.id, version))
            if created is eb:
                assert sum(p.startswith("track|") for p in shown) == 2
                assert "train|data-loads=Coal|data-milepost=1206|data-seat=1" in shown
        shot(page, "curious-cargo")
        assert page.locator("#board svg g[data-truck='T10']").count() == 1
        assert "cards: 2" in page.inner_html("#board") and "T17" not in page.inner_html("#board")
        page.goto(f"{server.url}/viewer/#/games/{cc.id}?token={cc.seats[0].token}")
        ready(page, "game")
        board_at(page, api.game(cc.id).version)
        assert "cards: T17, T05" in page.inner_html("#board")
        assert "T22" not in page.inner_html("#board")
        assert page.errors == []  # type: ignore[attr-defined]
