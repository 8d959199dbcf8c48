"""Turn clocks in the service (docs/api.md, "Clocks"): the terms a game is created with, the
refusal of a move whose seat's time ran out, and :class:`ClockFirer`, which fires due
deadlines — an expiry, or the sitting-in bot's move — appended like any command: one
compare-and-set statement on the game's version and head (``service.eventstore.optimistic``),
recorded in ``commands`` with the seat it concerns, hash-chained, audited.

Exactly once: every instance runs a firer; each claims due deadlines for a lease
(``service.eventstore.deadlines``: ``FOR UPDATE SKIP LOCKED``), so one instance holds a
deadline at a time; the append's compare-and-set makes a second firing (after a lease lapsed on
a slow instance) or a firing that lost to a move append nothing. Deadlines live in PostgreSQL,
so they fire after a restart of every instance. Lateness: a due deadline is claimed within
``MANIFEST_CLOCK_TICK`` seconds (plus the fire's own appends), or, if the instance holding it
died, within ``MANIFEST_CLOCK_LEASE`` more.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import socket
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import msgspec
import structlog
from prometheus_client import Counter, Histogram

from domain.platform import clocks, referee
from domain.platform.clocks import ClockTerms, ClockTermsInvalid, check_terms
from domain.platform.table import Table
from service.application.answers import MessageAnswer, Receipt
from service.application.ruling import rule_events
from service.eventstore import deadlines
from service.eventstore.optimistic import append_command
from service.eventstore.records import NewEvent
from service.problems import Problem
from service.settings import Settings

if TYPE_CHECKING:
    from service.application.play import Play

log = structlog.get_logger("manifest")

_RETRIES = 8

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


def clock_terms(terms: ClockTerms | None) -> ClockTerms | None:
    """The clock of ``POST /v1/games`` (None, or ``kind: none``: no clock); 422
    ``clock.invalid`` for terms that make none (a value out of range, a field of another
    kind). Their shape (known kinds and fields, integers) is the body's: else 400."""
    if terms is None:
        return None
    try:
        check_terms(terms)
    except ClockTermsInvalid as error:
        raise Problem(422, "clock.invalid", str(error)) from None
    return None if terms.kind == "none" else terms


def clock_problem(table: Table, seat: int, at: datetime) -> Problem | None:
    """409 ``clock.expired`` for a move recorded at ``at`` when its seat's time has run out:
    the expiry is appended instead (by whichever instance fires it)."""
    if table.status != "active" or not clocks.overdue(table.clock, seat, at):
        return None
    return Problem(
        409,
        "clock.expired",
        f"seat {seat}'s time ran out; the expiry is being recorded",
        version=table.version,
    )


class ClockFirer:
    """Fires the due deadlines of every clocked game, from one loop per instance."""

    def __init__(
        self,
        games: Play,
        *,
        tick: float = 1.0,
        lease: float = 30.0,
        batch: int = 32,
        clock: Callable[[], datetime] | None = None,
        owner: str | None = None,
    ) -> None:
        self.games = games
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
        pool = self.games.store.pool
        claims = await deadlines.claim(pool, now, now + self.lease, self.owner, self.batch)
        for claim in claims:
            try:
                await self.fire(claim.game_id)
            except Exception as error:
                # Kept claimed: tried again when the lease lapses, not at every tick; the
                # other games of the claim still fire.
                log.exception("clock firing failed", game=claim.game_id, error=repr(error))
                continue
            await deadlines.release(pool, claim.game_id, self.owner)
        return bool(claims)

    async def fire(self, game_id: str) -> bool:
        """Fire the game's earliest due deadline, if one is still due: True if appended. A
        move (or another firing) appended first makes the compare-and-set append nothing;
        then the game is read again."""
        games = self.games
        for _ in range(_RETRIES):
            head, table = await games.current(game_id)
            now = self.clock()
            seats = clocks.due(table.clock, now) if table.status == "active" else []
            if not seats:
                row = await games.store.get_game(game_id)
                if row is not None and row.head != head:  # this process's table is behind
                    games._tables.pop(game_id)
                    continue
                await deadlines.correct(
                    games.store.pool, game_id, table.version, clocks.next_deadline(table.clock)
                )
                return False
            seat = seats[0]
            keys = await games.keys(game_id)
            fired = referee.fire(table, seat, now, keys.seed)
            ruling = rule_events(table, seat, fired.events, keys.seed)
            new = ruling.table
            appended = await append_command(
                games.store.pool,
                game_id=game_id,
                version=table.version,
                head=head,
                events=[NewEvent(p.type, p.data, p.public) for p in ruling.pending],
                seat=seat,
                command_id=str(uuid.uuid4()),
                at=now,
                status=new.status if new.status != table.status else None,
                result=ruling.result,
                idempotency_key=None,
                command_type=str(fired.command.get("type", ""))[:64],
                body={"command": fired.command},
                received_at=now,
                respond=functools.partial(games._accepted, new, seat),
                batch=games.store.appends,
            )
            if appended is None:  # the game moved first: read it again
                games._tables.pop(game_id)
                continue
            stored, _ = appended
            deadline = table.clock.seats[seat].deadline if table.clock is not None else None
            kind = "expiry" if fired.command.get("type") == "clock.expired" else "bot"
            CLOCK_FIRED.labels(kind=kind).inc()
            if deadline is not None:
                CLOCK_LATENESS.observe(max(0.0, (now - deadline).total_seconds()))
            games._remember(new, stored[-1].hash)
            await games._project(new, ruling.snapshots)
            self.fired += 1
            log.info("clock fired", game=game_id, seat=seat, kind=fired.command.get("type"))
            return True
        return False


def clock_firer(games: Play, settings: Settings) -> ClockFirer:
    """The instance's firer, as configured (``MANIFEST_CLOCK_*``)."""
    return ClockFirer(
        games, tick=settings.clock_tick, lease=settings.clock_lease, batch=settings.clock_batch
    )


class PresenceBody(msgspec.Struct, forbid_unknown_fields=True):
    """``POST /v1/games/{id}/presence``: ``away`` true — the player leaves, the greedy bot
    sits in for the seat; false — the player is back."""

    away: bool


async def presence(
    games: Play, game_id: str, token: str | None, body: PresenceBody
) -> MessageAnswer:
    """A player leaving its seat to the bot, or coming back: ``clock.sat_in`` or
    ``clock.returned`` and the clocks, appended under the game's row lock and recorded like a
    command (``clock.leave`` / ``clock.return``). Asking for what already is appends
    nothing and answers the current version."""
    return await games._write(game_id, lambda: _presence(games, game_id, token, body.away), "write")


async def _presence(games: Play, game_id: str, token: str | None, away: bool) -> MessageAnswer:
    seat = await games.require_seat(game_id, token)
    snapshots: dict[int, bytes] = {}
    async with games.store.lock(game_id) as locked:
        table = await games._table_at(locked)
        if table.clock is None:
            raise Problem(409, "clock.none", "this game has no turn clock")
        problem = games._not_playing(table)
        if problem is not None:
            raise problem
        events = referee.presence(table, seat, away, datetime.now(UTC))
        if events:
            command_id = str(uuid.uuid4())
            first = table.version + 1
            table = await games._append(locked, events, snapshots, seat=seat, command_id=command_id)
        head = locked.row.head.hex()
        response = MessageAnswer(
            version=table.version,
            head=head,
            receipt=Receipt(**games.signer.receipt(game_id, table.version, head)),
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
        await games._project(table, snapshots)
    return response
