"""What an audit reads and what it finds: the :class:`Evidence` of one game (its stored
stream, recorded commands, seed and head, and an export's openings and withheld links), and
the :class:`Case` each check of :mod:`ledger.audit` works on — the evidence, indexed,
with the seed commitment and reveal read from the stream and the :class:`Finding` list every
check adds to."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from ledger.exportfile import Opening
from ledger.records import CommandRecord, StoredEvent


def canon(value: Any) -> bytes:
    """JSON with sorted keys: how two decoded values are compared byte for byte."""
    return msgspec.json.encode(value, order="sorted")


@dataclass(frozen=True)
class Evidence:
    """A game as an audit gets it: from PostgreSQL (the server's seed and message key) or from
    an export file (its seed once revealed, its openings and withheld links)."""

    game_id: str
    events: Sequence[StoredEvent]
    commands: Sequence[CommandRecord]
    seed: bytes | None
    head: bytes | None = None
    message_key: bytes | None = None
    openings: Sequence[Opening] = ()
    withheld: Sequence[int] = ()


class Finding(msgspec.Struct, frozen=True):
    """One thing an audit found wrong: the event (None: the game as a whole), the check that
    found it, a stable code and what was seen. Listed as ``problems`` in the report."""

    version: int | None
    check: str  # chain | adjudication | seed | commitments
    code: str
    detail: str


class Case:
    """One audit's evidence, indexed, and its findings so far."""

    def __init__(self, evidence: Evidence) -> None:
        self.game_id = evidence.game_id
        self.events = list(evidence.events)
        self.commands = {c.id: c for c in evidence.commands}
        self.seed = evidence.seed
        self.head = evidence.head
        self.message_key = evidence.message_key
        self.openings = {(o.version, tuple(o.path)): o.salt for o in evidence.openings}
        self.withheld = set(evidence.withheld)
        self.problems: list[Finding] = []

    def problem(self, version: int | None, check: str, code: str, detail: str) -> None:
        self.problems.append(Finding(version, check, code, detail))

    def committed(self) -> str | None:
        """The seed commitment published in ``lobby.created``."""
        if self.events and self.events[0].type == "lobby.created":
            value = self.events[0].data.get("seed_commitment")
            return value if isinstance(value, str) else None
        return None

    def revealed(self) -> tuple[int, bytes] | None:
        """``seed.revealed``'s version and seed (empty if it is not hex)."""
        for event in self.events:
            if event.type == "seed.revealed":
                try:
                    return event.version, bytes.fromhex(str(event.data.get("seed")))
                except ValueError:
                    return event.version, b""
        return None

    def adjudication_seed(self) -> bytes | None:
        """The seed to re-run the decisions with: the revealed one, or the one given to the
        audit (the server's, an export's), preferring whichever hashes to the commitment — a
        forged reveal is the seed check's finding and must not make every random decision
        look forged too."""
        revealed = self.revealed()
        candidates = [s for s in (None if revealed is None else revealed[1], self.seed) if s]
        commitment = self.committed()
        for seed in candidates:
            if hashlib.sha256(seed).hexdigest() == commitment:
                return seed
        return candidates[0] if candidates else None

    def canonical_form(self) -> int:
        """The game's canonical form (``lobby.created``'s ``canonical``; 1 without it)."""
        if self.events and self.events[0].type == "lobby.created":
            value = self.events[0].data.get("canonical", 1)
            return value if isinstance(value, int) else 0
        return 1
