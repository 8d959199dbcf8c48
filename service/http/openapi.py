"""The OpenAPI document, made to tell the truth (``/schema/openapi.json``).

litestar derives paths, parameters, request bodies and the answers of the handlers that return
Structs (:mod:`service.http.schemas`) from the handlers' types. The schemas of those Structs
(the document's components) are then replaced by msgspec's own reading of the same types —
the encoder that writes the answers — which keeps what litestar's leaves out (constraints,
``additionalProperties``, the declared schema of pre-encoded parts such as a command answer's
``legal``).

A few answers are not built from a Struct but sent as bytes, for speed: the game and legal
documents (stored encoded in the projections, served as they are), the audit report (cached
encoded), the export file (the bytes ``manifest export`` writes, hashes in hex), a game's
asset files, and the non-JSON answers (SVG, NDJSON, Server-Sent Events). For those alone the
table :data:`OPERATIONS` names the schema (a Struct of :mod:`service.http.schemas` where there
is one). For every route the table also gives every status its handler can answer (those its
middleware can answer, :func:`middleware_statuses`, are added to each) with the problem
schema (``application/problem+json``), ``Retry-After`` on 429 and 503, the bearer security
scheme (required, optional or none), and the ``Idempotency-Key`` header of commands. A test
checks that every route in the application is in the table, and Schemathesis checks the server
against the result.
"""

from __future__ import annotations

from typing import Any

import msgspec

from service.application.bodies import CommandBody, CreateGame, JoinGame, MessageBody
from service.application.clocks import PresenceBody
from service.application.players import NewKey, NewPlayer
from service.application.queries import QueryBody
from service.http import gameschemas, schemas
from service.http.nulfree import _JSON_VALUE, _JSON_VALUE_SCHEMA, INTEGER_POLICY, nul_free
from service.problems import PROBLEM_JSON

JSON = "application/json"
SVG = "image/svg+xml"
REF = "#/components/schemas/{name}"

_REASONS = {
    206: "The byte range the Range header names (Content-Range says which)",
    304: "Not modified: the ETag sent in If-None-Match is current",
    400: "The request is malformed: bad bytes, JSON, types, names or parameters",
    401: "A token is missing, malformed (not Authorization: Bearer <token>) or not a token of "
    "this server",
    403: "The token is valid but not for this game, seat or role",
    404: "No such game, event or endpoint",
    406: "This game has no board picture (code picture.unavailable)",
    409: "The game's state forbids it now (stale expected_version, started, full, taken)",
    413: "The body is larger than MANIFEST_MAX_BODY",
    415: "A body not sent as Content-Type: application/json (or application/*+json), UTF-8 "
    "(code request.unsupported_media_type)",
    416: "The Range header names no byte of the body (code request.range_not_satisfiable)",
    422: "The rules (or the lobby's) forbid it; the detail says why",
    429: "Past this client's quota, or its heavy reads running at once: retry after "
    "Retry-After seconds",
    503: "A dependency (PostgreSQL, Redis) is down, stalled or full, this game has too many "
    "writers waiting, or it kept changing while the command was decided: retry after "
    "Retry-After seconds (code service.unavailable). A command answered 503 may have been "
    "recorded: resend it with the same Idempotency-Key to learn its outcome",
}

_COMMON = (400, 429, 503)
_TOKEN = (401, 403, 404)
#: the methods whose body the hardening reads (and litestar bounds): 413 and 415 for each
_BODIED = frozenset({"post", "put", "patch", "delete"})


def middleware_statuses(method: str, path: str) -> set[int]:
    """What the middleware may answer an operation before its handler runs, whatever the
    handler does (:mod:`service.http.hardening`, :mod:`service.http.limits`): 400 (path,
    query, headers), 429 (a quota), 503 (a dependency down); 404 for a game id in another
    spelling; 413 (past ``MANIFEST_MAX_BODY``) and 415 (a body not JSON) where a body is read,
    whatever the operation declares."""
    statuses = set(_COMMON)
    if "{game_id}" in path:
        statuses.add(404)
    if method in _BODIED:
        statuses |= {413, 415}
    return statuses


