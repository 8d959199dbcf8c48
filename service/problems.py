"""RFC 9457 problem documents with a stable machine ``code``.

Every error a client can cause leaves the server as ``application/problem+json``:
``{"type", "title", "status", "detail", "code", ...}``. ``type`` is a URN built from the code
(``urn:manifest:problem:rule.not_your_turn``), so it is stable and needs no web page.
"""

from __future__ import annotations

from typing import Any

import msgspec

PROBLEM_JSON = "application/problem+json"

_TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Request body too large",
    415: "Unsupported media type",
    416: "Range not satisfiable",
    422: "Unprocessable command",
    429: "Too many requests",
    500: "Internal server error",
    503: "Service unavailable",
}


#: A 422's title by its code's family: a request that is not a command is not called one.
_TITLES_422 = {
    "options": "Invalid game options",
    "position": "Invalid position",
    "lobby": "Invalid game settings",
    "clock": "Invalid clock terms",
    "query": "Unprocessable query",
    "message": "Unprocessable message",
    "picture": "Unprocessable picture request",
    "idempotency": "Idempotency key reused",
}


def title_of(status: int, code: str) -> str:
    """A problem's title: its status's, a 422's by its code's family (``command.*`` and
    ``rule.*``: "Unprocessable command", as recorded refusals always said)."""
    if status == 422:
        return _TITLES_422.get(code.split(".")[0], _TITLES[422])
    return _TITLES.get(status, "Error")


class Problem(Exception):
    """Raise anywhere in the service to answer with a problem document."""

    def __init__(self, status: int, code: str, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.extra = extra
        #: response headers (``Retry-After`` of a 503)
        self.headers: dict[str, str] = {}

    def retry(self, seconds: int) -> Problem:
        """This problem, answered with ``Retry-After: seconds`` (a 429 or a 503)."""
        self.headers["Retry-After"] = str(seconds)
        return self

    def document(self, instance: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "type": f"urn:manifest:problem:{self.code}",
            "title": title_of(self.status, self.code),
            "status": self.status,
            "detail": self.detail,
            "code": self.code,
        }
        if instance:
            body["instance"] = instance
        body.update(self.extra)
        return body

    def body(self, instance: str | None = None) -> bytes:
        return msgspec.json.encode(self.document(instance))


def not_found(what: str, code: str = "game.not_found") -> Problem:
    return Problem(404, code, f"no {what}")
