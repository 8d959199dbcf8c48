"""The adjudication check of an audit: every game event was produced by the rules — the set-up
events by ``start``/``start_from_position`` and each accepted command's events by ``decide``
re-run on the state before it with the same generator ``Rng(seed, first version)``, compared
byte for byte; platform events are checked against their commands too."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from domain.kernel import CommandError, Rng, RuleError
from domain.platform import referee
from domain.platform.events import is_platform
from domain.platform.table import Table, copy_table, fold_stream
from domain.registry import EDITIONS, implements
from ledger import clocking
from ledger.commitments import MESSAGE
from ledger.evidence import Case, canon
from ledger.records import StoredEvent

#: The platform events a resignation or an abort appends (``domain.platform.endings``).
ENDINGS = frozenset({"game.resigned", "game.aborted"})

#: Told (events done, events in all) as an audit goes (the CLI's progress bar).
Progress = Callable[[int, int], None]


def check_adjudication(case: Case, progress: Progress | None = None) -> dict[str, Any]:
    seed = case.adjudication_seed()
    if seed is None or len(seed) != 32:
        return {"ok": None, "reason": "the seed is not available (the game is still live)"}
    unkept = _unkept_edition(case)
    if unkept is not None:
        return {"ok": None, "reason": unkept}
    table: Table | None = None
    commands_checked = 0
    first_bad: int | None = None
    before = None  # when the lobby last changed (the table filled): a clock starts after it
    for group in _groups(case.events):
        first = group[0]
        try:
            finding = _adjudicate(case, table, group, seed, before)
        except (RuleError, CommandError, ValueError, KeyError, TypeError, OverflowError) as error:
            # OverflowError: a forged clock (a bank or deadline past any timestamp).
            finding = ("adjudication.error", f"could not re-run: {error}")
        if finding is not None:
            case.problem(first.version, "adjudication", *finding)
            first_bad = first.version if first_bad is None else first_bad
        elif first.command_id is not None:
            commands_checked += 1
        try:
            table = fold_stream(
                None if table is None else copy_table(table),
                [_foldable(e) for e in group],
                case.game_id,
            )
        except Exception as error:  # a forged event may not even fold
            case.problem(first.version, "adjudication", "adjudication.unfoldable", str(error))
            first_bad = first.version if first_bad is None else first_bad
            break
        if first.type.startswith("lobby."):
            before = group[-1].recorded_at
        if progress is not None:
            progress(group[-1].version, len(case.events))
    return {"ok": first_bad is None, "commands": commands_checked, "first_bad": first_bad}


def _unkept_edition(case: Case) -> str | None:
    """Why the rules this game was played under cannot be re-run (None: they can): its rules
    edition (``lobby.created.edition``, absent = 1) is one this code no longer implements
    (docs/api.md "Rules editions"), so a difference would be the rules', not the game's."""
    created = case.events[0].data if case.events else {}
    if not case.events or case.events[0].type != "lobby.created":
        return None  # the adjudication itself reports the missing creation
    game, edition = created.get("game"), created.get("edition", 1)
    if not isinstance(game, str) or not isinstance(edition, int) or game not in EDITIONS:
        return None  # a forged creation or an unknown game: the fold reports it
    if implements(game, edition):
        return None
    return (
        f"the game was played under rules edition {edition} of {game}, which this server no "
        "longer implements: it cannot be re-adjudicated"
    )


def _adjudicate(
    case: Case, table: Table | None, group: list[StoredEvent], seed: bytes, before: Any = None
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
        if [e.type for e in group] == ["clock.set"]:  # a clock started with the set-up
            return clocking.check_setup(table, group, before)
        if not game_events:  # lobby.joined by a player (seat on the event), lobby.left
            ok = all(e.type in ("lobby.joined", "lobby.left") for e in platform)
            return None if ok else ("adjudication.orphan", "a platform event without a command")
        if table.state is not None or platform:
            return "adjudication.orphan", "game events that no command produced"
        expected = _opening(case, table, seed, first.version)
        return _compare(expected, game_events)
    command = case.commands.get(first.command_id)
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
    body = command.body.get("command") if isinstance(command.body, dict) else None
    if command.type == clocking.EXPIRY or command.type in clocking.PRESENCE:
        return clocking.check_clock_command(table, command, None, group, seed, before)
    clocked = table.clock is not None
    allowed = {"seed.revealed", "clock.set", "clock.returned", "clock.bot"} if clocked else set()
    extra = [e for e in platform if e.type not in allowed | {"seed.revealed"} | ENDINGS]
    if extra:
        return "adjudication.orphan", f"{extra[0].type} appended with a game command"
    decoded = referee.decode_command(rules, body or {})
    if command.seat is None or table.state is None:
        return "adjudication.seat", "a game command without a seat, or before the game"
    if first.type == "clock.bot":
        return clocking.check_clock_command(table, command, decoded, group, seed, before)
    # A resignation or an abort is decided here too (``domain.platform.endings``): a
    # game.resigned no seat sent, or sent by another seat, differs from what the rules produce.
    produced = referee.decide(table, command.seat, decoded, Rng(seed, first.version))
    if clocked:
        return clocking.check_move(table, command.seat, produced, group, before)
    decided = [e for e in group if not is_platform(e.type) or e.type in ENDINGS]
    return _compare([msgspec.to_builtins(e) for e in produced], decided)


def _opening(case: Case, table: Table, seed: bytes, version: int) -> list[Any]:
    """The set-up events the rules produce for this game (from ``lobby.created``)."""
    rules = table.rules
    rng = Rng(seed, version)
    raw_position = case.events[0].data.get("position")
    if raw_position is not None:
        events = rules.start_from_position(rules.decode_position(raw_position), rng)
    else:
        events = rules.start(rules.decode_options(table.options), table.seats, rng)
    return [msgspec.to_builtins(e) for e in events]


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
        if want.get("type") != have.type or canon(want) != canon(have.data):
            return (
                "adjudication.mismatch",
                f"event {have.version} ({have.type}) is not what the rules produce "
                f"(event {i + 1} of this decision)",
            )
    return None
