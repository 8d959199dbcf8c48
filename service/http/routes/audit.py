"""Checking a game: the audit report (cached, with an ``ETag``), the dispute file of one event,
the export file for ``manifest verify`` (with an ``ETag``; kept once the game is over), and the
server's public keys. All but the keys are heavy reads (:mod:`service.http.bulkhead`)."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.params import FromPath

from service.application.gameplay import Manifest
from service.eventstore.keys import published_keys
from service.http.bulkhead import HeavyReads, not_modified
from service.http.schemas import DisputeFile, Keys
from service.http.services import token_of

JSON = "application/json"


@get("/v1/games/{game_id:str}/audit", summary="Verify the chain, re-adjudicate, check the seed")
async def get_audit(
    request: Request[Any, Any, Any], game_id: FromPath[str], heavy: NamedDependency[HeavyReads]
) -> Response[bytes]:
    audits = heavy.audits
    async with heavy.slot(request, "audit"):  # the fingerprint reads every row of the game
        etag, fingerprint, unrecorded = await audits.state(game_id)
        headers = {"etag": etag, "cache-control": "no-cache"}
        if not_modified(request, etag):
            return Response(content=b"", status_code=304, headers=headers)
        body = await audits.report(game_id, fingerprint, unrecorded)
    return Response(content=body, media_type=JSON, headers=headers)


@get("/v1/games/{game_id:str}/audit/{n:int}", summary="The dispute file of event n")
async def get_dispute(
    game_id: FromPath[str],
    n: FromPath[int],
    heavy: NamedDependency[HeavyReads],
    request: Request[Any, Any, Any],
) -> DisputeFile:
    async with heavy.slot(request, "dispute file"):
        return await heavy.history.dispute(game_id, n, token_of(request))


@get(
    "/v1/games/{game_id:str}/export",
    summary="The whole game as one file for `manifest verify` (redacted for the caller)",
)
async def get_export(
    game_id: FromPath[str], heavy: NamedDependency[HeavyReads], request: Request[Any, Any, Any]
) -> Response[bytes]:
    token = token_of(request)
    async with heavy.slot(request, "export"):  # the fingerprint reads every row of the game
        klass, etag, fingerprint = await heavy.kept.export_tag(game_id, token)
        headers = {"etag": etag, "cache-control": "no-cache", "vary": "Authorization"}
        if not_modified(request, etag):
            return Response(content=b"", status_code=304, headers=headers)
        # the bytes `manifest export` writes: hashes and seed in hex, as everywhere in the API
        body, tagged = await heavy.kept.export(game_id, token, klass, fingerprint)
    if not tagged:  # the rows moved while it was computed: these bytes are of no one state
        headers = {"cache-control": "no-cache", "vary": "Authorization"}
    return Response(content=body, media_type=JSON, headers=headers)


@get("/v1/keys", summary="The server's public key(s) for checking receipts")
async def keys(manifest: NamedDependency[Manifest]) -> Keys:
    return Keys(keys=await published_keys(manifest.store, manifest.signer))


ROUTES: list[Any] = [get_audit, get_dispute, get_export, keys]
