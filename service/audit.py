"""Auditing a game, provably: a pure function of the stored stream, the recorded commands and
the seed, so the server (``GET /v1/games/{id}/audit``) and anyone holding an exported file
(``manifest verify FILE``, no database) reach the same findings.

Three checks:

* **chain** — every event's link ``hash_n = SHA-256(hash_{n-1} ‖ canonical(event n))`` and
  dense versions from 1, ending at the game's recorded head (:mod:`service.chain`);
* **adjudication** — every game event was produced by the rules: the set-up events by
  ``start``/``start_from_position`` and each accepted command's events by ``decide`` re-run on
  the state before it with the same generator ``Rng(seed, first version)``, compared byte for
  byte; platform events are checked against their commands too;
* **seed** — the revealed seed hashes to the commitment published in ``lobby.created``.

The first problem of each kind names its event; every problem found is listed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import msgspec

from domain.kernel import CommandError, Rng, RuleError
from projections.platform_events import is_platform
from projections.table import Table, copy_table, fold_stream

from .chain import ZERO_HASH, event_hash
from .records import CommandRecord, StoredEvent

EXPORT_FORMAT = "manifest.export.v1"


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


class Problem(msgspec.Struct, frozen=True):
    version: int | None
    check: str  # chain | adjudication | seed
    code: str
    detail: str


def _canon(value: Any) -> bytes:
    return msgspec.json.encode(value, order="sorted")


class Auditor:
    def __init__(
        self,
        game_id: str,
        events: Sequence[StoredEvent],
        commands: Sequence[CommandRecord],
        seed: bytes | None,
        head: bytes | None = None,
    ) -> None:
        self.game_id = game_id
        self.events = list(events)
        self.commands = {c.id: c for c in commands}
        self.seed = seed
        self.head = head
        self.problems: list[Problem] = []

    def _problem(self, version: int | None, check: str, code: str, detail: str) -> None:
        self.problems.append(Problem(version, check, code, detail))

    # --- chain -------------------------------------------------------------------------------
    def check_chain(self) -> dict[str, Any]:
        prev = ZERO_HASH
        first_bad: int | None = None
        for expected, event in enumerate(self.events, start=1):
            bad = None
            if event.version != expected:
                bad = ("chain.gap", f"expected version {expected}, found {event.version}")
            elif bytes(event.prev_hash) != prev:
                bad = ("chain.broken_link", "prev_hash is not the hash of the event before")
            elif event_hash(prev, event) != bytes(event.hash):
                bad = ("chain.bad_hash", "the stored hash is not the hash of the stored event")
            if bad is not None:
                self._problem(expected, "chain", *bad)
                first_bad = expected if first_bad is None else first_bad
                break
            prev = bytes(event.hash)
        if first_bad is None and self.head is not None and bytes(self.head) != prev:
            first_bad = len(self.events) + 1
            self._problem(
                first_bad,
                "chain",
                "chain.head_mismatch",
                "the game's recorded head is not the hash of its last event (events missing?)",
            )
        return {
            "ok": first_bad is None,
            "events": len(self.events),
            "head": prev.hex() if self.events else None,
            "first_bad": first_bad,
        }

    # --- seed --------------------------------------------------------------------------------
    def committed(self) -> str | None:
        if self.events and self.events[0].type == "lobby.created":
            value = self.events[0].data.get("seed_commitment")
            return value if isinstance(value, str) else None
        return None

    def revealed(self) -> tuple[int, bytes] | None:
        for event in self.events:
            if event.type == "seed.revealed":
                try:
                    return event.version, bytes.fromhex(str(event.data.get("seed")))
                except ValueError:
                    return event.version, b""
        return None

    def check_seed(self) -> dict[str, Any]:
        commitment = self.committed()
        revealed = self.revealed()
        out: dict[str, Any] = {"commitment": commitment, "revealed": revealed is not None}
        if revealed is None:
            out["ok"] = None
            return out
        version, seed = revealed
        ok = commitment is not None and hashlib.sha256(seed).hexdigest() == commitment
        out["ok"] = ok
        out["seed"] = seed.hex()
        if not ok:
            self._problem(
                version,
                "seed",
                "seed.mismatch",
                "the revealed seed does not hash to the commitment in lobby.created",
            )
        return out

    # --- adjudication ------------------------------------------------------------------------
    def _adjudication_seed(self) -> bytes | None:
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

    def check_adjudication(self) -> dict[str, Any]:
        seed = self._adjudication_seed()
        if seed is None or len(seed) != 32:
            return {"ok": None, "reason": "the seed is not available (the game is still live)"}
        groups = _groups(self.events)
        table: Table | None = None
        commands_checked = 0
        first_bad: int | None = None
        for group in groups:
            first = group[0]
            try:
                finding = self._adjudicate(table, group, seed)
            except (RuleError, CommandError, ValueError, KeyError, TypeError) as error:
                finding = ("adjudication.error", f"could not re-run: {error}")
            if finding is not None:
                self._problem(first.version, "adjudication", *finding)
                first_bad = first.version if first_bad is None else first_bad
            elif first.command_id is not None:
                commands_checked += 1
            try:
                table = fold_stream(
                    None if table is None else copy_table(table), group, self.game_id
                )
            except Exception as error:  # a forged event may not even fold
                self._problem(first.version, "adjudication", "adjudication.unfoldable", str(error))
                first_bad = first.version if first_bad is None else first_bad
                break
        return {"ok": first_bad is None, "commands": commands_checked, "first_bad": first_bad}

    def _adjudicate(
        self, table: Table | None, group: list[StoredEvent], seed: bytes
    ) -> tuple[str, str] | None:
        """Why ``group`` is not what the rules produce (None if it is)."""
        first = group[0]
        if table is None:
            if first.type != "lobby.created" or len(group) != 1:
                return "adjudication.no_creation", "a stream starts with lobby.created"
            return None
        rules = table.rules
        game_events = [e for e in group if not is_platform(e.type)]
        platform = [e for e in group if is_platform(e.type)]
        if first.command_id is None:
            if not game_events:  # lobby.joined by a player (seat on the event), lobby.left
                ok = all(e.type in ("lobby.joined", "lobby.left") for e in platform)
                return None if ok else ("adjudication.orphan", "a platform event without a command")
            if table.state is not None or platform:
                return "adjudication.orphan", "game events that no command produced"
            expected = self._opening(table, seed, first.version)
            return _compare(expected, game_events)
        command = self.commands.get(first.command_id)
        if command is None or command.outcome != "accepted":
            return "adjudication.orphan", f"no accepted command {first.command_id} was recorded"
        if command.first_version != first.version or command.last_version != group[-1].version:
            return "adjudication.range", "the command's recorded version range differs"
        if any(e.seat != command.seat for e in group):
            return "adjudication.seat", "the events' seat is not the command's seat"
        if command.type == "table.message":
            return (
                None
                if len(group) == 1 and first.type == "table.message"
                else ("adjudication.orphan", "a message command produced other events")
            )
        extra = [e for e in platform if e.type != "seed.revealed"]
        if extra:
            return "adjudication.orphan", f"{extra[0].type} appended with a game command"
        body = command.body.get("command") if isinstance(command.body, dict) else None
        decoded = rules.decode_command(body or {})
        assert command.seat is not None and table.state is not None
        produced = rules.decide(table.state, command.seat, decoded, Rng(seed, first.version))
        return _compare([msgspec.to_builtins(e) for e in produced], game_events)

    def _opening(self, table: Table, seed: bytes, version: int) -> list[Any]:
        """The set-up events the rules produce for this game (from ``lobby.created``)."""
        rules = table.rules
        rng = Rng(seed, version)
        raw_position = self.events[0].data.get("position")
        if raw_position is not None:
            events = rules.start_from_position(rules.decode_position(raw_position), rng)
        else:
            events = rules.start(rules.decode_options(table.options), table.seats, rng)
        return [msgspec.to_builtins(e) for e in events]

    def run(self) -> dict[str, Any]:
        chain = self.check_chain()
        adjudication = self.check_adjudication()
        seed = self.check_seed()
        ok = chain["ok"] and adjudication["ok"] is not False and seed["ok"] is not False
        return {
            "ok": bool(ok),
            "game": self.game_id,
            "version": len(self.events),
            "chain": chain,
            "adjudication": adjudication,
            "seed": seed,
            "problems": [msgspec.to_builtins(p) for p in self.problems],
        }


def _groups(events: Sequence[StoredEvent]) -> list[list[StoredEvent]]:
    """Events split into what one decision appended: runs with one command id; events with no
    command id (set-up) grouped by kind — each platform event alone, game events together."""
    groups: list[list[StoredEvent]] = []
    for event in events:
        if groups:
            last = groups[-1][-1]
            same_command = event.command_id is not None and event.command_id == last.command_id
            same_setup = (
                event.command_id is None
                and last.command_id is None
                and not is_platform(event.type)
                and not is_platform(last.type)
            )
            if same_command or same_setup:
                groups[-1].append(event)
                continue
        groups.append([event])
    return groups


def _compare(expected: list[Any], stored: list[StoredEvent]) -> tuple[str, str] | None:
    if len(expected) != len(stored):
        return (
            "adjudication.mismatch",
            f"the rules produce {len(expected)} event(s) here, {len(stored)} are stored",
        )
    for i, (want, have) in enumerate(zip(expected, stored, strict=True)):
        if want.get("type") != have.type or _canon(want) != _canon(have.data):
            return (
                "adjudication.mismatch",
                f"event {have.version} ({have.type}) is not what the rules produce "
                f"(event {i + 1} of this decision)",
            )
    return None


def audit(
    game_id: str,
    events: Sequence[StoredEvent],
    commands: Sequence[CommandRecord],
    seed: bytes | None,
    head: bytes | None = None,
) -> dict[str, Any]:
    return Auditor(game_id, events, commands, seed, head).run()


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
