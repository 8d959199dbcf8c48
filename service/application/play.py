"""Play: a seat's command, decided on the latest state and appended with one compare-and-set
statement (:mod:`service.eventstore.optimistic`), refused commands recorded (bounded), and a
repeated ``Idempotency-Key`` answered with the first answer (see
:mod:`service.application.gameplay` for a command's whole life)."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import msgspec

from domain.kernel import CommandError, RuleError
from domain.platform import referee
from domain.platform.table import Table, legal_document, table_to_act
from ledger.answers import CommandAnswer, RecordedAnswer
from ledger.receipts import Signer
from ledger.records import CommandRecord
from ledger.ruling import accepted_answer, chained, legal_bytes, rule
from service.application.bodies import CommandBody
from service.application.clocks import clock_refusal
from service.application.errors import ApplicationError, Conflict, RefusedByRules, Repeated
from service.application.seats import Seats
from service.application.tables import Tables
from service.application.writes import Writes
from service.eventstore import rejections
from service.eventstore.port import EventLog
from service.eventstore.records import AcceptedCommand, DuplicateCommand
from service.observability import COMMANDS, REFUSALS_UNSTORED

#: Decisions of one command before it is refused as ``version.contention`` (the game kept
#: moving under it: other writers, other instances).
RETRIES = 8
#: ``MANIFEST_MAX_EVENTS_PER_COMMAND``'s default: the most game events one command may cause.
#: The most any game's commands cause in play is 9 (an Empire Builder turn ending with event
#: cards), 20 from a position (6 seats losing 3 turns each); a command past it is refused
#: before the append (``command.too_many_events``), its decision stopped at the cap. Measured
#: (2026-12-02, a shared 2-core machine, best of 5): an Empire Builder turn end of 199 events
#: is decided, folded, committed and encoded in 1.7 ms (11 ms cold), the refusal at the 201st
#: in 0.25 ms — within any request's budget, on the event loop — where the uncapped
#: 750,000 took 19 s.
MAX_EVENTS_PER_COMMAND = 200


class _Attempt(msgspec.Struct):
    """A command being decided: what was sent, by whom, under which key."""

    game_id: str
    seat: int
    body: CommandBody
    key: str | None
    command_id: str
    received_at: datetime
    #: the client address (its refusals' storage budget; None: an in-process caller — a test,
    #: a benchmark, the CLI — whose refusals no budget limits)
    client: str | None = None


#: What deciding a command on a state came to: the answer, the refusal to raise, or
#: :data:`STALE` — the state decided on is not the stored one any more: decide again.
Outcome = CommandAnswer | ApplicationError | None
STALE: Outcome = None


def _hints(
    recorded: RecordedAnswer, table: Table, seat: int, legal: msgspec.Raw | None = None
) -> CommandAnswer:
    """The recorded answer and what it adds so a client need not ask: who is to act now, and
    the seat's own legal commands (empty unless it is still to act; ``legal``: already
    encoded, else encoded here once)."""
    if legal is None:
        legal = msgspec.Raw(msgspec.json.encode(legal_document(table, seat).commands))
    return recorded.answer(table_to_act(table), legal)


class Play:
    """Commands: decided, appended, refused (recorded within bounds) or answered again."""

    def __init__(
        self,
        store: EventLog,
        tables: Tables,
        seats: Seats,
        writes: Writes,
        signer: Signer,
        *,
        document_of: Callable[[ApplicationError], dict[str, Any]],
        rejected_cap: int = 1000,
        refusal_body_prefix: int = 1024,
        refusal_budget: rejections.Budget | None = None,
        max_events: int = MAX_EVENTS_PER_COMMAND,
    ) -> None:
        self.store = store
        #: The most game events one command may cause (``MANIFEST_MAX_EVENTS_PER_COMMAND``).
        self.max_events = max_events
        self.tables = tables
        self.seats = seats
        self.writes = writes
        self.signer = signer
        #: The answer a refusal gets, as a refused command is recorded with it (and a resent
        #: Idempotency-Key answered from that record): the HTTP edge's problem document, handed
        #: over by the composition root (:mod:`service.bootstrap`).
        self.document_of = document_of
        #: Refused commands recorded per seat per game (``MANIFEST_REJECTED_CAP``); more: counted.
        self.rejected_cap = rejected_cap
        #: Bytes of a refused body kept whole or as a prefix (``MANIFEST_REFUSAL_BODY_PREFIX``).
        self.refusal_body_prefix = refusal_body_prefix
        #: Refusals stored per minute per client address and bytes per minute in all
        #: (``MANIFEST_REFUSALS_PER_CLIENT``, ``MANIFEST_REFUSAL_BYTES``).
        self.refusal_budget = refusal_budget or rejections.Budget(60, 262144)

    async def command(
        self,
        game_id: str,
        token: str | None,
        body: CommandBody,
        key: str | None,
        client: str | None = None,
    ) -> CommandAnswer:
        """Decide on the latest known state and append with one compare-and-set statement
        (:mod:`service.eventstore.optimistic`); if the game moved meanwhile, re-read and decide
        again. ``client``: the sender's address, whose refusals are stored within a budget."""
        kind = "command" if key is not None else "write"  # without a key: nothing to resend with
        return await self.writes.run(
            game_id, lambda: self._command(game_id, token, body, key, client), kind
        )

    async def _command(
        self,
        game_id: str,
        token: str | None,
        body: CommandBody,
        key: str | None,
        client: str | None = None,
    ) -> CommandAnswer:
        seat = await self.seats.require_seat(game_id, token)
        if key is not None:
            prior = await self.store.find_command(game_id, seat, key)
            if prior is not None:
                return await self._answer_again(prior, seat, body)
        attempt = _Attempt(
            game_id=game_id,
            seat=seat,
            body=body,
            key=key,
            command_id=str(uuid.uuid4()),
            received_at=datetime.now(UTC),
            client=client,
        )
        game, outcome = "?", STALE
        for _ in range(RETRIES):
            head, table = await self.tables.current(game_id)
            game = table.game
            outcome = await self._decide_and_append(attempt, head, table)
            if outcome is not None:  # not STALE
                break
            self.tables.forget(game_id)
        if outcome is None:  # STALE every time
            outcome = self.writes.faults.contention(RETRIES)
        if isinstance(outcome, ApplicationError):
            COMMANDS.labels(game=game, outcome=outcome.code).inc()
            raise outcome
        COMMANDS.labels(game=game, outcome="accepted").inc()
        return outcome

    async def _still(self, game_id: str, head: bytes) -> bool:
        """Before refusing a command on a cached state: whether the state is the stored one."""
        return (await self.tables.row(game_id)).head == head

    async def _decide_and_append(self, a: _Attempt, head: bytes, table: Table) -> Outcome:
        """The command decided on ``table`` at ``head`` and, accepted, chained, answered and
        signed (:mod:`ledger`), then appended by one call; refused, recorded."""
        rules = table.rules
        try:
            command = referee.decode_command(rules, a.body.command)
        except CommandError as error:
            return await self._refuse(a, RefusedByRules(error.code, error.message), "rejected")
        version = table.version
        if a.body.expected_version is not None and a.body.expected_version != version:
            if not await self._still(a.game_id, head):
                return STALE
            conflict = Conflict(
                "version.conflict",
                f"the game is at version {version}, not {a.body.expected_version}",
                version=version,
            )
            return await self._refuse(a, conflict, "conflict")
        at = datetime.now(UTC)  # the events' recorded time; a clock's moves are decided at it
        refusal: ApplicationError | None = self.not_playing(table) or clock_refusal(
            table, a.seat, at
        )
        if refusal is None:
            try:
                seed = await self.tables.seed(a.game_id)
                ruling = rule(table, a.seat, command, seed, at, self.max_events)
            except RuleError as error:
                refusal = RefusedByRules(error.code, error.message, **_details(error))
        if refusal is not None:
            if not await self._still(a.game_id, head):
                return STALE
            return await self._refuse(a, refusal, "rejected")
        new = ruling.table
        stored = chained(ruling, head, a.seat, a.command_id, at)
        keys = self.tables.known_keys(a.game_id)
        recorded = accepted_answer(self.signer, new, a.seat, stored, keys)
        accepted = AcceptedCommand(
            game_id=a.game_id,
            version=version,
            head=head,
            stored=stored,
            seat=a.seat,
            command_id=a.command_id,
            status=new.status if new.status != table.status else None,
            result=ruling.result,
            idempotency_key=a.key,
            command_type=str(a.body.command.get("type", ""))[:64],
            body=msgspec.to_builtins(a.body),
            received_at=a.received_at,
            response=recorded,
        )
        try:
            if not await self.store.append_command(accepted):
                return STALE
        except DuplicateCommand:
            return await self._replay_key(a)
        self.tables.remember(new, stored[-1].hash)
        known = {f"legal:{a.seat}": legal_bytes(ruling), "table": ruling.table_json}
        self.writes.project(new, ruling.snapshots, known, lazy=True)
        return _hints(recorded, new, a.seat, ruling.legal)

    async def _refuse(self, a: _Attempt, refusal: ApplicationError, outcome: str) -> Outcome:
        """Record a refused command; the ``refusal`` to raise, recorded with the answer its
        client gets (:attr:`document_of`) (or, if its Idempotency-Key was
        taken meanwhile, the answer that command got). Its body is kept whole up to
        ``refusal_body_prefix`` bytes, else as that prefix, with the SHA-256 of the whole. Over
        the client's or the process's storage budget, or past the seat's cap of recorded
        refusals, it is only counted (:mod:`service.eventstore.rejections`)."""
        refused = refusal.with_detail(rejections.short_detail(refusal.detail))
        bounded = rejections.Bounded.of(msgspec.to_builtins(a.body), self.refusal_body_prefix)
        response = self.document_of(refused)
        cost = (
            bounded.stored_bytes()
            + len(msgspec.json.encode(response))
            + len(refused.detail.encode())
            + rejections.ROW_BYTES
        )
        if a.client is not None and not self.refusal_budget.take(a.client, cost):
            self.store.refusal_over_budget(a.game_id, a.seat)
            REFUSALS_UNSTORED.labels("budget").inc()
            return refused
        if not await self.store.admit_refusal(a.game_id, a.seat, self.rejected_cap):
            REFUSALS_UNSTORED.labels("cap").inc()
            return refused
        try:
            await self.store.record_rejection(
                game_id=a.game_id,
                command_id=a.command_id,
                seat=a.seat,
                idempotency_key=a.key,
                type=str(a.body.command.get("type", ""))[:64],
                body=bounded.body,
                body_prefix=bounded.prefix,
                body_sha256=bounded.sha256,
                body_size=bounded.size,
                error_code=refused.code,
                error_detail=refused.detail,
                outcome=outcome,
                response=response,
                received_at=a.received_at,
            )
        except DuplicateCommand:
            return await self._replay_key(a)
        return refused

    async def _answer_again(
        self, prior: CommandRecord, seat: int, body: CommandBody
    ) -> CommandAnswer:
        """The first answer, whole: the recorded part, plus the hints (``to_act`` and the
        seat's ``legal``) recomputed at the answer's version — a pure function of the stream,
        so they are not stored with every command."""
        await self.store.settled()  # not a 200 for what is on the primary only
        answer = _replay(prior, seat, body)
        head = bytes.fromhex(answer.head)
        table = await self.tables.stored(prior.game_id, head, answer.version, False)
        return _hints(answer, table, seat)

    async def _replay_key(self, a: _Attempt) -> Outcome:
        if a.key is None:
            raise RuntimeError("only a command with an idempotency key is replayed")
        prior = await self.store.find_command(a.game_id, a.seat, a.key)
        if prior is None:  # the other insert rolled back: nothing to repeat
            return STALE
        try:
            return await self._answer_again(prior, a.seat, a.body)
        except ApplicationError as refused:  # the key's command was refused, or another one
            return refused

    def not_playing(self, table: Table) -> Conflict | None:
        """The conflict of acting in a game that is not being played (open or over)."""
        if table.status == "open":
            return Conflict("game.not_started", "the game has not started: seats are still open")
        if table.status == "finished":
            return Conflict("game.finished", "the game is over")
        return None


def _details(error: RuleError) -> dict[str, Any]:
    return {"rule": error.details} if error.details else {}


def _replay(prior: CommandRecord, seat: int, body: CommandBody) -> RecordedAnswer:
    """The recorded first answer to a command sent again with the same Idempotency-Key (for an
    accepted command, without the ``to_act``/``legal`` hints: see ``Play._answer_again``),
    decoded from the stored JSON (fields an older server did not record stay absent). A refusal
    stored with a hash (its body maybe cut to a prefix) is compared by the hash."""
    sent = msgspec.to_builtins(body)
    if prior.body_sha256 is not None:
        same = prior.body_sha256 == hashlib.sha256(rejections.canonical_body(sent)).hexdigest()
    else:
        same = prior.body == sent
    if prior.seat != seat or not same:
        raise RefusedByRules(
            "idempotency.key_reused",
            "this Idempotency-Key was used for a different command; use a new key",
        )
    response = prior.response or {}
    if prior.outcome != "accepted":
        raise Repeated(str(prior.error_code), str(prior.error_detail), response)
    return msgspec.convert(response, RecordedAnswer)
