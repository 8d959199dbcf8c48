"""Per-client quotas: token buckets answering 429 ``rate.limited`` with ``Retry-After``.

Each quota is *N requests per minute*: a bucket of N tokens per client, refilled at N/60 per
second, so a client may burst up to N and then goes at the steady rate. Kinds and who counts as
the client (decided where the API text is silent, and documented in ``docs/api.md``; the kinds
counted by token also have a ceiling per address, below):

| kind | requests | client |
|---|---|---|
| ``create`` | ``POST /v1/games``, ``/v1/players``, ``/v1/me/keys`` | the client address |
| ``commands`` | ``POST /v1/games/{id}/commands`` | the bearer token, else the address |
| ``messages`` | ``POST /v1/games/{id}/messages``, ``/presence`` | the token, else the address |
| ``queries`` | ``POST /v1/games/{id}/queries`` | the bearer token, else the address |
| ``audit`` | ``GET /v1/games/{id}/audit``, ``/audit/{n}`` and ``/export`` | the client address |
| ``streams`` | ``GET /v1/games/{id}/stream`` opened | the bearer token, else the address |
| ``heavy`` | ``GET /v1/games/{id}/replay`` (the whole game, or a page of it) | the address |
| ``reads`` | every other request (not ``/healthz``, ``/readyz``, ``/metrics``) | the address |

Tokens key only the kinds whose handlers refuse a forged token (401), and only tokens this process
already knows to be valid (issued here, or looked up once, for a game that has started: tokens
of an open game are not cached, the host may still remove the seat): a made-up token counts
against its sender's address, so inventing tokens is no way around a quota. The address is the
socket's peer, or — only when that peer is a proxy named in ``MANIFEST_TRUSTED_PROXIES`` — the
address its ``X-Forwarded-For`` names (uvicorn's proxy headers, configured by ``manifest serve``).

Seat tokens are not scarce — creating a game hands its creator a token per seat — so a quota
per token alone bounds nothing: one address made games and sent 240 of 240 messages in 6 s
against 60 per minute (issue 35). So every kind counted by token also has a **ceiling per
address** (``per_address``; ``MANIFEST_QUOTA_<KIND>_PER_ADDRESS``, ``0``: none), a bucket of its
own that every request of the kind from the address takes from, whatever token it carries. A
request passes when both its token's bucket and its address's ceiling have a token, and then
takes one from each (a refused request spends neither). As the open streams' caps
(``MANIFEST_STREAMS_SEATS_PER_ADDRESS``), the ceiling is a few tokens' worth, so a household or
a LAN party sharing an address is not refused at the rate one seat plays.

Counters live in each process's memory (at most :data:`MAX_CLIENTS` buckets, least recently used
dropped): with several workers or instances a client's effective quota is up to that many times
N. That is the documented trade: no shared store on every request, and nothing to fail open.
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import math
import time
from collections.abc import Callable
from typing import Any

from infra.lru import LRU
from service.application.tokens import bearer
from service.problems import PROBLEM_JSON, Problem

MAX_CLIENTS = 100_000

#: handler function name -> quota kind (everything else: "reads")
_KINDS = {
    "create_game": "create",
    "create_player": "create",  # players and keys: under the creation quota (per address)
    "create_key": "create",
    "post_command": "commands",
    "post_message": "messages",
    "post_presence": "messages",  # appends like table talk (docs/api.md, "Clocks")
    "post_query": "queries",
    "get_audit": "audit",
    "get_dispute": "audit",
    "get_export": "audit",
    "get_stream": "streams",  # opens; open streams are capped apart (service/http/streams.py)
    "get_replay": "heavy",
}
_UNLIMITED = frozenset({"healthz", "readyz", "metrics"})
_BY_TOKEN = frozenset({"commands", "messages", "queries", "streams"})


class Quotas:
    """Token buckets per (kind, client), and per (kind, address) for the ceilings;
    ``per_minute[kind] == 0`` (``per_address[kind] == 0``) means no quota (no ceiling)."""

    def __init__(
        self,
        per_minute: dict[str, int],
        clock: Callable[[], float] = time.monotonic,
        max_clients: int = MAX_CLIENTS,
        per_address: dict[str, int] | None = None,
    ) -> None:
        self.per_minute = per_minute
        self.per_address = per_address or {}
        self.clock = clock
        self._buckets: LRU[tuple[str, bytes], tuple[float, float]] = LRU(max_clients)

    def limits(self, kind: str) -> bool:
        """Is ``kind`` bounded at all (a quota or a ceiling)?"""
        return self.per_minute.get(kind, 0) > 0 or self.per_address.get(kind, 0) > 0

    def take(self, kind: str, client: bytes, address: bytes | None = None) -> float | None:
        """Spend one token of ``client``'s bucket and, given the ``address``, one of the
        address's ceiling of ``kind`` — both or neither; None if allowed, else the seconds
        until both have one."""
        now = self.clock()
        wants = [(self.per_minute.get(kind, 0), (kind, client))]
        if address is not None:
            wants.append((self.per_address.get(kind, 0), (kind + "@address", address)))
        filled: list[tuple[tuple[str, bytes], float]] = []
        wait = 0.0
        for n, key in wants:
            if n <= 0:
                continue
            rate = n / 60.0
            tokens, stamp = self._buckets.get(key) or (float(n), now)
            tokens = min(float(n), tokens + (now - stamp) * rate)
            filled.append((key, tokens))
            if tokens < 1.0:
                wait = max(wait, (1.0 - tokens) / rate)
        for key, tokens in filled:
            self._buckets.put(key, (tokens if wait else tokens - 1.0, now))
        return wait or None


def address_of(scope: Any) -> bytes:
    """The client address a request counts against (see the module docstring)."""
    client = scope.get("client")
    return b"a:" + (address_key(str(client[0])).encode() if client else b"?")


def client_of(scope: Any, by_token: bool, known: Callable[[Any, str], bool]) -> bytes:
    """The client a request counts against: its bearer token if ``by_token`` and the token is
    one this process knows to be valid (``known``), else its address — so made-up tokens all
    share their sender's address quota."""
    if by_token:
        for name, value in scope["headers"]:
            if name == b"authorization":
                token = bearer(value.decode("latin-1"))
                if token is not None and known(scope, token):
                    return b"t:" + hashlib.blake2b(token.encode(), digest_size=16).digest()
    return address_of(scope)


