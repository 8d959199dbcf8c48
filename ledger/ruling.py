"""The pure part of accepting a command: no I/O, no clock, no randomness but the game's seed.

:func:`rule` runs the game's ``decide`` and folds its events (adding ``seed.revealed`` when they
end the game); :func:`accepted_answer` is the recorded answer once the events are chained.
:class:`service.application.play.Play` wraps them in reads and the one-statement append;
``bench.move_work`` times them alone, which is what a move costs before any HTTP, PostgreSQL or
Redis work.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from domain.kernel import Rng, RuleError
from domain.kernel.folding import TooManyEvents, events_at_most
from domain.platform import referee
from domain.platform.events import (
    LobbyCreated,
    SeedRevealed,
    TableMessage,
    created_secrets,
    message_secrets,
)
from domain.platform.referee import with_clock
from domain.platform.table import Table, encode_table, fold_collecting, legal_document, table_result
from ledger.answers import EventDocument, Receipt, RecordedAnswer
from ledger.chain import canonical_uuid, chain_events, format_at, utc_micro
from ledger.commitments import Keys, public_of, shown
from ledger.receipts import Signer
from ledger.records import NewEvent, StoredEvent

_encoder = msgspec.json.Encoder()


class Pending(msgspec.Struct):
    """An event about to be appended at a known version (for folding before the append)."""

    version: int
    type: str
    data: Any
    #: The chained form when the event has hidden values (``ledger.commitments.public_of``).
    public: Any = None
    #: The acting seat and whether a command appended it (a move: ``Table.moved``), as the
    #: stored event will say.
    seat: int | None = None
    command_id: bool = False


class Ruling(msgspec.Struct):
    """An accepted command, before it is appended."""

    table: Table  # after the events
    pending: list[Pending]  # the events as they will be stored
    snapshots: dict[int, bytes]  # replay snapshots passed on the way
    result: Any  # the outcome's builtins when the events end the game, else None
    legal: msgspec.Raw  # the mover's legal commands now, encoded
    legal_document: bytes  # the mover's whole GET /legal document now (with the grammar)
    #: the table after the events, encoded before the append (what the projection stores;
    #: every view is built from it): a value that cannot be encoded is refused, not recorded
    table_json: bytes = b""


class Unencodable(RuleError):
    """The command's events, or the game after them, hold a value no JSON encoder writes (a
    number of more than 4,300 digits, from a forged or legacy stream): refused before the
    append (``command.unencodable``), so nothing is recorded that could not be served."""

    def __init__(self, error: Exception) -> None:
        super().__init__(
            "command.unencodable",
            f"the game after this command could not be stored or shown ({error})",
        )


def event_tag(event: msgspec.Struct) -> str:
    return str(event.__struct_config__.tag)


def _pending(table: Table, version: int, event: Any, keys: Keys) -> Pending:
    """A typed event as it will be stored at ``version``, with its public form."""
    type, data = event_tag(event), msgspec.to_builtins(event)
    if isinstance(event, TableMessage):
        secrets = message_secrets(event)
    elif "." in type:
        secrets = []
    else:
        secrets = table.rules.hidden(event)
    public = public_of(table.canonical, secrets, type, data, version, keys)
    return Pending(version, type, data, public)


def lobby_pending(version: int, event: Any, keys: Keys) -> Pending:
    """A platform event of a game's first append (``lobby.created``, ``lobby.joined``) as it
    will be stored, with its public form (a position's hidden values committed)."""
    type, data = event_tag(event), msgspec.to_builtins(event)
    if not isinstance(event, LobbyCreated):
        return Pending(version, type, data)
    public = public_of(event.canonical, created_secrets(event), type, data, version, keys)
    return Pending(version, type, data, public)


def fold_new(
    table: Table,
    events: list[Any],
    seed: bytes,
    message_key: bytes | None = None,
    seat: int | None = None,
) -> tuple[Table, list[Pending], dict[int, bytes]]:
    """The table after ``events`` (typed, appended after ``table.version``), the events as
    they will be stored (with their public forms) — with ``seed.revealed`` when they finish
    the game — and the replay snapshots folded on the way."""
    start = table.version + 1
    keys = Keys(seed, message_key)
    pending = [_pending(table, start + i, e, keys) for i, e in enumerate(events)]
    if seat is not None:  # a command's events
        pending = [msgspec.structs.replace(p, seat=seat, command_id=True) for p in pending]
    new, snapshots = fold_collecting(table, pending, table.game_id)
    if new.status == "finished" and table.status != "finished":
        # Commit-reveal: the seed is published with the events that end the game.
        reveal = SeedRevealed(seed.hex())
        pending.append(
            Pending(start + len(pending), event_tag(reveal), msgspec.to_builtins(reveal))
        )
        new, more = fold_collecting(new, pending[-1:], table.game_id)
        snapshots.update(more)
    return new, pending, snapshots


def rule(
    table: Table,
    seat: int,
    command: Any,
    seed: bytes,
    at: datetime | None = None,
    max_events: int | None = None,
) -> Ruling:
    """Decide ``command`` of ``seat`` on an active ``table`` (raises the game's RuleError);
    in a game with a turn clock, at ``at`` (the time the events are recorded), with the clock
    events (``domain.platform.referee.with_clock``). A decision of more than ``max_events``
    game events (``MANIFEST_MAX_EVENTS_PER_COMMAND``) is refused,
    ``command.too_many_events``, stopped at the first event past the cap
    (``domain.kernel.folding.events_at_most``): its cost is bounded as well. Every command,
    a resignation or an abort too, is decided by ``domain.platform.referee.decide``."""
    with events_at_most(max_events):
        events = referee.decide(table, seat, command, Rng(seed, table.version + 1))
    if max_events is not None and len(events) > max_events:  # a decision without a Run
        raise TooManyEvents(max_events)
    if table.clock is not None:
        if at is None:
            raise ValueError("a move in a game with a clock is decided at a time")
        events = with_clock(table, seat, events, at)
    return rule_events(table, seat, events, seed)


def rule_events(table: Table, seat: int, events: list[Any], seed: bytes) -> Ruling:
    """The ruling that appends ``events`` (typed) for ``seat`` (a command's, or a clock's
    decision: ``service.application.clocks``)."""
    new, pending, snapshots = fold_new(table, events, seed, seat=seat)
    outcome = table_result(new) if new.status == "finished" else None
    document = legal_document(new, seat)
    try:  # everything the append records or the projection stores, encoded before the append
        encoded = encode_table(new)
        result = None if outcome is None else msgspec.to_builtins(outcome)
        legal = _encoder.encode(document.commands)
        return Ruling(
            table=new,
            pending=pending,
            snapshots=snapshots,
            result=result,
            legal=msgspec.Raw(legal),
            legal_document=_encoder.encode(document),
            table_json=encoded,
        )
    except (ValueError, OverflowError) as error:  # msgspec: an int past 4,300 digits
        raise Unencodable(error) from None


def chained(
    ruling: Ruling, head: bytes, seat: int, command_id: str, at: datetime
) -> list[StoredEvent]:
    """The ruling's events as they will be stored: recorded at ``at`` (to the microsecond,
    UTC) and chained after ``head``, the hash of the event before the first."""
    events = [NewEvent(p.type, p.data, p.public) for p in ruling.pending]
    version = ruling.pending[0].version - 1
    game_id = ruling.table.game_id
    try:  # the events' canonical bytes, hashed (and so encoded) before the append
        return chain_events(game_id, version, head, events, seat, command_id, utc_micro(at))
    except (ValueError, OverflowError) as error:  # an event value no encoder writes
        raise Unencodable(error) from None


def legal_bytes(ruling: Ruling) -> bytes:
    """The mover's ``GET /legal`` document after the ruling, as the projection stores it."""
    return ruling.legal_document


def event_json(
    event: StoredEvent, data: Any, openings: list[dict[str, Any]] | None = None
) -> EventDocument:
    """An event as a caller reads it: ``data`` as the caller may read it (the public form,
    with what the caller may read in the clear), and the ``openings`` (path and salt) of what
    is in the clear, from which the caller recomputes the public form the hash covers."""
    return EventDocument(
        version=event.version,
        type=event.type,
        seat=event.seat,
        at=format_at(event.recorded_at),  # the hashed spelling (isoformat drops a .000000)
        data=data,
        openings=openings or [],
        hash=event.hash.hex(),
        prev_hash=event.prev_hash.hex(),
        command=None if event.command_id is None else canonical_uuid(event.command_id),
    )


def shown_json(
    table: Table, event: StoredEvent, seat: int | None, keys: Keys | None
) -> EventDocument:
    """``event_json`` of ``event`` as ``seat`` (None: anyone) may read it in ``table``'s game
    now."""
    data, openings = shown(table.rules, event, seat, table.status == "finished", keys)
    return event_json(event, data, openings)


def accepted_answer(
    signer: Signer, table: Table, seat: int, stored: list[StoredEvent], keys: Keys | None = None
) -> RecordedAnswer:
    """The recorded answer to an accepted command: its events as the seat may see them, the
    new head and its receipt."""
    head = stored[-1].hash.hex()
    return RecordedAnswer(
        version=table.version,
        events=[shown_json(table, e, seat, keys) for e in stored],
        head=head,
        receipt=Receipt(**signer.receipt(table.game_id, table.version, head)),
    )
