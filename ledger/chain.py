"""The events' hash chain: canonical bytes of an event and the link that binds it to the last.

Construction (fixed; changing it invalidates every stored chain)::

    canonical(event) = msgspec.json.encode({
        "at":      recorded_at as UTC ISO-8601, exactly 6 fractional digits and "Z",
                   e.g. "2026-11-21T05:30:00.123456Z",
        "command": command id as a lowercase canonical UUID string, or null,
        "data":    the event's JSON data,
        "game":    game id as a lowercase canonical UUID string,
        "seat":    int or null,
        "type":    the event type (str),
        "version": the event's version (int, 1-based),
    }, order="sorted")                       # keys sorted at every level, no whitespace

    hash_0 = 32 zero bytes                   # also games.head of a game with no events
    hash_n = SHA-256(hash_{n-1} || canonical(event n))

Each events row stores ``prev_hash = hash_{n-1}`` and ``hash = hash_n``; ``games.head`` is the
hash of the game's last event. :func:`verify_chain` recomputes all of it from stored rows.

Canonical forms (versioned per game, in ``lobby.created``'s ``canonical`` field)::

    1 (field absent) — "data" is the event's clear data. Games created before hidden values
                       were committed. A hash over a face-down crate's colour or a private
                       card lets anyone try every value, so their hidden values leak while live.
    2                — "data" is the event's *public form*: its clear data with each hidden value
                       (declared by the game, ``Game.hidden``; private table talk) replaced by
                       {"commitment": hex(SHA-256(salt || value))}, salt = HMAC-SHA256(key,
                       b"hide" || u64be(version) || path) — byte for byte in
                       :mod:`domain.kernel.hidden`. Events without hidden values: unchanged.

Every other byte is the same in both forms, so one verifier checks either: it hashes the stored
public form (``events.public``) when there is one, else ``data``. Why a version and not a
migration: a stored game's chain is what its players were given receipts for (heads signed by
the server); re-hashing it into form 2 would invalidate every receipt and every exported copy,
and re-chaining history is exactly what the audit exists to catch. Old games therefore keep
verifying as they are (form 1); every game created since is form 2. The version is inside event
1, so it is covered by the chain: a game cannot be passed off as the other form.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Protocol

import msgspec

from ledger.records import NewEvent, StoredEvent

ZERO_HASH = bytes(32)


#: A UUID in its canonical spelling (lower case, hyphenated 8-4-4-4-12), as ``str(UUID)``.
CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def canonical_uuid(value: str | uuid.UUID) -> str:
    """Lowercase canonical (8-4-4-4-12) form of a UUID given as str or UUID."""
    if isinstance(value, str) and CANONICAL_UUID.fullmatch(value):
        return value  # already canonical (the usual case): no UUID to build and print
    return str(value if isinstance(value, uuid.UUID) else uuid.UUID(str(value)))


def utc_micro(at: datetime) -> datetime:
    """``at`` in UTC with microsecond precision (naive datetimes are taken as UTC)."""
    if at.tzinfo is None:
        return at.replace(tzinfo=UTC)
    return at.astimezone(UTC)


def format_at(at: datetime) -> str:
    """``2026-11-21T05:30:00.123456Z`` — UTC, always 6 fractional digits (``isoformat``, not
    ``strftime``: the C library's strftime looks up the local time zone on every call)."""
    return utc_micro(at).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def canonical(
    game_id: str,
    version: int,
    type: str,
    seat: int | None,
    command_id: str | None,
    recorded_at: datetime,
    data: Any,
) -> bytes:
    """The canonical bytes of one event (see the module docstring)."""
    return canonical_prepared(
        canonical_uuid(game_id),
        version,
        type,
        seat,
        None if command_id is None else canonical_uuid(command_id),
        format_at(recorded_at),
        data,
    )


def canonical_prepared(
    game: str, version: int, type: str, seat: int | None, command: str | None, at: str, data: Any
) -> bytes:
    """:func:`canonical` with the game and command ids already canonical UUID strings and the
    time already formatted — for a batch of events that share them."""
    return msgspec.json.encode(
        {
            "at": at,
            "command": command,
            "data": data,
            "game": game,
            "seat": seat,
            "type": type,
            "version": version,
        },
        order="sorted",
    )


def link(prev_hash: bytes, canonical_bytes: bytes) -> bytes:
    """``SHA-256(prev_hash || canonical_bytes)``."""
    return hashlib.sha256(prev_hash + canonical_bytes).digest()


def chain_events(
    game_id: str,
    version: int,
    head: bytes,
    events: list[NewEvent],
    seat: int | None,
    command_id: str | None,
    at: datetime,
) -> list[StoredEvent]:
    """The events as they will be stored after ``version``, with their hash-chain links."""
    stored: list[StoredEvent] = []
    prev = head
    cid = None if command_id is None else canonical_uuid(command_id)
    game, at_text = canonical_uuid(game_id), format_at(at)
    for i, event in enumerate(events):
        n = version + 1 + i
        chained = event.data if event.public is None else event.public
        digest = link(prev, canonical_prepared(game, n, event.type, seat, cid, at_text, chained))
        stored.append(
            StoredEvent(
                game_id, n, event.type, event.data, seat, cid, at, prev, digest, event.public
            )
        )
        prev = digest
    return stored


class ChainedEvent(Protocol):
    """What :func:`verify_chain` reads from a stored event (``StoredEvent`` fits)."""

    @property
    def game_id(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def type(self) -> str: ...
    @property
    def data(self) -> Any: ...
    @property
    def seat(self) -> int | None: ...
    @property
    def command_id(self) -> str | None: ...
    @property
    def recorded_at(self) -> datetime: ...
    @property
    def prev_hash(self) -> bytes: ...
    @property
    def hash(self) -> bytes: ...
    @property
    def public(self) -> Any: ...


def canonical_of(event: ChainedEvent) -> bytes:
    """The canonical bytes of a stored event (what its link hashes: its public form when it
    has one, else its data)."""
    return canonical(
        event.game_id,
        event.version,
        event.type,
        event.seat,
        event.command_id,
        event.recorded_at,
        event.data if event.public is None else event.public,
    )


def event_hash(prev_hash: bytes, event: ChainedEvent) -> bytes:
    """Recompute ``hash_n`` of a stored event from ``prev_hash`` and its stored fields."""
    return link(prev_hash, canonical_of(event))


def verify_chain(
    events: Iterable[ChainedEvent],
    *,
    prev_hash: bytes = ZERO_HASH,
    first_version: int = 1,
    head: bytes | None = None,
) -> int | None:
    """The first version whose stored link is wrong, or None when the whole chain holds.

    ``events`` are one game's events in version order, starting at ``first_version`` (default 1)
    whose predecessor hash is ``prev_hash`` (default: 32 zero bytes). An event is bad when its
    version is not the next one (a gap or duplicate), its ``prev_hash`` is not the previous
    hash, or its ``hash`` differs from the recomputed ``SHA-256(prev_hash || canonical)``.
    When ``head`` is given (``games.head``) and differs from the last hash, the version after
    the last event is returned (an event is missing at the end or the head was tampered with).
    """
    expected_version = first_version
    prev = prev_hash
    for event in events:
        if event.version != expected_version or bytes(event.prev_hash) != prev:
            return expected_version if event.version > expected_version else event.version
        if event_hash(prev, event) != bytes(event.hash):
            return event.version
        prev = bytes(event.hash)
        expected_version += 1
    if head is not None and bytes(head) != prev:
        return expected_version
    return None