#: (method, path) -> (success status, media type, schema type of an answer sent as bytes or None
#:                    (JSON: the handler's return type; otherwise a string),
#:                    security: "required" | "optional" | None, the statuses its handler
#:                    answers beyond :func:`middleware_statuses`, which every operation lists)
_PRESENCE = (*_TOKEN, 409)  # 409: no clock, or the game not being played
OPERATIONS: dict[tuple[str, str], tuple[int, str, Any, str | None, tuple[int, ...]]] = {
    ("get", "/v1/rules"): (200, JSON, None, None, ()),
    ("post", "/v1/games"): (201, JSON, None, None, (422,)),
    ("get", "/v1/games"): (200, JSON, None, None, ()),
    ("post", "/v1/games/{game_id}/join"): (200, JSON, None, None, (403, 404, 409, 422)),
    ("post", "/v1/games/{game_id}/start"): (200, JSON, None, "required", (*_TOKEN, 409)),
    ("get", "/v1/games/{game_id}"): (200, JSON, schemas.GameDocument, "optional", _TOKEN),
    ("get", "/v1/games/{game_id}/legal"): (200, JSON, schemas.LegalDocument, "required", _TOKEN),
    ("post", "/v1/games/{game_id}/commands"): (200, JSON, None, "required", (*_TOKEN, 409, 422)),
    ("post", "/v1/games/{game_id}/messages"): (200, JSON, None, "required", (*_TOKEN, 422)),
    ("post", "/v1/games/{game_id}/presence"): (200, JSON, None, "required", _PRESENCE),
    ("get", "/v1/games/{game_id}/events"): (200, JSON, None, "optional", _TOKEN),
    ("get", "/v1/games/{game_id}/replay/{n}"): (200, JSON, None, "optional", _TOKEN),
    ("get", "/v1/games/{game_id}/replay"): (
        200,
        "application/x-ndjson",
        None,
        "optional",
        (*_TOKEN, 206, 304, 416),
    ),
    ("get", "/v1/games/{game_id}/audit"): (200, JSON, schemas.AuditReport, None, (304, 404)),
    ("get", "/v1/games/{game_id}/audit/{n}"): (200, JSON, None, "optional", _TOKEN),
    ("get", "/v1/games/{game_id}/export"): (200, JSON, dict[str, Any], "optional", (*_TOKEN, 304)),
    ("post", "/v1/games/{game_id}/queries"): (200, JSON, None, "optional", (*_TOKEN, 409, 422)),
    ("delete", "/v1/games/{game_id}/seats/{seat}"): (
        200,
        JSON,
        None,
        "required",
        (*_TOKEN, 409, 422),
    ),
    ("get", "/v1/games/{game_id}/stream"): (200, "text/event-stream", None, "optional", _TOKEN),
    ("get", "/v1/keys"): (200, JSON, None, None, ()),
    ("post", "/v1/players"): (201, JSON, None, None, ()),
    ("post", "/v1/me/keys"): (201, JSON, None, "required", (401, 403, 409, 422)),
    ("get", "/v1/me/keys"): (200, JSON, None, "required", (401, 403)),
    ("delete", "/v1/me/keys/{key_id}"): (200, JSON, None, "required", (401, 403, 404)),
    ("get", "/v1/me/games"): (200, JSON, None, "required", (401, 403)),
    ("get", "/v1/rules/{game}/assets/{name}"): (200, JSON, dict[str, Any], None, (304, 404)),
    # 422: ``load`` names no load of the game (picture.unknown_load)
    ("get", "/v1/games/{game_id}/board.svg"): (200, SVG, None, "optional", (*_TOKEN, 406, 422)),
    ("get", "/v1/games/{game_id}/replay/{n}/board.svg"): (
        200,
        SVG,
        None,
        "optional",
        (*_TOKEN, 406, 422),
    ),
}

_IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "Sent again (same seat, same body), the first answer is repeated and "
    "nothing is appended. 1 to 255 visible ASCII characters.",
    "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"},
}
_RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds until the quota allows another request",
        "schema": {"type": "integer", "minimum": 1},
        "required": True,
    }
}
_RETRY_AFTER_503 = {
    "Retry-After": {
        "description": "Seconds after which the request may succeed",
        "schema": {"type": "integer", "minimum": 1},
        "required": True,
    }
}
_REQUEST_ID = {
    "X-Request-Id": {
        "description": "The request's id, as the access log records it: the client's own "
        "(its first 64 characters) if it sent one, else a new one",
        "schema": {"type": "string"},
        "required": True,
    }
}
_ETAG = {
    "ETag": {
        "description": "The answer's entity tag (for If-None-Match): of the audit and the "
        "export, a fingerprint of the game's stored rows they were computed from; of the "
        "replay, of the game's version and head, the caller and the page",
        "schema": {"type": "string"},
        "required": True,
    }
}


