"""The wire JSON of views is the same bytes as before views were typed (issue 26).

The digests in ``views_golden.json`` were written from the dict views (before the msgspec
Structs of ``domain/<game>/views.py`` replaced them), for a few seeded random bot games of every
game: after every event, the game document (``GET /v1/games/{id}``) of every viewer — spectator,
every seat, and the auditor's everything — and the event as every viewer reads it. A typed view
must encode to exactly those bytes (same field names, same order, same values).

A deliberate change of a view's wire shape must update docs/api.md and this file: regenerate
with ``MANIFEST_WRITE_GOLDEN=1 .venv/bin/python -m pytest tests/domain/test_views_golden.py``
and say so in the commit. Fields added to the document after issue 26 (a ``clock``, say) are not
part of the comparison: the document's digest covers the fields it had then, in order.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import msgspec
import pytest

from domain.kernel import AUDITOR, SPECTATOR, play_random_game, seat
from domain.platform.table import Table, game_document, viewer_keys
from domain.registry import get_game

GOLDEN = Path(__file__).with_name("views_golden.json")
#: The document's fields as of issue 26, in their wire order.
DOCUMENT_FIELDS = ("id", "game", "status", "version", "seats", "to_act", "view", "result",
                   "messages")
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

_encoder = msgspec.json.Encoder()


def _document_bytes(table: Table, key: str, everything: bool | None) -> bytes:
    doc: Any = game_document(table, key, everything)
    raw = msgspec.json.decode(_encoder.encode(doc))
    return _encoder.encode({name: raw[name] for name in DOCUMENT_FIELDS})


def digests(game_id: str, seed_byte: int, seats: int) -> list[str]:
    """A short digest per event of a seeded random bot game: every viewer's document after it
    and every viewer's reading of the event."""
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
    out: list[str] = []
    state = None
    last = played.records[-1].number
    for record in played.records:
        state = game.evolve(state, record.event)
        table.state = state
        table.version = record.number + 1
        table.status = "finished" if record.number == last else "active"
        h = hashlib.sha256()
        for key in viewer_keys(table):
            h.update(_document_bytes(table, key, False))
        h.update(_document_bytes(table, "spectator", True))
        for viewer in (SPECTATOR, AUDITOR, *(seat(i) for i in range(seats))):
            h.update(_encoder.encode(game.event_view(record.event, viewer)))
        out.append(h.hexdigest()[:16])
    return out


def _key(run: tuple[str, int, int]) -> str:
    return "{}/{}/{}".format(*run)


def test_write_golden_when_asked() -> None:
    """``MANIFEST_WRITE_GOLDEN=1`` (re)writes the digests from the code as it is."""
    if os.environ.get("MANIFEST_WRITE_GOLDEN") != "1":
        return
    GOLDEN.write_text(json.dumps({_key(r): digests(*r) for r in RUNS}, indent=0) + "\n")


@pytest.mark.parametrize("run", RUNS, ids=_key)
def test_the_wire_json_of_views_is_unchanged(run: tuple[str, int, int]) -> None:
    expected = json.loads(GOLDEN.read_text())[_key(run)]
    got = digests(*run)
    assert len(got) == len(expected), "the bot game took another course"
    first = next((i for i, (a, b) in enumerate(zip(got, expected, strict=True)) if a != b), None)
    assert first is None, f"the views after event {first + 1 if first is not None else 0} differ"
