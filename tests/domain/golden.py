"""The wire JSON of views, as digests per event and per part (``views_golden.json``), for a few
seeded random bot games of every game (``test_views_golden.py`` compares them).

After every event of a run the parts are, in order: the game document (``GET /v1/games/{id}``)
of every viewer key (spectator, then each seat), the document with everything shown (the
auditor's), then the event as the spectator, the auditor and each seat read it. Each part has a
digest of its own (8 hex digits of SHA-256 over its bytes), so a failure names every event and
every part that changed, not only the first event.

The digests were first written (issue 26) from the dict views, before the msgspec Structs of
``domain/<game>/views.py`` replaced them, as one digest per event; they were split per part
(issue 38) from code that still matched every one of those. A deliberate change of a view's
wire shape must update docs/api.md and this file's data, and say so in the commit:

    .venv/bin/python -m tests.domain.golden

Fields added to the document after issue 26 (a ``clock``, say) are not part of the comparison:
a document's digest covers the fields it had then, in order.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import msgspec

from domain.kernel import AUDITOR, SPECTATOR, play_random_game, seat
from domain.platform.table import Table, game_document, viewer_keys
from domain.registry import get_game

GOLDEN = Path(__file__).with_name("views_golden.json")
#: The document's fields as of issue 26, in their wire order.
DOCUMENT_FIELDS = (
    "id",
    "game",
    "status",
    "version",
    "seats",
    "to_act",
    "view",
    "result",
    "messages",
)
#: (game, seed byte, seats): a few games of each, with every seat count that matters.
RUNS: list[tuple[str, int, int]] = [
    ("jolly-cargo", 1, 2),
    ("jolly-cargo", 2, 4),
    ("cargo-empire", 1, 1),
    ("cargo-empire", 2, 3),
    ("empire-builder", 1, 2),
    ("empire-builder", 2, 3),
    ("curious-cargo", 1, 2),
    ("curious-cargo", 2, 2),
]
DIGITS = 8

_encoder = msgspec.json.Encoder()


def _document_bytes(table: Table, key: str, everything: bool | None) -> bytes:
    doc: Any = game_document(table, key, everything)
    raw = msgspec.json.decode(_encoder.encode(doc))
    return _encoder.encode({name: raw[name] for name in DOCUMENT_FIELDS})


def part_names(seats: int) -> list[str]:
    """What each digest of an event covers, in order."""
    keys = ["spectator", *(f"seat:{i}" for i in range(seats))]
    readers = ["spectator", "auditor", *(f"seat {i}" for i in range(seats))]
    return (
        [f"{key}'s document" for key in keys]
        + ["the document with everything shown"]
        + [f"the event as {reader} reads it" for reader in readers]
    )


def parts(game_id: str, seed_byte: int, seats: int) -> list[list[bytes]]:
    """Per event of the seeded random bot game: the bytes of every part (see the docstring)."""
    game = get_game(game_id)
    played, _ = play_random_game(game, bytes([seed_byte]) * 32, seats)
    table = Table(
        game_id="golden",
        game=game_id,
        seats=seats,
        options=msgspec.to_builtins(game.decode_options(game.bot_options)),
        version=1,
        status="active",
        names=[f"p{i}" for i in range(seats)],
        messages=[],
    )
    out: list[list[bytes]] = []
    state = None
    last = played.records[-1].number
    for record in played.records:
        state = game.evolve(state, record.event)
        table.state = state
        table.version = record.number + 1
        table.status = "finished" if record.number == last else "active"
        event = [_document_bytes(table, key, False) for key in viewer_keys(table)]
        event.append(_document_bytes(table, "spectator", True))
        for viewer in (SPECTATOR, AUDITOR, *(seat(i) for i in range(seats))):
            event.append(_encoder.encode(game.event_view(record.event, viewer)))
        out.append(event)
    return out


def digest(part: bytes) -> str:
    return hashlib.sha256(part).hexdigest()[:DIGITS]


def digests(game_id: str, seed_byte: int, seats: int) -> list[str]:
    """One string per event: its parts' digests, concatenated."""
    return ["".join(map(digest, event)) for event in parts(game_id, seed_byte, seats)]


def key(run: tuple[str, int, int]) -> str:
    return "{}/{}/{}".format(*run)


def write() -> None:
    GOLDEN.write_text(json.dumps({key(r): digests(*r) for r in RUNS}, indent=0) + "\n")


if __name__ == "__main__":
    write()
    print(f"wrote {GOLDEN}")
