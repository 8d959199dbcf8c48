"""A game's past: its events page by page, the view after any event, the whole game as NDJSON
(a heavy read: :mod:`service.http.bulkhead`; kept once the game is over,
:mod:`service.application.kept`), and the live stream of the caller's view (Server-Sent
Events; capped per client and per process: :mod:`service.http.streams`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Annotated, Any

import msgspec
import structlog
from litestar import Request, Response, get
from litestar.background_tasks import BackgroundTask
from litestar.di import NamedDependency
from litestar.params import FromPath, Parameter, QueryParameter
from litestar.response import ServerSentEvent, ServerSentEventMessage

from projections.store import StoreUnavailable
from service.application.errors import Unauthorized
from service.application.history import History
from service.application.kept import replay_etag
from service.application.seats import Grant
from service.http.bulkhead import HeavyReads, not_modified, ranged
from service.http.schemas import EventsPage, ReplayView
from service.http.services import language_of, token_of
from service.http.streams import LiveStreams

log = structlog.get_logger("manifest")

NDJSON = "application/x-ndjson"
#: ``lang=``: the language of the sentences (docs/api.md, "Sentences"); a BCP 47 tag
Lang = Annotated[
    str | None,
    QueryParameter(
        name="lang",
        max_length=35,
        description="The sentences' language (en, fr); default: Accept-Language, else en",
    ),
]


@get("/v1/games/{game_id:str}/events", summary="The game's events (redacted while it is live)")
async def get_events(
    game_id: FromPath[str],
    history: NamedDependency[History],
    request: Request[Any, Any, Any],
    after: int = Parameter(default=0, ge=0, le=2**31 - 1),  # versions are int4 in PostgreSQL
    limit: int = Parameter(default=100, ge=1, le=1000),
    lang: Lang = None,
) -> EventsPage:
    language = language_of(request, lang)
    return await history.events(game_id, token_of(request), after, limit, language)


@get("/v1/games/{game_id:str}/replay/{n:int}", summary="The view after event n")
async def get_replay_at(
    game_id: FromPath[str],
    n: FromPath[int],
    history: NamedDependency[History],
    request: Request[Any, Any, Any],
    lang: Lang = None,
) -> ReplayView:
    return await history.replay(game_id, token_of(request), n, language_of(request, lang))


@get(
    "/v1/games/{game_id:str}/replay",
    summary="The whole game (or a page of it) as NDJSON: every event, and a view every 100",
)
async def get_replay(
    game_id: FromPath[str],
    heavy: NamedDependency[HeavyReads],
    request: Request[Any, Any, Any],
    start: Annotated[int, QueryParameter(name="from", ge=1, le=2**31 - 1)] = 1,
    limit: int | None = Parameter(default=None, ge=1, le=2**31 - 1),
    lang: Lang = None,
) -> Response[bytes]:
    language = language_of(request, lang)
    plan = await heavy.history.replay_plan(game_id, token_of(request), language)  # 401/403/404
    etag = replay_etag(plan, start, limit)
    headers = {
        "etag": etag,
        "cache-control": "no-cache",
        "vary": "Authorization, Accept-Language",
        "accept-ranges": "bytes",
    }
    if not_modified(request, etag):  # from the game's row alone: no slot, no event read
        return Response(content=b"", status_code=304, headers=headers)
    async with heavy.slot(request, "replay"):
        body = await heavy.kept.replay(plan, start, limit)
    return ranged(request, body, NDJSON, headers)


@get("/v1/games/{game_id:str}/stream", summary="Server-Sent Events: the caller's view on change")
async def get_stream(
    game_id: FromPath[str],
    streams: NamedDependency[LiveStreams],
    request: Request[Any, Any, Any],
    lang: Lang = None,
) -> ServerSentEvent:
    history = streams.history
    token = token_of(request)
    language = language_of(request, lang)
    # the events told as sentences too, to a client that names a language (an older client
    # reading every message as a ``change`` is sent the changes alone, as before)
    telling = lang is not None or "accept-language" in request.headers
    grant = await history.seats.grant(game_id, token)  # 401/403 before streaming
    await history.documents.game_document(game_id, token)  # 404 before streaming
    slot = streams.caps.acquire(request.scope, token, grant.seat)  # 429 / 503 past a cap
    docs = history.changes(grant)  # ends once the grant no longer holds (its seat's token)
    try:
        first = await anext(docs, None)  # subscribed (Redis failing: 503) before the 200 starts
        if first is None:  # the seat was taken back between the token's check and the read
            raise Unauthorized("auth.invalid_token", "the token is not a seat token")
    except BaseException:
        slot.release()
        await docs.aclose()
        raise

    async def changes() -> AsyncGenerator[ServerSentEventMessage, None]:
        pending: asyncio.Future[bytes | None] | None = None
        told = None  # the version whose events were last told
        try:
            doc: bytes | None = first
            while doc is not None:
                version = msgspec.json.decode(doc)["version"]
                yield ServerSentEventMessage(data=doc.decode(), event="change", id=version)
                if telling and told is not None and version > told:
                    said = await _sentences(history, game_id, token, told, version, language)
                    if said is not None:
                        yield ServerSentEventMessage(data=said, event="sentences")
                told = version
                pending = asyncio.ensure_future(anext(docs, None))
                # A quiet game sends nothing for minutes: a comment every `keepalive` seconds
                # keeps proxies' idle timeouts from cutting the stream, and makes a write
                # that fails on a client that vanished, so its slot comes back.
                while not (await asyncio.wait({pending}, timeout=streams.keepalive))[0]:
                    if not await _still(history, grant):  # revoked with no change heard
                        return
                    yield ServerSentEventMessage(data=None, comment="keep-alive")
                try:
                    doc = pending.result()
                except StoreUnavailable as error:
                    # The change subscription was lost: the stream ends (an SSE client
                    # reconnects, and its first document is current).
                    log.info("live stream ended", game=game_id, reason=str(error))
                    doc = None
                except Exception as error:
                    # The document could not be re-read (PostgreSQL away, ...): the 200 has
                    # long started, so the stream ends with one line, not a traceback per
                    # stream; the client reconnects and is answered 503 until it is back.
                    reason = f"{type(error).__name__}: {error}"
                    log.warning("live stream ended", game=game_id, reason=reason)
                    doc = None
        finally:
            slot.release()
            if pending is not None and not pending.done():
                pending.cancel()  # the subscription's generator must stop before it is closed
                await asyncio.gather(pending, return_exceptions=True)
            await docs.aclose()

    events = changes()

    async def finish() -> None:
        # Run by litestar once the response is over, however it ended: a stream whose body
        # never started (the client left before it, so the generator above never ran its
        # ``finally``) gives back its slot and its subscription here — not whenever a garbage
        # collection frees the generators (until then the slot and the channel stayed taken).
        slot.release()
        await events.aclose()
        await docs.aclose()

    return ServerSentEvent(events, background=BackgroundTask(finish))


async def _sentences(
    history: History, game_id: str, token: str | None, after: int, version: int, lang: str
) -> str | None:
    """A stream's ``sentences`` message: the events after ``after`` through ``version`` told
    as the caller reads them (docs/api.md, "Sentences"); None when they cannot be read now
    (the next change tells its own)."""
    try:
        page = await history.events(game_id, token, after, min(version - after, 100), lang)
    except Exception as error:
        log.info("stream sentences skipped", game=game_id, reason=f"{type(error).__name__}")
        return None
    told = [{"version": e.version, "sentence": e.sentence} for e in page.events]
    return msgspec.json.encode({"version": version, "sentences": told}).decode()


async def _still(history: History, grant: Grant) -> bool:
    """Does a quiet stream's grant still hold? A lookup that fails (PostgreSQL away) ends
    the stream with one log line, as a failed re-read does."""
    try:
        return await history.live.still(grant)
    except Exception as error:
        reason = f"{type(error).__name__}: {error}"
        log.warning("live stream ended", game=grant.game_id, reason=reason)
        return False


ROUTES: list[Any] = [get_events, get_replay_at, get_replay, get_stream]
