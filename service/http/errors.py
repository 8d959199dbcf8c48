"""Every error as an RFC 9457 problem document (:mod:`service.problems`): the exception
handlers of the app. A :class:`~service.problems.Problem` raised by the HTTP edge is answered as
it is, an application's typed error (:mod:`service.application.errors`) as
:mod:`service.http.problemmap` maps it; litestar's own errors (validation, 404, 405 with
``Allow``, 413) get stable codes; a failing dependency (PostgreSQL, Redis) is a 503 with
``Retry-After`` (:mod:`service.application.faults`); anything else is a 500 that says a
command may have been recorded."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import structlog
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException

from service.application.errors import ApplicationError
from service.eventstore.store import GameNotFound
from service.http.hardening import check_path
from service.http.problemmap import problem_of
from service.http.services import Services
from service.problems import PROBLEM_JSON, Problem

log = structlog.get_logger("manifest")

Handler = Callable[[Request[Any, Any, Any], Exception], Response[bytes]]


def problem_response(problem: Problem, request: Request[Any, Any, Any]) -> Response[bytes]:
    return Response(
        content=problem.body(instance=request.url.path),
        status_code=problem.status,
        media_type=PROBLEM_JSON,
        headers=problem.headers or None,
    )


def on_problem(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    if not isinstance(exc, Problem):
        raise exc
    return problem_response(exc, request)


def on_refusal(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    if not isinstance(exc, ApplicationError):
        raise exc
    return problem_response(problem_of(exc), request)


def on_http_error(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    if not isinstance(exc, HTTPException):
        raise exc
    status = exc.status_code
    if status in (404, 405):  # no route ran the hardening: bad bytes in the path are a 400
        try:
            check_path(request.scope)
        except Problem as bad:
            return problem_response(bad, request)
    if isinstance(exc, ValidationException) or status == 400:
        problem = Problem(400, "request.invalid", _detail(exc))
    elif status == 413:
        problem = Problem(413, "request.too_large", "the request body is too large")
    elif status == 404:
        problem = Problem(404, "http.not_found", "no such endpoint")
    elif status == 405:
        allowed = allowed_methods(request)
        problem = Problem(405, "http.method_not_allowed", "this endpoint does not take that method")
        response = problem_response(problem, request)
        if allowed:
            response.headers["allow"] = ", ".join(allowed)
        return response
    else:
        problem = Problem(status, f"http.{status}", str(exc.detail))
    return problem_response(problem, request)


_ROUTE_PATTERNS: dict[str, re.Pattern[str]] = {}


def allowed_methods(request: Request[Any, Any, Any]) -> list[str]:
    """The methods the route at this path takes (for ``Allow`` on a 405)."""
    path = request.url.path
    for candidate in request.app.routes:
        template = candidate.path_format
        pattern = _ROUTE_PATTERNS.get(template)
        if pattern is None:
            pattern = re.compile("^" + re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(template)) + "$")
            _ROUTE_PATTERNS[template] = pattern
        methods = getattr(candidate, "methods", None)
        if methods and pattern.match(path):
            return sorted(methods)
    return []


def _detail(exc: HTTPException) -> str:
    extra = exc.extra
    if isinstance(extra, list) and extra:
        parts = [
            f"{e.get('key') or 'body'}: {e.get('message')}" for e in extra if isinstance(e, dict)
        ]
        if parts:
            return "; ".join(parts)
    return str(exc.detail) or "the request is not valid"


def on_not_found(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    return problem_response(Problem(404, "game.not_found", "no such game"), request)


def on_unexpected(services: Services) -> Handler:
    """The handler of any other exception: a dependency's failure is a 503 (when the
    application has started and its fault policy recognises it), anything else a 500."""

    def handle(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
        kind = "read" if request.method in ("GET", "HEAD") else "write"
        manifest = services.started
        failed = None if manifest is None else manifest.faults.unavailable_for(exc, kind)
        if failed is not None:
            log.warning("dependency failure", path=request.url.path, error=repr(exc))
            return problem_response(problem_of(failed), request)
        log.exception("unhandled error", path=request.url.path)
        detail = (
            "the server failed; a command sent may have been recorded: "
            "resend it with the same Idempotency-Key"
        )
        return problem_response(Problem(500, "server.error", detail), request)

    return handle


def exception_handlers(services: Services) -> dict[Any, Handler]:
    return {
        Problem: on_problem,
        ApplicationError: on_refusal,
        HTTPException: on_http_error,
        GameNotFound: on_not_found,
        Exception: on_unexpected(services),
    }
