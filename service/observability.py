"""Structured JSON logs and Prometheus metrics, with one small ASGI middleware that gives every
request an id, times it, and logs one line with the game, seat and command type that the
handler bound (``structlog.contextvars``)."""

from __future__ import annotations

import functools
import logging
import re
import secrets
import time
from typing import Any

import structlog
from prometheus_client import CONTENT_TYPE_LATEST, Counter, Histogram, generate_latest

REQUESTS = Counter(
    "manifest_http_requests_total", "HTTP requests answered", ["method", "route", "status"]
)
LATENCY = Histogram(
    "manifest_http_request_seconds",
    "HTTP request latency",
    ["route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
)
COMMANDS = Counter("manifest_commands_total", "Commands by outcome", ["game", "outcome"])
REFUSALS_UNSTORED = Counter(
    "manifest_refusals_unstored_total",
    "Refused commands answered but only counted, not stored: past the seat's cap (cap) or a "
    "storage budget of MANIFEST_REFUSALS_PER_CLIENT / MANIFEST_REFUSAL_BYTES (budget)",
    ["reason"],
)
HISTORY_READS = Counter(
    "manifest_history_reads_total",
    "History reads of events by where they were answered (PG_READ_DSN): replica, or the primary "
    "because the replica was behind (fallback_behind) or unreachable (fallback_error)",
    ["outcome"],
)


def configure_logging(level: str = "info") -> None:
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            getattr(logging, level.upper(), logging.INFO)
        ),
        cache_logger_on_first_use=True,
    )


_PARAM = re.compile(r"\{(\w+)(?::(\w+))?\}")


@functools.cache  # one entry per route of the app
def route_label(template: str) -> str:
    """The route label of a routed request, from litestar's path template: a game id is
    ``{id}``, a number ``{n}`` (``/v1/games/{id}/replay/{n}``). Never from the request's path,
    so a client cannot invent labels (each is a metric series kept for the process's life)."""
    return _PARAM.sub(
        lambda m: "{id}" if m[1] == "game_id" else "{n}" if m[2] == "int" else "{" + m[1] + "}",
        template,
    )


@functools.cache  # bounded: routed methods × routes × statuses
def _observers(method: str, route: str, status: int) -> tuple[Any, Any]:
    return REQUESTS.labels(method, route, str(status)), LATENCY.labels(route)


#: The variable prometheus_client reads for multiprocess mode (``Settings.metrics_dir``).
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


class _Metrics:
    #: Where every worker of ``manifest serve --workers N`` keeps its metrics (multiprocess
    #: mode: :func:`service.workers.run` makes it), or None: one process, its own registry.
    directory: str | None = None


def configure_metrics(directory: str | None) -> None:
    """Called by each worker's app with ``Settings.metrics_dir``."""
    _Metrics.directory = directory


def metrics_body() -> tuple[bytes, str]:
    """``/metrics``: this process's metrics, or — when several workers serve (multiprocess
    mode) — every worker's, summed (counters, histograms), the highest lag and the pending
    games of the live workers (gauges), so that one scrape sees the whole server."""
    if _Metrics.directory:
        from prometheus_client import CollectorRegistry, multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(  # type: ignore[no-untyped-call]
            registry, path=_Metrics.directory
        )
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(), CONTENT_TYPE_LATEST


class RequestLogMiddleware:
    """Request id (``X-Request-Id``, taken from the client if sent), latency, log, metrics.

    It wraps the whole app, outside litestar's router and its app-level exception handler
    (:func:`service.http.app.create_app` installs it as ``app.asgi_handler``), not inside a
    route's middleware: an answer sent from outside a route's stack — a problem raised by the
    quota or hardening middleware, a path no route takes, a 405 — passes through it too, so
    every answer carries ``X-Request-Id`` and the access log and the metrics record the status
    the client received. (Inside the route stack, it saw none of those answers and logged each
    as the 500 it started from: issue 35.) The status stays 500 only when no answer was sent at
    all (the server then answers 500 itself)."""

    def __init__(self, app: Any, access_log: bool = True) -> None:
        self.app = app
        self.access_log = access_log
        self.log = structlog.get_logger("manifest.http")

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = ""
        for name, value in scope.get("headers", ()):
            if name == b"x-request-id":
                request_id = value.decode("latin-1")[:64]
        request_id = request_id or secrets.token_hex(16)  # as random as uuid4, cheaper
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(request_id=request_id)
        status = 500
        started = time.perf_counter()

        async def send_with_id(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", []).append((b"x-request-id", request_id.encode()))
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            elapsed = time.perf_counter() - started
            template = scope.get("path_template")  # every routed request has one
            route = route_label(template) if template else "unrouted"
            count, latency = _observers(scope["method"], route, status)
            count.inc()
            latency.observe(elapsed)
            if self.access_log:
                self.log.info(
                    "request",
                    method=scope["method"],
                    path=scope["path"],
                    status=status,
                    latency_ms=round(elapsed * 1000, 2),
                )
            structlog.contextvars.clear_contextvars()
