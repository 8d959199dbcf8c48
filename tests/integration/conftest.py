"""Fixtures of the HTTP integration tests: the real app, over HTTP, on a migrated database.

``server`` is, by default, the real app (``create_app``) served in the test process
(:class:`~tests.integration.serverproc.InProcessServer`): the same HTTP, PostgreSQL and Redis,
without a new interpreter importing the service for each server. A module marked
``real_process`` gets ``manifest serve`` in a subprocess instead
(:class:`~tests.integration.serverproc.ServerProcess`): where a process is what is tested —
kills, signals, workers, its log, the CLI's own start-up.

Either runs on a database cloned from the migrated template (``migrated_database``,
``tests/support/template.py``), not on an empty one that each start migrates.

``server`` is a server of the test's own — unless the test's module is marked ``shared_server``:
then every test of the module that is not marked ``own_server`` gets one server started for the
module (on a database of the module's). Games are independent by id, so tests share it safely
unless they count or list every game, stop or reconfigure the server: those are ``own_server``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support import template

from .serverproc import InProcessServer, ServerProcess

AnyServer = ServerProcess | InProcessServer


def _kind(node: pytest.Item | pytest.Module) -> type[AnyServer]:
    return ServerProcess if node.get_closest_marker("real_process") else InProcessServer


@pytest.fixture
def migrated_database(pg_dsn: str) -> Iterator[str]:
    """A database of this test's own, cloned from the migrated template; dropped afterwards."""
    with template.migrated_database(pg_dsn) as dsn:
        yield dsn


def _serve(database: str, redis_url: str, request: pytest.FixtureRequest) -> Iterator[AnyServer]:
    proc = _kind(request.node)(database, redis_url)
    request.node.manifest_server = proc
    proc.start()
    try:
        yield proc
    finally:
        proc.close()


@pytest.fixture(scope="module")
def module_server(
    pg_dsn: str, redis_url: str, request: pytest.FixtureRequest
) -> Iterator[AnyServer]:
    """One server for a module marked ``shared_server``, on a database of its own."""
    with template.migrated_database(pg_dsn) as dsn:
        proc = _kind(request.node)(dsn, redis_url)
        proc.start()
        try:
            yield proc
        finally:
            proc.close()


@pytest.fixture
def server(redis_url: str, request: pytest.FixtureRequest) -> Iterator[AnyServer]:
    """A server with a Redis key prefix of its own: the module's shared one (see the module
    docstring), else one on a database of this test's alone. A subprocess server's stderr is
    attached to the report of a failing test (section "server stderr")."""
    node = request.node
    if node.get_closest_marker("shared_server") and not node.get_closest_marker("own_server"):
        proc: AnyServer = request.getfixturevalue("module_server")
        if not proc.running:
            raise RuntimeError("the module's shared server is not running: a test stopped it")
        node.manifest_server = proc
        yield proc
        return
    yield from _serve(request.getfixturevalue("migrated_database"), redis_url, request)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> object:
    report = yield
    proc = getattr(item, "manifest_server", None)
    if isinstance(proc, ServerProcess) and getattr(report, "failed", False):
        report.sections.append(("server stderr", proc.log_tail()))  # type: ignore[attr-defined]
    return report


@pytest.fixture
def server_two_workers(
    migrated_database: str, redis_url: str, request: pytest.FixtureRequest
) -> Iterator[ServerProcess]:
    """``manifest serve --workers 2`` in a subprocess: separate caches writing to one game."""
    proc = ServerProcess(migrated_database, redis_url, workers=2)
    request.node.manifest_server = proc
    proc.start()
    try:
        yield proc
    finally:
        proc.close()
