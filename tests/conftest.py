"""Shared pytest fixtures.

``pg_dsn`` / ``redis_url`` (session): PG_DSN / REDIS_URL from the environment, else testcontainers
if a Docker engine answers, else throwaway local servers (see ``tests/support/servers.py``).
``fresh_database`` (per test): an empty, uniquely named database on that server, dropped afterwards.
This file deliberately imports nothing from the application packages.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

try:  # pytest puts tests/ on sys.path while tests/ has no __init__.py ...
    from support import servers
except ImportError:  # ... and the repo root once it has one.
    from tests.support import servers  # type: ignore[no-redef]


@pytest.fixture(scope="session")
def pg_dsn() -> Iterator[str]:
    try:
        with servers.postgres_dsn() as dsn:
            yield dsn
    except servers.ServerUnavailable as exc:
        pytest.fail(f"no PostgreSQL for integration tests: {exc}", pytrace=False)


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    try:
        with servers.redis_url() as url:
            yield url
    except servers.ServerUnavailable as exc:
        pytest.fail(f"no Redis for integration tests: {exc}", pytrace=False)


@pytest.fixture
def fresh_database(pg_dsn: str) -> Iterator[str]:
    with servers.fresh_database(pg_dsn) as dsn:
        yield dsn
