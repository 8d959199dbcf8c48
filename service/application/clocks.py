"""Turn clocks in the service (docs/api.md, "Clocks"): the terms a game is created with, the
refusal of a move whose seat's time ran out, :class:`Clocks` (a player leaving its seat to the
bot or coming back; a due deadline fired) and :class:`ClockFirer`, which fires due deadlines —
an expiry, or the sitting-in bot's move — appended like any command: one compare-and-set
statement on the game's version and head (the store's ``append_command``, as a command's),
recorded in ``commands`` with the seat it concerns, hash-chained, audited.

Exactly once: every instance runs a firer; each claims due deadlines for a lease
(``EventLog.claim_deadlines``: ``FOR UPDATE SKIP LOCKED``), so one instance holds a deadline at a
time; the append's compare-and-set makes a second firing (after a lease lapsed on a slow
instance) or a firing that lost to a move append nothing. Deadlines live in PostgreSQL, so
they fire after a restart of every instance. Lateness: a due deadline is claimed within
``MANIFEST_CLOCK_TICK`` seconds (plus the fire's own appends), or, if the instance holding it
died, within ``MANIFEST_CLOCK_LEASE`` more.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import msgspec
import structlog
from prometheus_client import Counter, Histogram

from domain.kernel.folding import events_at_most
from domain.platform import clocks, referee
from domain.platform.clocks import ClockTerms, ClockTermsInvalid, check_terms
from domain.platform.table import Table
from ledger.answers import Receipt
from ledger.receipts import Signer
from ledger.ruling import Ruling, accepted_answer, chained, rule_events
from service.application.answers import MessageAnswer
from service.application.errors import Conflict, RefusedByRules
from service.application.seats import Seats
from service.application.tables import Tables
from service.application.writes import Writes
from service.eventstore.port import EventLog
from service.eventstore.records import AcceptedCommand

if TYPE_CHECKING:
    from service.application.play import Play

log = structlog.get_logger("manifest")

#: Tries to fire one game's deadline while moves keep landing first.
RETRIES = 8

CLOCK_FIRED = Counter(
    "manifest_clock_fired_total",
    "Turn-clock deadlines fired by this process, by what was appended (expiry, bot)",
    ["kind"],
)
CLOCK_LATENESS = Histogram(
    "manifest_clock_lateness_seconds",
    "How long after its deadline an expiry or a bot move was recorded",
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300),
)


class ClockLimits(msgspec.Struct, frozen=True):
    """The operator's bounds on a new game's clock, kept in its terms (so the audit re-derives
    the game by the terms it was created with, whatever the settings are later)."""

    #: ``MANIFEST_CLOCK_MAX_BANK``: the most seconds a Fischer bank holds.
    max_bank_seconds: int = 604_800
    #: ``MANIFEST_CLOCK_REST_AFTER``: expiries in a row with no player's move after which the
    #: game's clocks stop.
    rest_after: int = 50


def clock_terms(terms: ClockTerms | None, limits: ClockLimits | None = None) -> ClockTerms | None:
    """The clock of ``POST /v1/games`` (None, or ``kind: none``: no clock), with the
    operator's ``limits`` filled in where the client gave none (``max_bank_seconds`` of a
    Fischer clock, ``rest_after``); :class:`RefusedByRules` ``clock.invalid`` (422) for terms
    that make none (a value out of range, a field of another kind, a bank or a rest above the
    operator's). Their shape (known kinds and fields, integers) is the body's: else 400."""
    if terms is None or terms.kind == "none":
        if terms is not None:
            _check(terms)
        return None
    limits = limits or ClockLimits()
    filled = msgspec.structs.replace(
        terms,
        rest_after=terms.rest_after or limits.rest_after,
        max_bank_seconds=(terms.max_bank_seconds or limits.max_bank_seconds)
        if terms.kind == "fischer"
        else terms.max_bank_seconds,
    )
    _check(terms)
    _check(filled)
    if filled.rest_after > limits.rest_after:
        raise RefusedByRules(
            "clock.invalid", f"clock.rest_after is at most {limits.rest_after} here"
        )
    if filled.kind == "fischer" and filled.max_bank_seconds > limits.max_bank_seconds:
        raise RefusedByRules(
            "clock.invalid",
            f"a Fischer bank holds at most {limits.max_bank_seconds} seconds here",
        )
    return filled


def _check(terms: ClockTerms) -> None:
    try:
        check_terms(terms)
    except ClockTermsInvalid as error:
        raise RefusedByRules("clock.invalid", str(error)) from None


def clock_refusal(table: Table, seat: int, at: datetime) -> Conflict | None:
    """The :class:`Conflict` ``clock.expired`` (409) of a move recorded at ``at`` when its
    seat's time has run out: the expiry is appended instead (by whichever instance fires it)."""
    if table.status != "active" or not clocks.overdue(table.clock, seat, at):
        return None
    return Conflict(
        "clock.expired",
        f"seat {seat}'s time ran out; the expiry is being recorded",
        version=table.version,
    )


class PresenceBody(msgspec.Struct, forbid_unknown_fields=True):
    """``POST /v1/games/{id}/presence``: ``away`` true — the player leaves, the greedy bot
    sits in for the seat; false — the player is back."""

    away: bool


class Clocks:
    """The clocks' own decisions: a deadline fired (:meth:`fire`: an expiry, or the bot's move
    for a seat it sits in for, appended with the compare-and-set of every command) and a
    player's presence (:meth:`presence`)."""

    def __init__(
        self,
        store: EventLog,
        tables: Tables,
        seats: Seats,
        writes: Writes,
        play: Play,
        signer: Signer,
    ) -> None:
        self.store = store
        self.tables = tables
        self.seats = seats
        self.writes = writes
        self.play = play
        self.signer = signer

    async def fire(self, game_id: str, clock: Callable[[], datetime]) -> bool:
        """Fire the game's earliest deadline due at ``clock()``, if one still is: True if
        appended. A move (or another firing) appended first makes the compare-and-set append
        nothing; then the game is read again (and the time taken again: an expiry is never
        recorded before the move it lost to)."""
        for _ in range(RETRIES):
            head, table = await self.tables.current(game_id)
            now = clock()
            seats = clocks.due(table.clock, now) if table.status == "active" else []
            if not seats:
                row = await self.store.get_game(game_id)
                if row is not None and row.head != head:  # this process's table is behind
                    self.tables.forget(game_id)
                    continue
                await self.store.correct_deadline(
                    game_id, table.version, clocks.next_deadline(table.clock)
                )
                return False
            seat = seats[0]
            seed = await self.tables.seed(game_id)
            with events_at_most(self.play.max_events):  # an expiry's cost is bounded too
                fired = referee.fire(table, seat, now, seed)
            ruling = rule_events(table, seat, fired.events, seed)
            if not await self._act_for(head, table, seat, ruling, fired.command, now):
                continue  # the game moved first: read it again
            deadline = table.clock.seats[seat].deadline if table.clock is not None else None
            kind = "expiry" if fired.command.get("type") == "clock.expired" else "bot"
            CLOCK_FIRED.labels(kind=kind).inc()
            if deadline is not None:
                CLOCK_LATENESS.observe(max(0.0, (now - deadline).total_seconds()))
            log.info("clock fired", game=game_id, seat=seat, kind=fired.command.get("type"))
            return True
        return False

    async def _act_for(
        self,
        head: bytes,
        table: Table,
        seat: int,
        ruling: Ruling,
        command: dict[str, Any],
        at: datetime,
    ) -> bool:
        """Append a decision taken for ``seat`` without its token (an expiry, or the bot's
        move for a seat it sits in for) on the game at (``table.version``, ``head``), recorded
        at ``at`` as ``command``, with the compare-and-set statement of every command
        (``EventLog.append_command``). False (nothing appended, the cached table dropped)
        when the game moved first: decide again on the fresh state."""
        new = ruling.table
        keys = self.tables.known_keys(table.game_id)
        command_id = str(uuid.uuid4())
        stored = chained(ruling, head, seat, command_id, at)
        appended = await self.store.append_command(
            AcceptedCommand(
                game_id=table.game_id,
                version=table.version,
                head=head,
                stored=stored,
                seat=seat,
                command_id=command_id,
                status=new.status if new.status != table.status else None,
                result=ruling.result,
                idempotency_key=None,
                command_type=str(command.get("type", ""))[:64],
                body={"command": command},
                received_at=at,
                response=accepted_answer(self.signer, new, seat, stored, keys),
            )
        )
        if not appended:
            self.tables.forget(table.game_id)
            return False
        self.tables.remember(new, stored[-1].hash)
        self.writes.project(new, ruling.snapshots)
        return True

    async def presence(self, game_id: str, token: str | None, body: PresenceBody) -> MessageAnswer:
        """A player leaving its seat to the bot, or coming back: ``clock.sat_in`` or
        ``clock.returned`` and the clocks, appended under the game's row lock and recorded
        like a command (``clock.leave`` / ``clock.return``). Asking for what already is
        appends nothing and answers the current version."""
        return await self.writes.run(
            game_id, lambda: self._presence(game_id, token, body.away), "write"
        )

    async def _presence(self, game_id: str, token: str | None, away: bool) -> MessageAnswer:
        seat = await self.seats.require_seat(game_id, token)
        snapshots: dict[int, bytes] = {}
        command_id = str(uuid.uuid4())
        async with self.store.lock(game_id) as locked:
            table = await self.tables.at_lock(locked)
            if table.clock is None:
                raise Conflict("clock.none", "this game has no turn clock")
            refusal = self.play.not_playing(table)
            if refusal is not None:
                raise refusal
            events = referee.presence(table, seat, away, datetime.now(UTC))
            first = table.version + 1
            if events:
                table = await self.writes.append(
                    locked, events, snapshots, seat=seat, command_id=command_id
                )
            head = locked.row.head.hex()
            response = MessageAnswer(
                version=table.version,
                head=head,
                receipt=Receipt(**self.signer.receipt(game_id, table.version, head)),
            )
            if events:
                kind = "clock.leave" if away else "clock.return"
                await locked.record_command(
                    command_id=command_id,
                    seat=seat,
                    idempotency_key=None,
                    type=kind,
                    body={"command": {"type": kind}},
                    outcome="accepted",
                    first_version=first,
                    last_version=table.version,
                    response=response,
                )
        if events:
            self.writes.project(table, snapshots)
        return response


class ClockFirer:
    """Fires the due deadlines of every clocked game, from one loop per instance."""

    def __init__(
        self,
        clocks: Clocks,
        *,
        tick: float = 1.0,
        lease: float = 30.0,
        batch: int = 32,
        clock: Callable[[], datetime] | None = None,
        owner: str | None = None,
    ) -> None:
        self.clocks = clocks
        self.tick = tick
        self.lease = timedelta(seconds=lease)
        self.batch = batch
        self.clock = clock or (lambda: datetime.now(UTC))
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        #: Deadlines fired (an expiry or a bot move appended) by this firer.
        self.fired = 0

    async def run(self, stop: asyncio.Event) -> None:
        """Claim and fire until ``stop``; a failure (PostgreSQL away) is logged and retried
        at the next tick — a claim it held lapses at its lease's end."""
        while not stop.is_set():
            try:
                busy = await self.fire_due()
            except Exception as error:  # a dependency failure must not end the loop
                log.warning("clock firing failed", error=repr(error))
                busy = False
            if busy:
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.tick)

    async def fire_due(self) -> bool:
        """Claim the due deadlines and fire them; True if any was claimed (there may be more:
        claim again without waiting)."""
        now = self.clock()
        store = self.clocks.store
        claims = await store.claim_deadlines(now, now + self.lease, self.owner, self.batch)
        for claim in claims:
            try:
                await self.fire(claim.game_id)
            except Exception as error:
                # Kept claimed: tried again when the lease lapses, not at every tick; the
                # other games of the claim still fire.
                log.exception("clock firing failed", game=claim.game_id, error=repr(error))
                continue
            await store.release_deadline(claim.game_id, self.owner)
        return bool(claims)

    async def fire(self, game_id: str) -> bool:
        """Fire the game's earliest due deadline, at this firer's time (:meth:`Clocks.fire`)."""
        fired = await self.clocks.fire(game_id, self.clock)
        if fired:
            self.fired += 1
        return fired
