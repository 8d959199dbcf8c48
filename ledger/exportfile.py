"""The export file: what ``manifest export`` and ``GET /v1/games/{id}/export`` write
(:class:`ExportFile`), its bytes, and their reading back by ``manifest verify``.

Hashes (``events[].prev_hash``, ``events[].hash``, ``game.head``) and the seed are written in
lowercase hex, as the API writes them (``GET /v1/games/{id}/events``, receipts, the seed in
``seed.revealed``), so an exported event can be compared with the API's by eye or by ``diff``.
That is format ``manifest.export.v3`` (the content of v2 — public forms, openings, withheld
links — in hex); files of ``manifest.export.v1`` and ``v2`` (msgspec's default base64 for
bytes) are still read.
"""

from __future__ import annotations

from typing import Any

import msgspec

from domain.kernel.messages import Template
from ledger.records import CommandRecord, StoredEvent

#: v2: events are what the exporting caller may read (public forms, openings); v1 files (every
#: event in the clear) still verify.
EXPORT_FORMAT = "manifest.export.v2"
FORMAT_HEX = "manifest.export.v3"
_EVENT_HASHES = ("prev_hash", "hash")


class Opening(msgspec.Struct, frozen=True):
    """The salt of a hidden value given in the clear (path into event ``version``'s data)."""

    version: int
    path: list[str | int]
    salt: str


class ExportedGame(msgspec.Struct):
    id: str
    game: str
    seats: int
    status: str
    version: int
    head: bytes


class ExportFile(msgspec.Struct):
    """``manifest export``: everything needed to audit a game offline."""

    format: str
    game: ExportedGame
    events: list[StoredEvent]
    commands: list[CommandRecord]
    #: The game's seed once revealed (a finished game); None for a live game.
    seed: bytes | None
    #: Salts of the values given in the clear (their commitments are in the public forms).
    openings: list[Opening] = []
    #: Versions of canonical-form-1 events shown redacted: their links cannot be recomputed.
    withheld: list[int] = []
    #: Per language, the message templates of the game's event types (docs/api.md,
    #: "Sentences"): a reader tells the events as sentences without the server.
    messages: dict[str, list[Template]] = {}


def encode_export(exported: ExportFile) -> bytes:
    """The export file's JSON, with every hash and the seed in hex."""
    doc: dict[str, Any] = msgspec.to_builtins(exported, builtin_types=(bytes,))
    doc["format"] = FORMAT_HEX
    doc["game"]["head"] = bytes(doc["game"]["head"]).hex()
    for event in doc["events"]:
        for field in _EVENT_HASHES:
            event[field] = bytes(event[field]).hex()
    if doc["seed"] is not None:
        doc["seed"] = bytes(doc["seed"]).hex()
    return msgspec.json.encode(doc)


def decode_export(raw: bytes) -> ExportFile:
    """An export file of either format (``msgspec.ValidationError``/``DecodeError`` if it is
    none: a hash that is not hex is a validation error)."""
    doc = msgspec.json.decode(raw)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT_HEX:
        return msgspec.json.decode(raw, type=ExportFile)
    try:
        doc["game"]["head"] = bytes.fromhex(doc["game"]["head"])
        for event in doc["events"]:
            for field in _EVENT_HASHES:
                event[field] = bytes.fromhex(event[field])
        if doc.get("seed") is not None:
            doc["seed"] = bytes.fromhex(doc["seed"])
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise msgspec.ValidationError(f"a hash or the seed is not hex: {error}") from None
    return msgspec.convert(doc, ExportFile)