#: One Server-Sent Event of ``/stream``: ``event: change``, the version as its ``id``, the
#: caller's game document as its data.
_SSE_EVENT: dict[str, Any] = {
    "type": "object",
    "required": ["event", "data"],
    "properties": {
        "event": {"const": "change"},
        "id": {"type": "string", "pattern": "^[0-9]+$"},
        "data": {
            "type": "string",
            "contentMediaType": JSON,
            "contentSchema": {"$ref": "#/components/schemas/GameDocument"},
        },
    },
}


#: What a ``next`` cursor of ``GET /v1/games`` looks like (the last row's time and id).
_CURSOR = (
    r"^20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])T([01][0-9]|2[0-3]):[0-5][0-9]:"
    r"[0-5][0-9]\.[0-9]{6}Z~[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
)
#: "my games"' cursor (``service.application.players``): to act or not, a deadline (or the
#: farthest time: none), a game id
_MY_CURSOR = r"^[01]~(9999-12-31T23:59:59\.999999Z|" + _CURSOR[1:-1] + "$"
_MY_CURSOR = _MY_CURSOR.replace("Z~[0-9a-f]{8}", "Z)~[0-9a-f]{8}", 1)


_LOCATION = {
    "Location": {
        "description": "The created game's path (`/v1/games/{id}`)",
        "schema": {"type": "string"},
        "required": True,
    }
}

