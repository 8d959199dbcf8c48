"""Caps on open live streams (``GET /v1/games/{id}/stream``), counted in each process.

A stream is long-lived: it holds a connection, a task and a mailbox for as long as the client
keeps it open, so it is bounded by how many are *open*, not by a per-minute quota
(``docs/api.md``, "Limits"):

- per client: at most ``per_client`` open streams. The client is the seat token for a seat's
  stream of its own game (a token cannot be forged: 401), else the client address — so
  spectators behind one address share a cap, and a seat is never refused because others at
  its address (a household, a LAN party) hold streams. Past it: 429 ``rate.limited``
  (``quota: "streams"``) with ``Retry-After``.
- per address, seats' streams: at most ``seats_per_address`` seat streams (all tokens
  together) from one client address, past it 429 as above. Creating a game hands its
  creator every seat token, so without this bound one address could create a few games and
  fill every slot of the process — the seats' reserve included — with streams of its own
  games' seats.
- per process: at most ``per_process`` open streams, of which the last ``seat_reserve`` are
  kept for seats' streams of their own game: spectator (anonymous) streams stop at
  ``per_process - seat_reserve``. Past it: 503 ``service.unavailable`` (``limit: "streams"``)
  with ``Retry-After``. So strangers holding spectator streams never take the slots a seat
  needs to follow its own game.

Decided: reaching a cap does not make ``/readyz`` fail (an attacker holding streams must not
take instances out of a load balancer's rotation); ``manifest_streams_open{kind}`` and
``manifest_streams_refused_total{cap}`` show them. ``/readyz`` fails when streams cannot be
served at all: the process's change subscription is down (:mod:`service.http.readiness`)."""

from __future__ import annotations

import hashlib
from typing import Any

from prometheus_client import Counter, Gauge

from service.application.history import History
from service.http.limits import client_of
from service.problems import Problem

STREAMS_OPEN = Gauge("manifest_streams_open", "Live streams open in this process", ["kind"])
STREAMS_REFUSED = Counter(
    "manifest_streams_refused_total", "Live streams refused at a cap", ["cap"]
)


class Slot:
    """One open stream's place; :meth:`release` gives it back (once, however often called)."""

    def __init__(self, caps: StreamCaps, client: bytes, address: bytes, seat: bool) -> None:
        self._caps = caps
        self.client = client
        self.address = address
        self.seat = seat
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._caps._release(self)


class StreamCaps:
    """The counts of one process's open streams, and the caps (see the module docstring)."""

    def __init__(
        self,
        per_client: int,
        per_process: int,
        seat_reserve: int,
        retry_after: int,
        seats_per_address: int = 64,
    ) -> None:
        self.per_client = per_client
        self.seats_per_address = seats_per_address
        self.per_process = per_process
        self.seat_reserve = min(seat_reserve, per_process)
        self.retry_after = retry_after
        self.open = 0
        self.spectators = 0
        self._by_client: dict[bytes, int] = {}
        #: seat streams open per client address (keys: the address, as ``client_of`` gives it)
        self._seats_by_address: dict[bytes, int] = {}

    def counts(self) -> dict[str, int]:
        return {
            "open": self.open,
            "spectators": self.spectators,
            "cap": self.per_process,
            "seat_reserve": self.seat_reserve,
        }

    def acquire(self, scope: Any, token: str | None, seat: int | None) -> Slot:
        """A slot for a stream of the caller (``seat``: its seat in the game streamed, None for
        a spectator), or a 429 / 503 :class:`Problem`."""
        address = client_of(scope, False, _unknown)
        client = (
            b"t:" + hashlib.blake2b(token.encode(), digest_size=16).digest()
            if seat is not None and token is not None
            else address
        )
        if self._by_client.get(client, 0) >= self.per_client:
            raise self._too_many(f"this client has {self.per_client} live streams open")
        if seat is not None and self._seats_by_address.get(address, 0) >= self.seats_per_address:
            raise self._too_many(
                f"this address has {self.seats_per_address} seats' live streams open"
            )
        room = self.per_process if seat is not None else self.per_process - self.seat_reserve
        if self.open >= self.per_process or (seat is None and self.spectators >= room):
            STREAMS_REFUSED.labels(cap="process").inc()
            raise Problem(
                503,
                "service.unavailable",
                "this server has as many live streams open as it serves"
                + ("" if seat is not None else " to spectators")
                + "; retry later or on another instance",
                limit="streams",
            ).retry(self.retry_after)
        self.open += 1
        self.spectators += seat is None
        _count(self._by_client, client, 1)
        if seat is not None:
            _count(self._seats_by_address, address, 1)
        STREAMS_OPEN.labels(kind="spectator" if seat is None else "seat").inc()
        return Slot(self, client, address, seat is not None)

    def _too_many(self, what: str) -> Problem:
        STREAMS_REFUSED.labels(cap="client").inc()
        return Problem(
            429,
            "rate.limited",
            f"{what} (the most it may); close one or retry later",
            quota="streams",
            retry_after=self.retry_after,
        ).retry(self.retry_after)

    def _release(self, slot: Slot) -> None:
        self.open -= 1
        self.spectators -= not slot.seat
        _count(self._by_client, slot.client, -1)
        if slot.seat:
            _count(self._seats_by_address, slot.address, -1)
        STREAMS_OPEN.labels(kind="seat" if slot.seat else "spectator").dec()


def _count(counts: dict[bytes, int], key: bytes, by: int) -> None:
    left = counts.get(key, 0) + by
    if left:
        counts[key] = left
    else:
        del counts[key]


def _unknown(scope: Any, token: str) -> bool:
    return False


class LiveStreams:
    """What the stream handler needs, as one dependency: the history, the caps, and the seconds
    of silence after which an open stream sends a keep-alive comment."""

    def __init__(self, history: History, caps: StreamCaps, keepalive: float = 15.0) -> None:
        self.history = history
        self.caps = caps
        self.keepalive = keepalive
