"""Checking a game: the audit report (cached, with an ``ETag``), the dispute file of one event,
the export file for ``manifest verify``, and the server's public keys."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.params import FromPath

from service.application.auditcache import AuditCache
from service.application.gameplay import Manifest
from service.application.history import History
from service.audit.exportfile import encode_export
from service.audit.receipts import published_keys
from service.http.schemas import DisputeFile, Keys
from service.http.services import token_of

JSON = "application/json"


@get("/v1/games/{game_id:str}/audit", summary="Verify the chain, re-adjudicate, check the seed")
async def get_audit(
    request: Request[Any, Any, Any], game_id: FromPath[str], audits: NamedDependency[AuditCache]
) -> Response[bytes]:
    etag, fingerprint, unrecorded = await audits.state(game_id)
    headers = {"etag": etag, "cache-control": "no-cache"}
    sent = request.headers.get("if-none-match", "")
    if sent.strip() == "*" or etag in (t.strip().removeprefix("W/") for t in sent.split(",")):
        return Response(content=b"", status_code=304, headers=headers)
    body = await audits.report(game_id, fingerprint, unrecorded)
    return Response(content=body, media_type=JSON, headers=headers)


@get("/v1/games/{game_id:str}/audit/{n:int}", summary="The dispute file of event n")
async def get_dispute(
    game_id: FromPath[str],
    n: FromPath[int],
    history: NamedDependency[History],
    request: Request[Any, Any, Any],
) -> DisputeFile:
    return await history.dispute(game_id, n, token_of(request))


@get(
    "/v1/games/{game_id:str}/export",
    summary="The whole game as one file for `manifest verify` (redacted for the caller)",
)
async def get_export(
    game_id: FromPath[str], history: NamedDependency[History], request: Request[Any, Any, Any]
) -> Response[bytes]:
    exported = await history.export(game_id, token_of(request))
    # the bytes `manifest export` writes: hashes and seed in hex, as everywhere in the API
    return Response(content=encode_export(exported), media_type=JSON)


@get("/v1/keys", summary="The server's public key(s) for checking receipts")
async def keys(manifest: NamedDependency[Manifest]) -> Keys:
    return Keys(keys=await published_keys(manifest.store.pool, manifest.signer))


ROUTES: list[Any] = [get_audit, get_dispute, get_export, keys]
