"""Dependency failures become honest 503s: which say whether a command may have been recorded."""

from __future__ import annotations

import asyncpg  # type: ignore[import-untyped]
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from infra.pool import NotSent
from projections.store import StoreUnavailable
from service.application.errors import Unavailable
from service.application.faults import (
    MAY_BE_RECORDED,
    NOT_RECORDED,
    Admission,
    Busy,
    Faults,
)
from service.http.problemmap import problem_of


@pytest.mark.parametrize(
    ("error", "dependency", "says"),
    [
        (asyncpg.exceptions.ConnectionDoesNotExistError("lost"), "postgres", MAY_BE_RECORDED),
        (asyncpg.exceptions.AdminShutdownError("shutting down"), "postgres", MAY_BE_RECORDED),
        (TimeoutError(), "postgres", MAY_BE_RECORDED),
        (ConnectionResetError(), "postgres", MAY_BE_RECORDED),
        (NotSent("no connection within 2 s"), "postgres", NOT_RECORDED),
        (asyncpg.exceptions.LockNotAvailableError("lock"), "postgres", NOT_RECORDED),
        (asyncpg.exceptions.QueryCanceledError("statement timeout"), "postgres", NOT_RECORDED),
        (asyncpg.exceptions.CannotConnectNowError("starting"), "postgres", NOT_RECORDED),
        # a demoted server (SQLSTATE 25006) refused the write: a failover, not a bug
        (
            asyncpg.exceptions.ReadOnlySQLTransactionError("read-only transaction"),
            "postgres",
            NOT_RECORDED,
        ),
        (NotSent("NoPrimary: no server takes writes"), "postgres", NOT_RECORDED),
        (Busy("4 writes to this game are already waiting"), "admission", NOT_RECORDED),
        (StoreUnavailable("redis: timeout"), "redis", "try again"),
        (RedisConnectionError("refused"), "redis", "try again"),
    ],
)
def test_a_dependency_failure_is_a_503_that_says_what_happened(
    error: BaseException, dependency: str, says: str
) -> None:
    failed = Faults(retry_after=3).unavailable_for(error, "command")
    assert isinstance(failed, Unavailable)
    problem = problem_of(failed)
    assert (problem.status, problem.code) == (503, "service.unavailable")
    assert problem.headers == {"Retry-After": "3"}
    assert problem.extra == {"dependency": dependency}
    assert says in problem.detail
    assert "nothing was lost" not in problem.detail


def test_outside_a_command_a_lost_connection_does_not_talk_of_keys() -> None:
    lost = asyncpg.exceptions.ConnectionDoesNotExistError("lost")
    read = Faults().unavailable_for(lost, "read")
    assert read is not None and "Idempotency-Key" not in read.detail
    write = Faults().unavailable_for(lost, "write")  # a join, a message: no key to resend with
    assert write is not None and "may have taken effect" in write.detail


@pytest.mark.parametrize("error", [ValueError("bug"), KeyError("x"), RuntimeError()])
def test_a_bug_is_not_a_dependency_failure(error: Exception) -> None:
    assert Faults().unavailable_for(error, "command") is None


def test_admission_lets_a_few_writers_in_per_game_and_refuses_the_next_at_once() -> None:
    admission = Admission(2)
    with admission.enter("a"), admission.enter("a"):
        with pytest.raises(Busy), admission.enter("a"):
            pass
        with admission.enter("b"):  # another game is not affected
            pass
    with admission.enter("a"), admission.enter("a"):  # all released
        pass
    assert admission._inflight == {}
