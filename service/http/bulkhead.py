"""Heavy reads — the whole replay, the export, the audit and dispute files: their bulkheads,
and their conditional (``ETag``/304) and ranged (``Range``/206) answers.

A heavy read is admitted only while fewer than ``per_process`` run in this process and fewer
than ``per_client`` run for its client (the connection's address, as the quotas count it:
:func:`service.http.limits.client_of`). Past the client's cap the answer is 429
``rate.limited``, past the process's 503 ``service.unavailable`` — both with ``Retry-After``,
both at once (nothing waits in a queue: a queue of heavy reads is the load this is against).
The slot is held while the document is computed or read, not while its bytes are sent, so a
client that reads slowly holds no slot (uvicorn's flow control holds the bytes).

The work itself never runs on the event loop as one blocking computation: the replay folds
in slices that yield to the loop (:mod:`service.application.history`), the audit, the export
and dispute files run in a thread, and a finished game's documents are read back from PostgreSQL
(:mod:`service.application.kept`). The caps bound how many such slices compete with the
commands a process answers; docs/scaling.md ("Heavy reads") has the measurements.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from litestar import Request, Response
from prometheus_client import Counter, Gauge

from service.application.auditcache import AuditCache
from service.application.history import History
from service.application.kept import Kept
from service.http.limits import client_of
from service.problems import Problem

REFUSED = Counter(
    "manifest_heavy_reads_refused_total",
    "Heavy reads refused at once: 429 (the client's cap), 503 (the process's)",
    ["status"],
)
RUNNING = Gauge("manifest_heavy_reads_running", "Heavy reads running in this process")


class Bulkhead:
    def __init__(self, per_client: int, per_process: int, retry_after: int = 1) -> None:
        self.per_client = per_client
        self.per_process = per_process
        self.retry_after = retry_after
        self.running = 0
        self._by_client: dict[bytes, int] = {}
        #: refusals so far, by status (for tests and metrics)
        self.refused: dict[int, int] = {429: 0, 503: 0}

    @asynccontextmanager
    async def slot(self, client: bytes, what: str) -> AsyncIterator[None]:
        """Hold a heavy-read slot for ``client`` (raises the 429/503 problem when full)."""
        mine = self._by_client.get(client, 0)
        if mine >= self.per_client:
            self.refused[429] += 1
            REFUSED.labels("429").inc()
            raise Problem(
                429,
                "rate.limited",
                f"this client already has {mine} heavy reads running ({what}); "
                f"at most {self.per_client} at once",
                quota="heavy_concurrent",
                retry_after=self.retry_after,
            ).retry(self.retry_after)
        if self.running >= self.per_process:
            self.refused[503] += 1
            REFUSED.labels("503").inc()
            raise Problem(
                503,
                "service.unavailable",
                f"too many heavy reads ({what}) running in this process; retry later",
                dependency="heavy_reads",
            ).retry(self.retry_after)
        self.running += 1
        RUNNING.inc()
        self._by_client[client] = mine + 1
        try:
            yield
        finally:
            self.running -= 1
            RUNNING.dec()
            left = self._by_client[client] - 1
            if left:
                self._by_client[client] = left
            else:
                del self._by_client[client]


class HeavyReads:
    """What the heavy-read handlers need, as one dependency (litestar resolves two dependencies
    of a handler in a task group: :mod:`service.http.services`)."""

    def __init__(self, history: History, kept: Kept, audits: AuditCache, bulkhead: Bulkhead):
        self.history = history
        self.kept = kept
        self.audits = audits
        self.bulkhead = bulkhead

    def slot(self, request: Request[Any, Any, Any], what: str) -> Any:
        """A heavy-read slot for the request's client (its address, as the quotas count it)."""
        return self.bulkhead.slot(client_of(request.scope, False, _no_token), what)


def _no_token(scope: Any, token: str) -> bool:
    return False


def not_modified(request: Request[Any, Any, Any], etag: str) -> bool:
    """Whether ``If-None-Match`` names ``etag`` (or is ``*``): answer 304."""
    sent = request.headers.get("if-none-match", "")
    return sent.strip() == "*" or etag in (t.strip().removeprefix("W/") for t in sent.split(","))


#: RFC 9110's DIGIT is ASCII only ("²".isdigit() is true, but int("²") raises)
_DIGITS = re.compile(r"[0-9]*", re.ASCII)
#: a byte position larger than any body: longer numbers are clamped to it (Python refuses to
#: turn more than 4,300 digits into an int, and would spend time on fewer)
_HUGE = 2**63


def _number(digits: str) -> int:
    """``digits`` (ASCII) as a byte position, clamped to :data:`_HUGE`."""
    digits = digits.lstrip("0") or "0"
    return _HUGE if len(digits) > 19 else min(int(digits), _HUGE)


def _range(spec: str, size: int) -> tuple[int, int] | bool | None:
    """The one byte range ``spec`` names within ``size`` bytes as (first, last); None: not a
    single ``bytes=`` range (the whole body is sent, as RFC 9110 allows); False: none of it
    lies within the body (416)."""
    unit, _, ranges = spec.partition("=")
    if unit.strip().lower() != "bytes" or "," in ranges:
        return None
    first_text, dash, last_text = ranges.strip().partition("-")
    if not dash or not _DIGITS.fullmatch(first_text) or not _DIGITS.fullmatch(last_text):
        return None
    if first_text == "":
        if last_text == "":
            return None
        suffix = _number(last_text)
        if suffix == 0 or size == 0:
            return False
        return max(0, size - suffix), size - 1
    first = _number(first_text)
    last = size - 1 if last_text == "" else min(_number(last_text), size - 1)
    if last_text != "" and _number(last_text) < first:
        return None  # syntactically invalid: ignored
    if first >= size:
        return False
    return first, last


def ranged(
    request: Request[Any, Any, Any], body: bytes, media_type: str, headers: dict[str, str]
) -> Response[bytes]:
    """``body`` whole (200), or the one byte range the request's ``Range`` names (206), or 416
    when the range lies past the end. ``If-Range`` with another ETag gets the whole body."""
    spec = request.headers.get("range")
    if spec is not None:
        condition = request.headers.get("if-range")
        if condition is None or condition.strip() == headers.get("etag"):
            chosen = _range(spec, len(body))
            if chosen is False:
                problem = Problem(
                    416,
                    "request.range_not_satisfiable",
                    f"the body has {len(body)} bytes; {spec!r} names none of them",
                )
                problem.headers["Content-Range"] = f"bytes */{len(body)}"
                raise problem
            if isinstance(chosen, tuple):
                first, last = chosen
                return Response(
                    content=body[first : last + 1],
                    status_code=206,
                    media_type=media_type,
                    headers={**headers, "content-range": f"bytes {first}-{last}/{len(body)}"},
                )
    return Response(content=body, media_type=media_type, headers=headers)
