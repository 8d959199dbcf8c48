"""The first pages a newcomer opens (issue 29), in headless Chromium: ``/`` leads to the viewer,
and the API docs page (``/schema``) renders Swagger UI with every file it loads coming from the
server itself — no request leaves localhost, so the page works offline."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, Route, sync_playwright

from .serverproc import ServerProcess
from .test_viewer_browser import CHROMIUM_ARGS, WAIT_MS, shot

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]
LOCAL = {"127.0.0.1", "localhost", "[::1]", "::1"}


@pytest.fixture
def browser(server: ServerProcess) -> Iterator[Browser]:
    path = os.environ.get("MANIFEST_CHROMIUM") or shutil.which("chromium")
    assert path, "Debian's chromium is missing: scripts/test installs it"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def test_api_docs_render_with_nothing_from_elsewhere(
    server: ServerProcess, browser: Browser
) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.set_default_timeout(WAIT_MS)
    requested: list[str] = []
    outside: list[str] = []
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))

    def gate(route: Route) -> None:
        url = route.request.url
        requested.append(url)
        if urlsplit(url).hostname in LOCAL or url.startswith("data:"):
            route.continue_()
        else:  # as offline: nothing from elsewhere arrives
            outside.append(url)
            route.abort()

    page.route("**/*", gate)
    page.goto(server.url + "/schema")
    # Swagger UI drew the document: its title and one block per operation
    page.wait_for_selector(".swagger-ui .info .title")
    assert "Manifest" in page.inner_text(".swagger-ui .info .title")
    page.wait_for_selector(".opblock")
    assert page.locator(".opblock").count() >= 20
    shot(page, "api-docs")
    assert outside == [], outside
    assert errors == [], errors
    assert any(u.endswith("/schema/swagger-ui/swagger-ui-bundle.js") for u in requested)
    # and the page names no other host at all (so nothing could be fetched from one)
    html = httpx.get(server.url + "/schema").text
    loads = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)""", html)
    assert loads and all(u.startswith("/schema/") for u in loads), loads


def test_root_leads_to_the_viewer(server: ServerProcess, browser: Browser) -> None:
    r = httpx.get(server.url + "/", follow_redirects=False)
    assert r.status_code == 302 and r.headers["location"] == "viewer/"
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.set_default_timeout(WAIT_MS)
    page.goto(server.url + "/")
    page.wait_for_function("document.getElementById('app').dataset.ready === 'list'")
    assert page.url == server.url + "/viewer/"
