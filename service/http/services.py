"""The application objects the handlers work with, handed to them by litestar's dependency
injection: a handler names ``manifest``, ``history``, ``audits``, ``streams`` (the history and
the caps on open live streams), ``heavy`` (the bulkheaded heavy reads) or ``settings`` as a
parameter and gets it (:meth:`Services.dependencies`, installed on the app by
:func:`service.http.app.create_app`).
The caller's token is read from the request by :func:`token_of`: not a dependency, because
litestar resolves two dependencies of one handler in an anyio task group (a task per
dependency per request: ~8% of a worker's CPU under load, py-spy), and a handler needs one
service besides.

The objects are built by the app's lifespan, once PostgreSQL and Redis answer, and put here
(:meth:`Services.start`); nothing reads them from ``app.state``."""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.di import Provide

from domain.kernel.messages import negotiate
from service.application.auditcache import AuditCache
from service.application.gameplay import Manifest
from service.application.history import History
from service.application.kept import Kept
from service.application.tokens import token_of_header
from service.http.bulkhead import Bulkhead, HeavyReads
from service.http.streams import LiveStreams, StreamCaps
from service.settings import Settings


class NotStarted(RuntimeError):
    """A handler ran before the lifespan built the application (or after it stopped)."""


def token_of(request: Request[Any, Any, Any]) -> str | None:
    """The bearer token of the request's ``Authorization`` header (None: no header; not
    ``Bearer <token>``: 401 ``auth.malformed``, :func:`token_of_header`)."""
    return token_of_header(request.headers.get("authorization"))


def language_of(request: Request[Any, Any, Any], asked: str | None) -> str:
    """The language a request's sentences are told in: ``lang=`` (``asked``), else its
    ``Accept-Language``, else English (docs/api.md, "Sentences")."""
    return negotiate(asked, request.headers.get("accept-language"))


class Services:
    """One application's objects: empty until the lifespan :meth:`start`\\ s it."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._manifest: Manifest | None = None
        self._history: History | None = None
        self._audits: AuditCache | None = None
        self._streams: LiveStreams | None = None
        self.stream_caps = StreamCaps(
            settings.streams_per_client,
            settings.streams_per_process,
            settings.streams_seat_reserve,
            settings.retry_after,
            settings.streams_seats_per_address,
        )
        self._heavy: HeavyReads | None = None

    def start(self, manifest: Manifest) -> None:
        self._manifest = manifest
        self._history = History.of(manifest)
        self._audits = AuditCache(
            self._history, self.settings.audit_cache, self.settings.rejected_cap
        )
        self._streams = LiveStreams(self._history, self.stream_caps, self.settings.stream_keepalive)
        bulkhead = Bulkhead(
            self.settings.heavy_per_client,
            self.settings.heavy_per_process,
            self.settings.retry_after,
        )
        self._heavy = HeavyReads(self._history, Kept(self._history), self._audits, bulkhead)

    @property
    def started(self) -> Manifest | None:
        """The Manifest once started (None before: for hooks that run either way)."""
        return self._manifest

    def manifest(self) -> Manifest:
        if self._manifest is None:
            raise NotStarted("the application has not started")
        return self._manifest

    def history(self) -> History:
        if self._history is None:
            raise NotStarted("the application has not started")
        return self._history

    def audits(self) -> AuditCache:
        if self._audits is None:
            raise NotStarted("the application has not started")
        return self._audits

    def streams(self) -> LiveStreams:
        if self._streams is None:
            raise NotStarted("the application has not started")
        return self._streams

    def heavy(self) -> HeavyReads:
        if self._heavy is None:
            raise NotStarted("the application has not started")
        return self._heavy

    def current_settings(self) -> Settings:
        return self.settings

    def dependencies(self) -> dict[str, Provide]:
        """The app's dependency map: parameter name → provider."""
        return {
            "manifest": Provide(self.manifest, sync_to_thread=False),
            "history": Provide(self.history, sync_to_thread=False),
            "audits": Provide(self.audits, sync_to_thread=False),
            "streams": Provide(self.streams, sync_to_thread=False),
            "heavy": Provide(self.heavy, sync_to_thread=False),
            "settings": Provide(self.current_settings, sync_to_thread=False),
        }
