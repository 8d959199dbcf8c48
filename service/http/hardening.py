"""Input hardening, in one place: what a hostile client can send never reaches a handler, the
database or a decoder that would fail with a 500.

:class:`HardeningMiddleware` runs for every routed request, before the handler:

* the query string and the path as sent: percent-decoded, UTF-8, no NUL (also for a path no
  route takes, checked before its 404: :func:`check_path`);
* a ``{game_id}`` path parameter: the game id in the one spelling the server issues, else 404
  ``game.not_found`` (:func:`~service.application.tables.check_game_id`), for every route at once
  (a guard would do it too, but litestar copies the handler for each guard call);
* the ``Idempotency-Key`` header (the one header that is stored): 1–255 visible ASCII characters;
* the body (when there is one): sent as JSON (``Content-Type: application/json`` or
  ``application/*+json``, else 415 ``request.unsupported_media_type``), UTF-8, JSON nested at
  most ``MANIFEST_MAX_JSON_DEPTH`` deep (checked on the bytes, before any decoder recurses),
  valid JSON, no NUL and no lone surrogate in any string or key; then, when the handler
  declares a body type, decoded into it *strictly* (``msgspec``'s strict mode: ``"28"``,
  ``28.0`` and ``true`` are not integers), because litestar's own conversion is lax and would
  turn ``"28"`` into ``28``.

Anything else is a 400 ``request.invalid`` problem (``request.bad_idempotency_key`` for the key).
Headers larger than ``MANIFEST_MAX_HEADER_BYTES`` in all are refused by the HTTP protocol itself
(:class:`BoundedHttpToolsProtocol`, given the bound by :func:`bounded_protocol`), before they are
buffered whole.

The names players give have their one rule in :mod:`service.application.names`
(``player_name``: NFC-normalised, trimmed, 1–64 characters, no control, format-control or
unassigned characters, at least one visible character; ``alike``: when two names are one player).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote_to_bytes

import msgspec

from service.application.errors import NotFound
from service.application.tables import check_game_id
from service.http.problemmap import problem_of
from service.problems import PROBLEM_JSON, Problem

DEFAULT_MAX_JSON_DEPTH = 32

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*+"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_SURROGATE = re.compile("[\ud800-\udfff]")
_KEY = re.compile(r"[\x21-\x7e]{1,255}")


def invalid(detail: str) -> Problem:
    return Problem(400, "request.invalid", detail)


# --- strings ---------------------------------------------------------------------------------
def check_text(value: str, where: str) -> None:
    if "\x00" in value:
        raise invalid(f"{where}: a NUL character (U+0000) is not accepted")
    if _SURROGATE.search(value):
        raise invalid(f"{where}: a lone surrogate is not a character")


def _check_strings(value: Any, where: str) -> None:
    """Every string and key in a decoded JSON value (depth already bounded)."""
    if isinstance(value, str):
        check_text(value, where)
    elif isinstance(value, dict):
        for k, v in value.items():
            check_text(k, where)
            _check_strings(v, where)
    elif isinstance(value, list):
        for v in value:
            _check_strings(v, where)


def json_depth(body: bytes, limit: int) -> int:
    """How deep arrays and objects nest in ``body`` (strings skipped); stops counting once
    past ``limit``. Works on the bytes, so no decoder recursion is involved."""
    brackets = _STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    depth = deepest = 0
    for b in brackets:
        if b in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        else:
            depth -= 1
    return deepest


def check_body(body: bytes, max_depth: int, data_type: Any = None) -> None:
    """Raise a 400 problem unless ``body`` is UTF-8 JSON within the depth limit, with no NUL or
    lone surrogate in any string, and (given ``data_type``) strictly of that type."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise invalid(f"the body is not UTF-8 (byte {error.start})") from None
    # Fewer brackets than the limit cannot nest past it (the usual body: no scan needed).
    if body.count(b"[") + body.count(b"{") > max_depth and json_depth(body, max_depth) > max_depth:
        raise invalid(f"the body nests deeper than {max_depth} levels")
    try:
        value = msgspec.json.decode(body)
    except (msgspec.DecodeError, UnicodeDecodeError) as error:
        raise invalid(f"the body is not valid JSON: {error}") from None
    if b"\\u" in body:  # JSON refuses raw control characters and UTF-8 has no surrogates:
        _check_strings(value, "body")  # a NUL or a lone surrogate can only be a \u escape
    if data_type is not None:
        try:
            msgspec.convert(value, data_type, strict=True)
        except msgspec.ValidationError as error:
            raise invalid(f"body: {error}") from None


def check_query(query_string: bytes) -> None:
    for part in query_string.split(b"&"):
        for piece in part.split(b"=", 1):
            raw = unquote_to_bytes(piece.replace(b"+", b" "))
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise invalid("the query string is not UTF-8") from None
            check_text(text, "query")


def check_path(scope: Any) -> None:
    """The path as sent (``raw_path``), percent-decoded, is UTF-8 with no NUL. The server's
    decoded ``path`` cannot tell: it turns a byte that is not UTF-8 into U+FFFD."""
    raw = scope.get("raw_path")
    if raw is None:
        check_text(scope["path"], "path")
        return
    try:
        text = unquote_to_bytes(bytes(raw)).decode("utf-8")
    except UnicodeDecodeError:
        raise invalid("the path is not UTF-8") from None
    check_text(text, "path")


