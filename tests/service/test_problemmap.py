"""The application's typed errors as HTTP answers (``service.http.problemmap``): one status per
kind, the code, detail and extra fields in the problem document, ``Retry-After`` on what is
unavailable, and a refusal answered again exactly as recorded."""

from __future__ import annotations

import inspect

import pytest

from service.application import errors
from service.application.errors import (
    ApplicationError,
    BadRequest,
    Conflict,
    Forbidden,
    NotFound,
    RefusedByRules,
    Repeated,
    Unauthorized,
    Unavailable,
)
from service.http.problemmap import STATUS, document_of, problem_of


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (BadRequest("request.bad_cursor", "no"), 400),
        (Unauthorized("auth.missing_token", "no"), 401),
        (Forbidden("auth.not_host", "no"), 403),
        (NotFound("game.not_found", "no"), 404),
        (Conflict("version.conflict", "no", version=7), 409),
        (RefusedByRules("rule.not_your_turn", "no", rule={"seat": 1}), 422),
    ],
)
def test_each_kind_has_its_status_and_keeps_its_fields(
    error: ApplicationError, status: int
) -> None:
    problem = problem_of(error)
    assert (problem.status, problem.code, problem.detail) == (status, error.code, error.detail)
    assert problem.headers == {}
    document = document_of(error)
    assert document["type"] == f"urn:manifest:problem:{error.code}"
    assert document["status"] == status
    assert {k: document[k] for k in error.extra} == error.extra


def test_every_kind_the_application_has_is_mapped() -> None:
    """A new kind of error added without a status here would be answered 500."""
    kinds = {
        cls
        for _, cls in inspect.getmembers(errors, inspect.isclass)
        if issubclass(cls, ApplicationError) and cls not in (ApplicationError, Repeated)
    }
    assert kinds == set(STATUS)


def test_unavailable_says_when_to_come_back() -> None:
    problem = problem_of(Unavailable("service.unavailable", "down", 4, dependency="redis"))
    assert (problem.status, problem.headers) == (503, {"Retry-After": "4"})
    assert problem.extra == {"dependency": "redis"}


def test_a_refusal_is_answered_again_as_recorded() -> None:
    recorded = document_of(Conflict("version.conflict", "at 3, not 2", version=3))
    again = problem_of(Repeated("version.conflict", "at 3, not 2", recorded))
    assert again.document() == recorded
    older = {"code": "rule.x", "detail": "d", "rule": {"a": 1}}  # no status recorded: 422
    assert problem_of(Repeated("rule.x", "d", older)).document()["status"] == 422


def test_a_shortened_detail_keeps_the_kind_and_fields() -> None:
    error = Unavailable("service.unavailable", "x" * 10, 2, dependency="postgres")
    short = error.with_detail("x")
    assert isinstance(short, Unavailable) and short.retry_after == 2
    assert (short.code, short.detail, short.extra) == (error.code, "x", error.extra)
    assert error.detail == "x" * 10
