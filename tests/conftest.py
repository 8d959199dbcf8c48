"""Shared pytest fixtures.

``pg_dsn`` / ``redis_url`` (session): PG_DSN / REDIS_URL from the environment, else testcontainers
if a Docker engine answers, else throwaway local servers (see ``tests/support/servers.py``).
``fresh_database`` (per test): an empty, uniquely named database on that server, dropped afterwards.
This file deliberately imports nothing from the application packages.

Tests marked ``slow`` (the 1,000-game bot marathons) are left out of a local run, so the default
run stays quick; they run when ``CI`` is true (CI runs every test), when ``MANIFEST_SLOW=1``, or
when ``-m`` names markers explicitly (``-m slow`` runs only them). Hypothesis properties run a
quarter of their examples locally (``tests/support/budget.py``); a full run derandomizes them and
every run prints a failure's reproduction blob (``tests/support/hypothesis_profiles.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NoReturn

import pytest

try:  # pytest puts tests/ on sys.path while tests/ has no __init__.py ...
    from support import budget, hypothesis_profiles, servers
except ImportError:  # ... and the repo root once it has one.
    from tests.support import budget, hypothesis_profiles, servers  # type: ignore[no-redef]

# Before any test module is imported: their settings(...) inherit from the profile loaded now.
hypothesis_profiles.load()


def run_slow(config: pytest.Config) -> bool:
    """Whether this run includes the tests marked ``slow``."""
    return budget.full_run() or bool(config.getoption("markexpr"))


#: Test folders whose files take longest (servers, browsers, whole games over HTTP): run first.
_LONG_FIRST = ("integration", "faults")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Long files first, the many short domain files last: with the files spread over processes
    # (scripts/test, xdist --dist loadfile, in this order), the short ones fill in at the end
    # instead of one long file starting last and running alone. Stable: same order in each.
    items.sort(key=lambda item: item.path.parent.name not in _LONG_FIRST)
    if run_slow(config):
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]


def _unavailable(what: str, env: str, exc: Exception) -> NoReturn:
    pytest.fail(
        f"no {what} for integration tests: {env} is unset, no Docker engine answered, "
        f"and starting a local server failed:\n{exc}",
        pytrace=False,
    )


@pytest.fixture(scope="session")
def pg_dsn() -> Iterator[str]:
    error: servers.ServerUnavailable | None = None
    try:
        with servers.postgres_dsn() as dsn:
            yield dsn
    except servers.ServerUnavailable as exc:
        error = exc
    if error is not None:
        _unavailable("PostgreSQL", "PG_DSN", error)


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    error: servers.ServerUnavailable | None = None
    try:
        with servers.redis_url() as url:
            yield url
    except servers.ServerUnavailable as exc:
        error = exc
    if error is not None:
        _unavailable("Redis", "REDIS_URL", error)


@pytest.fixture(scope="session")
def redis_cluster_url() -> Iterator[str]:
    """One node of a three-primary Redis Cluster (REDIS_CLUSTER_URL, else started locally)."""
    error: servers.ServerUnavailable | None = None
    try:
        with servers.redis_cluster_url() as url:
            yield url
    except servers.ServerUnavailable as exc:
        error = exc
    if error is not None:
        _unavailable("Redis Cluster", "REDIS_CLUSTER_URL", error)


@pytest.fixture
def fresh_database(pg_dsn: str) -> Iterator[str]:
    with servers.fresh_database(pg_dsn) as dsn:
        yield dsn
