"""Auditing a game, provably: a pure function of the stored stream, the recorded commands and
the seed (:class:`ledger.evidence.Evidence`), so the server (``GET
/v1/games/{id}/audit``) and anyone holding an exported file (``manifest verify FILE``, no
database) reach the same findings.

Four checks:

* **chain** — every event's link ``hash_n = SHA-256(hash_{n-1} ‖ canonical(event n))`` and
  dense versions from 1, ending at the game's recorded head (:mod:`ledger.chain`);
* **adjudication** — every game event was produced by the rules
  (:mod:`ledger.adjudication`);
* **seed** — the revealed seed hashes to the commitment published in ``lobby.created``;
* **commitments** — every hidden value in the clear opens its commitment in the chained form,
  and every value declared hidden is committed (:mod:`ledger.openings`).

An export (``manifest export``, ``GET /v1/games/{id}/export``, :mod:`ledger.exportfile`)
is what its caller may read: events in their public form, with the caller's openings. A game of
canonical form 1 cannot show a caller the bytes hashed over values it may not read: those
events are ``withheld`` and their links are taken as stored (listed in the chain report,
``unverified``).

The first problem of each kind names its event; every problem found is listed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import msgspec

from ledger.adjudication import Progress, check_adjudication
from ledger.chain import ZERO_HASH, event_hash
from ledger.evidence import Case, Evidence
from ledger.exportfile import ExportFile
from ledger.openings import check_commitments
from ledger.records import StoredEvent


def check_chain(case: Case) -> dict[str, Any]:
    prev = ZERO_HASH
    first_bad: int | None = None
    for expected, event in enumerate(case.events, start=1):
        bad = None
        if event.version != expected:
            bad = ("chain.gap", f"expected version {expected}, found {event.version}")
        elif bytes(event.prev_hash) != prev:
            bad = ("chain.broken_link", "prev_hash is not the hash of the event before")
        elif event.version in case.withheld:
            pass  # redacted for this caller: the link is taken as stored
        elif event_hash(prev, event) != bytes(event.hash):
            bad = ("chain.bad_hash", "the stored hash is not the hash of the stored event")
        if bad is not None:
            case.problem(expected, "chain", *bad)
            first_bad = expected if first_bad is None else first_bad
            break
        prev = bytes(event.hash)
    if first_bad is None and case.head is not None and bytes(case.head) != prev:
        first_bad = len(case.events) + 1
        case.problem(
            first_bad,
            "chain",
            "chain.head_mismatch",
            "the game's recorded head is not the hash of its last event (events missing?)",
        )
    return {
        "ok": first_bad is None,
        "events": len(case.events),
        "head": prev.hex() if case.events else None,
        "first_bad": first_bad,
        "unverified": sorted(case.withheld),
    }


def check_seed(case: Case) -> dict[str, Any]:
    commitment = case.committed()
    revealed = case.revealed()
    out: dict[str, Any] = {"commitment": commitment, "revealed": revealed is not None}
    if revealed is None:
        out["ok"] = None
        return out
    version, seed = revealed
    ok = commitment is not None and hashlib.sha256(seed).hexdigest() == commitment
    out["ok"] = ok
    out["seed"] = seed.hex()
    if not ok:
        case.problem(
            version,
            "seed",
            "seed.mismatch",
            "the revealed seed does not hash to the commitment in lobby.created",
        )
    return out


def audit(evidence: Evidence, progress: Progress | None = None) -> dict[str, Any]:
    """The audit report: each check's findings, every problem, and ``ok``. ``progress``
    (``manifest audit``/``verify``'s bar) is told each event re-adjudicated, of how many."""
    case = Case(evidence)
    if progress is not None:
        progress(0, len(case.events))
    chain = check_chain(case)
    adjudication = check_adjudication(case, progress)
    seed = check_seed(case)
    commitments = check_commitments(case)
    ok = (
        chain["ok"]
        and adjudication["ok"] is not False
        and seed["ok"] is not False
        and commitments["ok"] is not False
    )
    if progress is not None:  # every event checked (a live game's are not re-adjudicated)
        progress(len(case.events), len(case.events))
    return {
        "ok": bool(ok),
        "game": case.game_id,
        "version": len(case.events),
        "chain": chain,
        "adjudication": adjudication,
        "seed": seed,
        "commitments": commitments,
        "problems": [msgspec.to_builtins(p) for p in case.problems],
    }


def verify_export(exported: ExportFile, progress: Progress | None = None) -> dict[str, Any]:
    """``manifest verify``: audit an exported file, with no database."""
    return audit(
        Evidence(
            exported.game.id,
            exported.events,
            exported.commands,
            exported.seed,
            exported.game.head,
            openings=exported.openings,
            withheld=exported.withheld,
        ),
        progress,
    )


def receipt_matches(events: Sequence[StoredEvent], version: int, head_hex: str) -> bool:
    """Does a receipt for (``version``, ``head``) still match the stored chain?"""
    prev = ZERO_HASH
    for expected, event in enumerate(events, start=1):
        if event.version != expected:
            return False
        prev = event_hash(prev, event)
        if expected == version:
            return prev.hex() == head_hex
    return False
