"""Auditing a game, provably: a pure function of the stored stream, the recorded commands and
the seed, so the server (``GET /v1/games/{id}/audit``) and anyone holding an exported file
(``manifest verify FILE``, no database) reach the same findings.

Three checks:

* **chain** — every event's link ``hash_n = SHA-256(hash_{n-1} ‖ canonical(event n))`` and
  dense versions from 1, ending at the game's recorded head (:mod:`service.eventstore.chain`);
* **adjudication** — every game event was produced by the rules: the set-up events by
  ``start``/``start_from_position`` and each accepted command's events by ``decide`` re-run on
  the state before it with the same generator ``Rng(seed, first version)``, compared byte for
  byte; platform events are checked against their commands too;
* **seed** — the revealed seed hashes to the commitment published in ``lobby.created``;
* **commitments** (canonical form 2, :mod:`service.eventstore.chain`) — every hidden value in the
clear
  opens its commitment in the chained (public) form: with the salt recomputed from the seed
  (``HMAC-SHA256(seed, b"hide" ‖ u64be(version) ‖ path)``, :mod:`domain.kernel.hidden`) for a
  game's values, or a given opening's salt (a private message, for its addressees); the clear
  data equals the public form everywhere else; and, with the seed, every value the game
  declares hidden (``Game.hidden``) is committed in the public form, not chained in the clear.
  Values still sealed (a live game without its seed; private messages of others) are counted.

An export (``manifest export``, ``GET /v1/games/{id}/export``) is what its caller may read:
events in their public form, with the caller's openings. A game of canonical form 1 cannot show
a caller the bytes hashed over values it may not read: those events are ``withheld`` and their
links are taken as stored (listed in the chain report, ``unverified``).

The first problem of each kind names its event; every problem found is listed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import msgspec

from domain.kernel import CommandError, Rng, RuleError
from domain.kernel.hidden import COMMITMENT, Path, commitment, get_at, is_sealed, salt, set_at
from domain.platform.events import is_platform
from domain.platform.table import Table, copy_table, fold_stream
from domain.registry import get_game
from service.audit.commitments import CANONICAL, MESSAGE, secrets_of
from service.eventstore.chain import ZERO_HASH, event_hash
from service.eventstore.records import CommandRecord, StoredEvent

#: v2: events are what the exporting caller may read (public forms, openings); v1 files (every
#: event in the clear) still verify.
EXPORT_FORMAT = "manifest.export.v2"


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


class Finding(msgspec.Struct, frozen=True):
    """One thing an audit found wrong: the event (None: the game as a whole), the check that
    found it, a stable code and what was seen. Listed as ``problems`` in the report."""

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
        *,
        message_key: bytes | None = None,
        openings: Sequence[Opening] = (),
        withheld: Sequence[int] = (),
    ) -> None:
        self.game_id = game_id
        self.events = list(events)
        self.commands = {c.id: c for c in commands}
        self.seed = seed
        self.head = head
        self.message_key = message_key
        self.openings = {(o.version, tuple(o.path)): o.salt for o in openings}
        self.withheld = set(withheld)
        self.problems: list[Finding] = []

    def _problem(self, version: int | None, check: str, code: str, detail: str) -> None:
        self.problems.append(Finding(version, check, code, detail))

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
            elif event.version in self.withheld:
                pass  # redacted for this caller: the link is taken as stored
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
            "unverified": sorted(self.withheld),
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
                    None if table is None else copy_table(table),
                    [_foldable(e) for e in group],
                    self.game_id,
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
        if command.seat is None or table.state is None:
            return "adjudication.seat", "a game command without a seat, or before the game"
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

    # --- commitments ---------------------------------------------------------------------------
    def canonical_form(self) -> int:
        if self.events and self.events[0].type == "lobby.created":
            value = self.events[0].data.get("canonical", 1)
            return value if isinstance(value, int) else 0
        return 1

    def check_commitments(self) -> dict[str, Any]:
        form = self.canonical_form()
        out: dict[str, Any] = {"canonical": form, "opened": 0, "sealed": 0}
        if form < CANONICAL or not self.events:
            out["ok"] = None
            return out
        seed = self._adjudication_seed()
        seed = seed if seed is not None and len(seed) == 32 else None
        try:
            rules = get_game(str(self.events[0].data.get("game")))
        except Exception:
            rules = None
        first_bad: int | None = None
        for event in self.events:
            try:
                finding = self._commitments_of(rules, event, seed, out)
            except (CommandError, ValueError, KeyError, IndexError, TypeError) as error:
                finding = ("commitment.unreadable", f"the hidden values do not read: {error}")
            if finding is not None:
                self._problem(event.version, "commitments", *finding)
                first_bad = event.version if first_bad is None else first_bad
        out["ok"] = first_bad is None
        out["first_bad"] = first_bad
        return out

    def _salt(self, event: StoredEvent, path: Path, seed: bytes | None) -> bytes | None:
        given = self.openings.get((event.version, path))
        if given is not None:
            return bytes.fromhex(given)
        key = self.message_key if event.type == MESSAGE else seed
        return None if key is None else salt(key, event.version, path)

    def _commitments_of(
        self, rules: Any, event: StoredEvent, seed: bytes | None, out: dict[str, Any]
    ) -> tuple[str, str] | None:
        """Why ``event``'s hidden values do not open their commitments (None if they do)."""
        public = event.public
        marks = [] if public is None else _sealed_paths(public)
        data = event.data
        opened = 0
        for path in marks:
            value, mark = get_at(data, path), get_at(public, path)
            if is_sealed(value):
                if value != mark:
                    return "commitment.mismatch", f"{list(path)}: two different commitments"
                out["sealed"] += 1
                continue
            key = self._salt(event, path, seed)
            if key is None:
                out["sealed"] += 1  # in the clear, but no salt to check it with
                continue
            if commitment(key, value) != mark[COMMITMENT]:
                return "commitment.mismatch", f"{list(path)}: the value does not open it"
            opened += 1
        out["opened"] += opened
        rebuilt = data
        for path in marks:
            rebuilt = set_at(rebuilt, path, get_at(public, path))
        if public is not None and _canon(rebuilt) != _canon(public):
            return "commitment.mismatch", "the data differs from its chained form"
        if opened == len(marks) and rules is not None:  # every hidden value in the clear
            declared = {s.path for s in secrets_of(rules, event.type, data)}
            if declared != set(marks):
                return (
                    "commitment.missing",
                    "the chained form does not commit exactly the values declared hidden",
                )
        return None

    def run(self) -> dict[str, Any]:
        chain = self.check_chain()
        adjudication = self.check_adjudication()
        seed = self.check_seed()
        commitments = self.check_commitments()
        ok = (
            chain["ok"]
            and adjudication["ok"] is not False
            and seed["ok"] is not False
            and commitments["ok"] is not False
        )
        return {
            "ok": bool(ok),
            "game": self.game_id,
            "version": len(self.events),
            "chain": chain,
            "adjudication": adjudication,
            "seed": seed,
            "commitments": commitments,
            "problems": [msgspec.to_builtins(p) for p in self.problems],
        }


def _sealed_paths(value: Any, path: Path = ()) -> list[Path]:
    """The paths of every commitment in a public form."""
    if is_sealed(value):
        return [path]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _sealed_paths(v, (*path, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _sealed_paths(v, (*path, i))]
    return []


def _foldable(event: StoredEvent) -> StoredEvent:
    """A private message the auditor may not read folds as an empty one (nothing the rules
    depend on)."""
    text = event.data.get("text") if event.type == MESSAGE else ""
    if not isinstance(text, str):  # a commitment, or null (canonical form 1)
        return msgspec.structs.replace(event, data={**event.data, "text": ""})
    return event


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
    *,
    message_key: bytes | None = None,
    openings: Sequence[Opening] = (),
    withheld: Sequence[int] = (),
) -> dict[str, Any]:
    return Auditor(
        game_id,
        events,
        commands,
        seed,
        head,
        message_key=message_key,
        openings=openings,
        withheld=withheld,
    ).run()


def verify_export(exported: ExportFile) -> dict[str, Any]:
    """``manifest verify``: audit an exported file, with no database."""
    return audit(
        exported.game.id,
        exported.events,
        exported.commands,
        exported.seed,
        exported.game.head,
        openings=exported.openings,
        withheld=exported.withheld,
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
