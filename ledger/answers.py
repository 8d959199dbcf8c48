"""The answer to an accepted command, as the ledger builds it before the append
(:func:`ledger.ruling.accepted_answer`): its events as the seat may read them, the new head and
its receipt (:class:`RecordedAnswer`, recorded with the command and sent again for a repeated
``Idempotency-Key``), and the whole answer with who acts now and the seat's legal commands.

Field order is the order the answers were always written in, so the bytes on the wire are what
they were. A field that an answer recorded by an older server may lack (``Receipt.key_id``,
``EventDocument.openings``) is ``UNSET`` by default: absent stays absent, ``None`` stays
``null``."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import UNSET, UnsetType

from domain.kernel.messages import Sentence


class Receipt(msgspec.Struct, kw_only=True):
    game: str
    version: int
    head: str
    #: the signing key's id (``GET /v1/keys``); absent from answers recorded before keys had ids
    key_id: str | UnsetType | None = UNSET
    signature: str


class EventDocument(msgspec.Struct, kw_only=True):
    """An event as a caller reads it, with every byte its chain link covers (the game id is
    the URL's): docs/receipts-and-audit.md, "Check the chain yourself"."""

    version: int
    type: str
    seat: int | None
    #: recorded_at as the hash covers it: UTC, 6 fractional digits, ``Z``
    at: str
    data: Any
    #: (path, salt) of each hidden value put back in ``data`` in the clear
    openings: list[dict[str, Any]] | UnsetType = UNSET
    hash: str
    prev_hash: str
    #: the id of the command (or table-talk message) that made it, null for the server's own
    #: (set-up, clock, bot); absent only in an answer recorded before issue 35
    command: str | UnsetType | None = UNSET
    #: the event told as a sentence for the caller, in the asked language (docs/api.md,
    #: "Sentences"); absent where an event document is not read by a person (recorded answers)
    sentence: Sentence | UnsetType = UNSET


#: The seat's legal commands, as the projection stored them (encoded once, sent as they are).
LegalCommands = Annotated[
    msgspec.Raw,
    msgspec.Meta(extra_json_schema={"type": "array", "items": {"type": "object"}}),
]


class CommandAnswer(msgspec.Struct):
    """``POST /v1/games/{id}/commands``: the events as the seat may read them, the new head
    and its receipt; who acts now and the seat's legal commands."""

    version: int
    events: list[EventDocument]
    head: str
    receipt: Receipt
    to_act: list[int]
    legal: LegalCommands


class RecordedAnswer(msgspec.Struct):
    """The part of a command's answer recorded with it (``commands.response``) and sent again
    for a repeated ``Idempotency-Key``: its events as the seat may read them, the new head and
    its receipt."""

    version: int
    events: list[EventDocument]
    head: str
    receipt: Receipt

    def answer(self, to_act: list[int], legal: msgspec.Raw) -> CommandAnswer:
        """The whole answer: this, and who acts now and the seat's legal commands."""
        return CommandAnswer(self.version, self.events, self.head, self.receipt, to_act, legal)
