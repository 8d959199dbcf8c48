"""What of a game's record a caller may read: its events (public forms, with what the caller
may read in the clear and the openings of it) and its recorded commands (a private message's
text, a refused or secret-bearing command's body, a recorded answer, hidden from everyone but
their seat while the game is live). Shared by the history's pages, exports and dispute files
(:mod:`service.application.history`, :mod:`service.application.disputes`)."""

from __future__ import annotations

import msgspec

from domain.registry import AnyGame
from service.application.answers import CommandDocument, EventDocument
from service.application.ruling import event_json
from service.audit.commitments import MESSAGE, Keys, shown, withholds
from service.eventstore.chain import format_at
from service.eventstore.records import CommandRecord, StoredEvent


def key_of(seat: int | None) -> str:
    """The document key of ``seat`` (None: a spectator)."""
    return "spectator" if seat is None else f"seat:{seat}"


def event_for(
    rules: AnyGame, event: StoredEvent, seat: int | None, finished: bool, keys: Keys
) -> EventDocument:
    """``event`` as ``seat`` (None: anyone) reads it."""
    return event_json(event, *shown(rules, event, seat, finished, keys))


def secret_commands(
    events: list[StoredEvent], rules: AnyGame | None, seat: int | None, finished: bool
) -> set[str]:
    """The commands (ids) that produced an event with a hidden value ``seat`` may not read."""
    if rules is None:
        return set()
    return {
        e.command_id
        for e in events
        if e.command_id is not None and withholds(e, rules, seat, finished)
    }


def redacted_command(
    c: CommandRecord,
    seat: int | None,
    finished: bool,
    events: dict[str, StoredEvent],
    secret: set[str],
) -> CommandRecord:
    """A recorded command as ``seat`` may read it. A private message's text is what the
    caller reads in its event (its commitment, unless the caller was party to it); a refused
    command's body (or its stored prefix, hash and size), error code and detail are its seat's
    alone while the game is live (the code and detail may describe the seat's hand — Cargo
    Empire's ``rule.cards_not_in_hand`` —, the body may be a guess at it); so is the body of an
    accepted
    command whose events hold a value hidden from ``seat`` (in ``secret``: the body may name
    it, as Curious Cargo's ``keep_card`` names the card kept; what is public of it is in its
    events)."""
    if c.seat == seat:
        return c
    # The recorded answer holds the events as the sender read them (its own secrets): never.
    c = msgspec.structs.replace(c, response=None)
    # (only an accepted one is a message: a refusal naming the type is a refusal like any other)
    if (
        c.type == MESSAGE
        and c.outcome == "accepted"
        and isinstance(c.body, dict)
        and c.body.get("to") != "all"
    ):
        event = events.get(c.id)
        text = None if event is None else event.data.get("text")
        return msgspec.structs.replace(c, body={**c.body, "text": text})
    if (c.outcome != "accepted" or c.id in secret) and not finished:
        # a refused body's prefix, hash and size go with it (a guess at a hand is a small
        # space: its hash would name it); whether it was cut stays, and that it was refused
        return msgspec.structs.replace(
            c,
            body=None,
            error_code=None,
            error_detail=None,
            body_prefix=None,
            body_sha256=None,
            body_size=None,
        )
    return c


def command_json(c: CommandRecord) -> CommandDocument:
    """A recorded command as the API writes it."""
    return CommandDocument(
        id=c.id,
        seat=c.seat,
        type=c.type,
        body=c.body,
        received_at=format_at(c.received_at),
        idempotency_key=c.idempotency_key,
        outcome=c.outcome,
        error_code=c.error_code,
        error_detail=c.error_detail,
        first_version=c.first_version,
        last_version=c.last_version,
        body_sha256=c.body_sha256,
        body_size=c.body_size,
        body_truncated=c.body_truncated,
        body_prefix=c.body_prefix,
    )
