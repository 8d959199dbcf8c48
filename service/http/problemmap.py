"""The application's typed errors (:mod:`service.application.errors`) as HTTP answers: one
status per kind, RFC 9457 problem documents (:mod:`service.problems`) with the error's code,
detail and extra fields, and ``Retry-After`` on what is unavailable. The only place that knows
which status a refusal is; the app's exception handler (:mod:`service.http.errors`) answers
with it, and the composition root hands :func:`document_of` to the play service so that a
refused command is recorded with the answer its client got (a resent Idempotency-Key is
answered from that record: :class:`~service.application.errors.Repeated`)."""

from __future__ import annotations

from typing import Any

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
from service.problems import Problem

STATUS: dict[type[ApplicationError], int] = {
    BadRequest: 400,
    Unauthorized: 401,
    Forbidden: 403,
    NotFound: 404,
    Conflict: 409,
    RefusedByRules: 422,
    Unavailable: 503,
}
#: The fields of a problem document that are not an error's extra fields.
_STANDARD = ("type", "title", "status", "detail", "code", "instance")


def problem_of(error: ApplicationError) -> Problem:
    """The problem document ``error`` is answered with."""
    if isinstance(error, Repeated):
        recorded = error.recorded
        extra = {k: v for k, v in recorded.items() if k not in _STANDARD}
        return Problem(int(recorded.get("status", 422)), error.code, error.detail, **extra)
    status = next((s for kind, s in STATUS.items() if isinstance(error, kind)), 500)
    problem = Problem(status, error.code, error.detail, **error.extra)
    if isinstance(error, Unavailable):
        problem.retry(error.retry_after)
    return problem


def document_of(error: ApplicationError) -> dict[str, Any]:
    """The problem document of ``error`` as recorded with a refused command (no ``instance``)."""
    return problem_of(error).document()
