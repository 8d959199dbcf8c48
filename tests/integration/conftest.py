"""Fixtures of the HTTP integration tests: the real server in a subprocess."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

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


@pytest.fixture
def server(
    fresh_database: str, redis_url: str, request: pytest.FixtureRequest
) -> Iterator[ServerProcess]:
    """``manifest serve`` on a fresh database, with a Redis key prefix of its own. Its stderr
    is attached to the report of a failing test (section "server stderr")."""
    yield from _serve(fresh_database, redis_url, request, workers=1)


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
