"""The ledger's records: an event to append, an event as stored with its hash-chain link, and a
command as received and what became of it (msgspec Structs; ids are lowercase UUID strings)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec


class NewEvent(msgspec.Struct, frozen=True):
    """An event to append: its type and JSON data (builtins: dict, list, str, int, bool, None)."""

    type: str
    data: Any
    #: The chained (public) form when the event has hidden values: ``data`` with each hidden
    #: value replaced by its commitment (``domain.kernel.hidden``); None: ``data`` itself.
    public: Any = None


class StoredEvent(msgspec.Struct, frozen=True):
    """One row of ``events``: an event as stored, with its hash-chain link."""

    game_id: str
    version: int
    type: str
    data: Any
    seat: int | None
    command_id: str | None
    recorded_at: datetime
    prev_hash: bytes
    hash: bytes
    #: The chained form when it differs from ``data`` (see ``NewEvent.public``).
    public: Any = None

    @property
    def chained(self) -> Any:
        """The data the hash chain covers: the public form, or ``data`` when it has none."""
        return self.data if self.public is None else self.public


class CommandRecord(msgspec.Struct, frozen=True):
    """One row of ``commands``: a command as received and what became of it."""

    id: str
    game_id: str
    seat: int | None
    idempotency_key: str | None
    type: str
    body: Any
    received_at: datetime
    outcome: str  # 'accepted' | 'rejected' | 'conflict'
    error_code: str | None
    error_detail: str | None
    first_version: int | None
    last_version: int | None
    response: Any | None
    #: A refusal's whole body, as SHA-256 (hex) and length of its canonical JSON (keys sorted,
    #: no spaces: :func:`service.eventstore.rejections.canonical_body`); None for accepted
    #: commands and refusals recorded before bodies were bounded (their ``body`` is whole).
    body_sha256: str | None = None
    body_size: int | None = None
    #: True when ``body`` is None because the body was longer than the prefix kept
    #: (``MANIFEST_REFUSAL_BODY_PREFIX``); then ``body_prefix`` holds its first bytes.
    body_truncated: bool = False
    body_prefix: str | None = None