_ETAGGED = {
    ("get", "/v1/games/{game_id}/audit"),
    ("get", "/v1/rules/{game}/assets/{name}"),
    ("get", "/v1/games/{game_id}/replay"),
    ("get", "/v1/games/{game_id}/export"),
}
_CONTENT_RANGE = {
    "Content-Range": {
        "description": "bytes FIRST-LAST/SIZE (on 206), bytes */SIZE (on 416)",
        "schema": {"type": "string"},
        "required": True,
    }
}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def complete(doc: dict[str, Any]) -> dict[str, Any]:
    """Complete litestar's OpenAPI document (a dict, changed in place and returned)."""
    types = [t for (_, _, t, _, _) in OPERATIONS.values() if t is not None]
    _, components = msgspec.json.schema_components([*schemas.ANSWERS, *types], ref_template=REF)
    for component in components.values():  # docstrings as one line of text
        if "description" in component:
            component["description"] = " ".join(component["description"].split())
    all_components = doc.setdefault("components", {})
    all_components.setdefault("schemas", {}).update(components)
    # Request bodies as msgspec decodes them (strictly: service.http.hardening): constraints and
    # ``additionalProperties: false`` included, which litestar's own schemas leave out.
    _, bodies = msgspec.json.schema_components(
        [
            CreateGame,
            JoinGame,
            CommandBody,
            MessageBody,
            QueryBody,
            PresenceBody,
            NewPlayer,
            NewKey,
        ],
        ref_template=REF,
    )
    all_components["schemas"].update(bodies)
    # each game's typed values, and the envelopes as unions of a variant per game
    gameschemas.install(all_components["schemas"])
    # the hardening's no-NUL rule, said in the schema of everything a request may hold
    for name in _reachable(all_components["schemas"], list(bodies)):
        nul_free(all_components["schemas"][name])
    if _uses(all_components["schemas"], _JSON_VALUE):
        all_components["schemas"][_JSON_VALUE] = _JSON_VALUE_SCHEMA
    info = doc.setdefault("info", {})
    info["description"] = (info.get("description", "") + " " + INTEGER_POLICY).strip()
    info["x-integer-policy"] = "no-fraction"
    all_components["securitySchemes"] = {
        "bearer": {
            "type": "http",
            "scheme": "bearer",
            "description": "A seat token (acts for one seat of one game) or a host token "
            "(administers one game), as returned when the game was created or joined; or a "
            "player key (mfp_…: acts for its player's seats, within its scopes).",
        }
    }
    problem = {PROBLEM_JSON: {"schema": _ref("ProblemDocument")}}
    for (method, path), (status, media, shape, security, extra) in OPERATIONS.items():
        operation = doc["paths"][path][method]
        if media == "text/event-stream":
            body_schema: dict[str, Any] = _SSE_EVENT
        elif shape is not None:
            body_schema = msgspec.json.schema_components([shape], ref_template=REF)[0][0]
        elif media == JSON:
            body_schema = _from_handler(operation, status, method, path)
        elif media == "application/x-ndjson":
            body_schema = {
                "type": "string",
                "description": "One JSON document a line, each a `ReplayLine` (of the game the "
                "path names: `<Game>.ReplayLine`)",
            }
        else:
            body_schema = {"type": "string"}
        responses: dict[str, Any] = {
            str(status): {
                "description": operation.get("summary") or "OK",
                "content": {media: {"schema": body_schema}},
            }
        }
        if (method, path) in _ETAGGED:
            responses[str(status)]["headers"] = _ETAG
        elif (method, path) == ("post", "/v1/games"):
            responses[str(status)]["headers"] = _LOCATION
        for code in sorted(middleware_statuses(method, path) | set(extra)):
            answer: dict[str, Any] = {"description": _REASONS[code]}
            if code == 304:
                answer["headers"] = _ETAG
            elif code == 206:
                answer["content"] = {media: {"schema": body_schema}}
                answer["headers"] = {**_ETAG, **_CONTENT_RANGE}
            elif code == 416:
                answer["content"] = problem
                answer["headers"] = _CONTENT_RANGE
            else:
                answer["content"] = problem
            if code == 429:
                answer["headers"] = _RETRY_AFTER
            elif code == 503:
                answer["headers"] = _RETRY_AFTER_503
            responses[str(code)] = answer
        for answer in responses.values():  # every answer, errors too (RequestLogMiddleware)
            answer["headers"] = {**answer.get("headers", {}), **_REQUEST_ID}
        operation["responses"] = responses
        if security == "required":
            operation["security"] = [{"bearer": []}]
        elif security == "optional":
            operation["security"] = [{}, {"bearer": []}]
        else:
            operation["security"] = []
        if (method, path) in (("get", "/v1/games"), ("get", "/v1/me/games")):
            for param in operation.get("parameters", []):
                if param["name"] == "status":
                    param["schema"] = {"enum": ["open", "active", "finished"]}
                elif param["name"] == "cursor":
                    pattern = _CURSOR if path == "/v1/games" else _MY_CURSOR
                    param["schema"] = {"type": "string", "pattern": pattern}
                    param["description"] = "The `next` of the page before (opaque)"
        if path.endswith("/commands"):
            params = [p for p in operation.get("parameters", []) if p.get("in") != "header"]
            operation["parameters"] = [*params, _IDEMPOTENCY_KEY]
        for param in operation.get("parameters", []):
            nul_free(param.get("schema"))
    return doc


def _refs(schema: Any) -> set[str]:
    if isinstance(schema, dict):
        found = {schema["$ref"].rsplit("/", 1)[1]} if "$ref" in schema else set()
        return found.union(*(_refs(v) for v in schema.values()))
    if isinstance(schema, list):
        return set().union(*(_refs(v) for v in schema))
    return set()


def _reachable(components: dict[str, Any], roots: list[str]) -> list[str]:
    """``roots`` and every component their schemas refer to, directly or not."""
    seen: list[str] = []
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen or name not in components:
            continue
        seen.append(name)
        todo += sorted(_refs(components[name]))
    return seen


def _uses(components: dict[str, Any], name: str) -> bool:
    return any(name in _refs(schema) for schema in components.values())


def _from_handler(operation: dict[str, Any], status: int, method: str, path: str) -> Any:
    """The answer's schema litestar derived from the handler's return type (a Struct)."""
    try:
        return operation["responses"][str(status)]["content"][JSON]["schema"]
    except KeyError:
        raise RuntimeError(
            f"{method.upper()} {path} answers bytes: name its schema in OPERATIONS"
        ) from None


def install(app: Any) -> None:
    """Complete the application's OpenAPI document once, where litestar caches it (the
    dict that ``/schema/openapi.json`` serves)."""
    from litestar._openapi.plugin import OpenAPIPlugin

    complete(app.plugins.get(OpenAPIPlugin).provide_openapi_schema())
