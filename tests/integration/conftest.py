"""Fixtures of the HTTP integration tests: the real server in a subprocess.

``server`` is a server of the test's own, on a fresh database — unless the test's module is
marked ``shared_server``: then every test of the module that is not marked ``own_server`` gets
one server started for the module (on a fresh database of the module's), which saves a server
start (~1.5 s of CPU) per test. Games are independent by id, so tests share it safely unless
they count or list every game, stop or reconfigure the server: those are ``own_server``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support import servers

from .serverproc import ServerProcess


def _serve(
    fresh_database: str, redis_url: str, request: pytest.FixtureRequest, workers: int
) -> Iterator[ServerProcess]:
    proc = ServerProcess(fresh_database, redis_url, workers=workers)
    request.node.manifest_server = proc
    proc.start()
    try:
        yield proc
    finally:
        proc.close()


@pytest.fixture(scope="module")
def module_server(pg_dsn: str, redis_url: str) -> Iterator[ServerProcess]:
    """One ``manifest serve`` for a module marked ``shared_server``, on a database of its own."""
    with servers.fresh_database(pg_dsn) as dsn:
        proc = ServerProcess(dsn, redis_url)
        proc.start()
        try:
            yield proc
        finally:
            proc.close()


@pytest.fixture
def server(redis_url: str, request: pytest.FixtureRequest) -> Iterator[ServerProcess]:
    """``manifest serve`` with a Redis key prefix of its own: the module's shared one (see the
    module docstring), else one on a fresh database for this test alone. Its stderr is attached
    to the report of a failing test (section "server stderr")."""
    node = request.node
    if node.get_closest_marker("shared_server") and not node.get_closest_marker("own_server"):
        proc: ServerProcess = request.getfixturevalue("module_server")
        if proc.proc is None or proc.proc.poll() is not None:
            raise RuntimeError("the module's shared server is not running: a test stopped it")
        node.manifest_server = proc
        yield proc
        return
    yield from _serve(request.getfixturevalue("fresh_database"), redis_url, request, workers=1)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> object:
    report = yield
    proc = getattr(item, "manifest_server", None)
    if isinstance(proc, ServerProcess) and getattr(report, "failed", False):
        report.sections.append(("server stderr", proc.log_tail()))  # type: ignore[attr-defined]
    return report


@pytest.fixture
def server_two_workers(
    fresh_database: str, redis_url: str, request: pytest.FixtureRequest
) -> Iterator[ServerProcess]:
    """Like ``server``, with two worker processes: separate caches writing to one game."""
    yield from _serve(fresh_database, redis_url, request, workers=2)