@functools.lru_cache(maxsize=4096)
def address_key(host: str) -> str:
    """The client an address counts as, for the quotas and the refusals' storage budget: an
    IPv4 address itself (also when written ``::ffff:a.b.c.d``, as an IPv6 socket sees it),
    an IPv6 address by its /64 — the least a site is given, so one machine can take a fresh
    address in it per request (privacy extensions do it unasked) and would otherwise take a
    fresh bucket per request, as a forged ``X-Forwarded-For`` did. Anything else (a Unix
    socket's peer) as it is."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class QuotaMiddleware:
    """Inside litestar's route stack (the handler is known); answers 429 itself.
    ``known(scope, token)``: is it a token this process has seen valid
    (``Seats.knows_token``)."""

    def __init__(self, app: Any, quotas: Quotas, known: Callable[[Any, str], bool]) -> None:
        self.app = app
        self.quotas = quotas
        self.known = known

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            handler = scope.get("route_handler")
            name = getattr(getattr(handler, "fn", None), "__name__", "")
            kind = _KINDS.get(name, "reads")
            if name not in _UNLIMITED and self.quotas.limits(kind):
                by_token = kind in _BY_TOKEN
                client = client_of(scope, by_token, self.known)
                wait = self.quotas.take(kind, client, address_of(scope) if by_token else None)
                if wait is not None:
                    await _too_many(scope, send, kind, wait, by_token)
                    return
        await self.app(scope, receive, send)


async def _too_many(scope: Any, send: Any, kind: str, wait: float, by_token: bool) -> None:
    retry_after = max(1, math.ceil(wait))
    who = (
        "this client (its token, or its address with all its tokens)" if by_token else "this client"
    )
    problem = Problem(
        429,
        "rate.limited",
        f"too many {kind} requests from {who}; retry after {retry_after} s",
        quota=kind,
        retry_after=retry_after,
    )
    body = problem.body(instance=scope["path"])
    await send(
        {
            "type": "http.response.start",
            "status": 429,
            "headers": [
                (b"content-type", PROBLEM_JSON.encode()),
                (b"content-length", str(len(body)).encode()),
                (b"retry-after", str(retry_after).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