def check_json_content_type(values: list[bytes]) -> None:
    """A body is read as JSON only when its ``Content-Type`` says so: ``application/json`` or
    ``application/<anything>+json``, parameters allowed but a ``charset`` only if UTF-8 (JSON's
    one encoding, RFC 8259). Else 415 ``request.unsupported_media_type``: a body labelled
    ``text/plain`` (or unlabelled) is what a cross-site HTML form can send without a CORS
    preflight, so it is not taken for JSON."""
    if len(values) == 1:
        media, *params = values[0].decode("latin-1").split(";")
        kind, _, sub = media.strip().lower().partition("/")
        charsets = [
            value.strip().strip('"').lower()
            for name, sep, value in (p.partition("=") for p in params)
            if sep and name.strip().lower() == "charset"
        ]
        if (
            kind == "application"
            and (sub == "json" or (sub.endswith("+json") and len(sub) > 5))
            and all(c in ("utf-8", "utf8") for c in charsets)
        ):
            return
    got = "none" if not values else ", ".join(v.decode("latin-1")[:100] for v in values)
    raise Problem(
        415,
        "request.unsupported_media_type",
        f"a body must be sent as Content-Type: application/json (UTF-8), not {got}",
    )


def check_idempotency_key(value: bytes) -> None:
    try:
        text = value.decode("ascii")
    except UnicodeDecodeError:
        text = ""
    if not _KEY.fullmatch(text):
        raise Problem(
            400,
            "request.bad_idempotency_key",
            "an Idempotency-Key is 1 to 255 visible ASCII characters",
        )


# --- the middleware --------------------------------------------------------------------------
class HardeningMiddleware:
    """ASGI middleware inside litestar's route stack (so ``scope["route_handler"]`` is known
    and a raised :class:`Problem` becomes a problem document). It reads the body through
    litestar's ``Request``, which caches it for the handler."""

    def __init__(self, app: Any, max_json_depth: int = DEFAULT_MAX_JSON_DEPTH) -> None:
        self.app = app
        self.max_json_depth = max_json_depth
        self._types: dict[int, Any] = {}

    def _data_type(self, handler: Any) -> Any:
        key = id(handler)
        if key not in self._types:
            parameter = handler.parsed_fn_signature.parameters.get("data")
            self._types[key] = None if parameter is None else parameter.annotation
        return self._types[key]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await self._check(scope, receive)
        await self.app(scope, receive, send)

    async def _check(self, scope: Any, receive: Any) -> None:
        from litestar import Request

        check_path(scope)
        game_id = scope.get("path_params", {}).get("game_id")
        if game_id is not None:  # every route with {game_id}: a new route cannot forget it
            try:
                check_game_id(game_id)
            except NotFound as error:
                raise problem_of(error) from None
        if scope.get("query_string"):
            check_query(scope["query_string"])
        content_types: list[bytes] = []
        for name, value in scope["headers"]:
            if name == b"idempotency-key":
                check_idempotency_key(value)
            elif name == b"content-type":
                content_types.append(value)
        if scope["method"] in ("POST", "PUT", "PATCH", "DELETE"):
            body = await Request(scope, receive).body()
            if body:
                check_json_content_type(content_types)
                handler = scope.get("route_handler")
                data_type = None if handler is None else self._data_type(handler)
                check_body(body, self.max_json_depth, data_type)


# --- headers, bounded in the HTTP protocol ---------------------------------------------------
def _protocol_base() -> Any:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    return HttpToolsProtocol


class _TooLarge(Exception):
    pass


def bounded_protocol(max_header_bytes: int) -> Callable[..., Any]:
    """What uvicorn's ``http`` option takes to build each connection's protocol: the bounded
    protocol below with ``MANIFEST_MAX_HEADER_BYTES`` given as a value (``Settings``, read once
    by the CLI at start; a ``partial``, so it travels to spawned workers by pickling)."""
    return functools.partial(BoundedHttpToolsProtocol, max_header_bytes=max_header_bytes)


class BoundedHttpToolsProtocol(_protocol_base()):  # type: ignore[misc]
    """uvicorn's httptools protocol with a bound on the request line and headers together
    (``MANIFEST_MAX_HEADER_BYTES``): past it the connection is answered 400 ``request.invalid``
    and closed, without buffering the rest. (httptools itself has no such bound; uvicorn's h11
    protocol has one, but costs more CPU per request.) The bound is given by the caller
    (:func:`bounded_protocol`): nothing here reads the configuration."""

    def __init__(self, *args: Any, max_header_bytes: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limit = max_header_bytes

    def on_message_begin(self) -> None:
        self._header_bytes = 0
        super().on_message_begin()

    def _count(self, n: int) -> None:
        self._header_bytes = getattr(self, "_header_bytes", 0) + n
        if self._header_bytes > self.limit:
            raise _TooLarge

    def on_url(self, url: bytes) -> None:
        self._count(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count(len(name) + len(value) + 4)
        super().on_header(name, value)

    def data_received(self, data: bytes) -> None:
        try:
            super().data_received(data)
        except _TooLarge:
            self._refuse()

    def send_400_response(self, msg: str) -> None:
        if getattr(self, "_header_bytes", 0) > self.limit:
            self._refuse()
        else:
            super().send_400_response(msg)

    def _refuse(self) -> None:
        body = invalid(f"the request line and headers exceed {self.limit} bytes").body()
        head = (
            f"HTTP/1.1 400 Bad Request\r\ncontent-type: {PROBLEM_JSON}\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
        ).encode()
        if not self.transport.is_closing():
            self.transport.write(head + body)
            self.transport.close()
