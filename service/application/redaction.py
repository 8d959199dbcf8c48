"""What of a game's record a caller may read: its events (public forms, with what the caller
may read in the clear and the openings of it) and its recorded commands (a private message's
text, a refused or secret-bearing command's body, a recorded answer, hidden from everyone but
their seat while the game is live), and each event told as a sentence for its caller (built
from the caller's event view, :func:`domain.platform.sentences.tell`; docs/api.md
"Sentences"). Shared by the history's pages, exports and dispute files
(:mod:`service.application.history`, :mod:`service.application.disputes`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from domain.kernel import Viewer
from domain.kernel.messages import LANGUAGES, PLATFORM, Sentence, Template, catalogue, package_of
from domain.platform.sentences import tell
from domain.platform.table import Table
from domain.registry import AnyGame
from ledger.answers import EventDocument
from ledger.chain import format_at
from ledger.commitments import MESSAGE, Keys, shown, withholds
from ledger.records import CommandRecord, StoredEvent
from ledger.ruling import event_json
from service.application.answers import CommandDocument
from service.eventstore.port import EventLog


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


def told(
    doc: EventDocument,
    rules: AnyGame,
    event: StoredEvent,
    viewer: Viewer,
    seat: int | None,
    names: Sequence[str | None],
    lang: str,
) -> EventDocument:
    """``doc`` (``event`` as the caller reads it) with its sentence in ``lang``: the caller is
    ``viewer`` (an auditor once the game is over) holding ``seat``'s token (None: none)."""
    sentence = tell(rules, event.type, event.data, viewer, names, lang, seat)
    return msgspec.structs.replace(doc, sentence=sentence)


def templates_used(rules: AnyGame, types: Iterable[str]) -> dict[str, list[Template]]:
    """Per language, the templates of the event ``types`` (every variant) and the words they
    use (``<scope>.term.*``): what an export's reader needs to tell its events itself."""
    scopes = {f"{PLATFORM if '.' in t else rules.id}.{t}" for t in types}
    out: dict[str, list[Template]] = {}
    for lang in LANGUAGES:
        chosen: list[Template] = []
        for package in (package_of(rules.state_type.__module__), "domain.platform"):
            for template in catalogue(package, lang).templates:
                base = template.id.split("#")[0]
                if base in scopes or ".term." in template.id:
                    chosen.append(template)
        out[lang] = chosen
    return out


def told_event(
    table: Table,
    event: StoredEvent,
    seat: int | None,
    finished: bool,
    keys: Keys,
    viewer: Viewer,
    lang: str,
) -> EventDocument:
    """``event`` as ``seat`` reads it (:func:`event_for`), told in ``lang`` to ``viewer``, its
    seats called by ``table``'s names (:func:`told`)."""
    doc = event_for(table.rules, event, seat, finished, keys)
    return told(doc, table.rules, event, viewer, seat, table.names, lang)


async def sentence_at(
    store: EventLog, table: Table, n: int, viewer: Viewer, seat: int | None, lang: str
) -> Sentence:
    """Event ``n`` of ``table``'s game told in ``lang`` to ``viewer`` (``seat``'s token)."""
    (e,) = await store.read_history(table.game_id, after=n - 1, limit=1, through=n)
    return tell(table.rules, e.type, e.data, viewer, table.names, lang, seat)
