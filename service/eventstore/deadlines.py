"""Turn clocks' deadlines in PostgreSQL (``migrations/0009_deadlines.sql``): one row per game
with a running clock, written by a trigger on each ``clock.set`` event. An instance claims the
due rows for a lease (``FOR UPDATE SKIP LOCKED``: two instances never claim one row at once),
fires them (an append with a compare-and-set on the game's version, like any command:
``service.application.clocks``), and a dead instance's claims lapse when their lease ends."""

from __future__ import annotations

import uuid
from datetime import datetime

import msgspec

from service.eventstore.pooled import Pooled

_CLAIM = """
UPDATE deadlines AS d
   SET claimed_until = $2, claimed_by = $3
 WHERE d.game_id IN (
        SELECT game_id FROM deadlines
         WHERE due_at <= $1 AND (claimed_until IS NULL OR claimed_until <= $1)
         ORDER BY due_at
         LIMIT $4
           FOR UPDATE SKIP LOCKED)
RETURNING d.game_id::text AS game_id, d.due_at, d.version
"""


class Claim(msgspec.Struct, frozen=True):
    """A game's deadline claimed by this instance until its lease ends."""

    game_id: str
    due_at: datetime
    version: int


class Deadlines(Pooled):
    """The ``deadlines`` table of the event store's database."""

    async def claim_deadlines(
        self, now: datetime, until: datetime, owner: str, limit: int
    ) -> list[Claim]:
        """Claim up to ``limit`` deadlines due at ``now`` that nobody holds, until ``until``."""
        rows = await self._pool.fetch(_CLAIM, now, until, owner, limit)
        claims = [Claim(r["game_id"], r["due_at"], r["version"]) for r in rows]
        return sorted(claims, key=lambda c: c.due_at)

    async def release_deadline(self, game_id: str, owner: str) -> None:
        """Give a claim back (a ``clock.set`` appended meanwhile already did)."""
        await self._pool.execute(
            "UPDATE deadlines SET claimed_until = NULL, claimed_by = NULL "
            "WHERE game_id = $1 AND claimed_by = $2",
            uuid.UUID(game_id),
            owner,
        )

    async def correct_deadline(self, game_id: str, version: int, due_at: datetime | None) -> None:
        """Set a game's deadline to what its table says at ``version`` (a row left behind by
        anything but a ``clock.set``: never expected, repaired rather than fired forever)."""
        gid = uuid.UUID(game_id)
        if due_at is None:
            await self._pool.execute(
                "DELETE FROM deadlines WHERE game_id = $1 AND version <= $2", gid, version
            )
            return
        await self._pool.execute(
            "UPDATE deadlines SET due_at = $3, version = $2, claimed_until = NULL, "
            "claimed_by = NULL WHERE game_id = $1 AND version <= $2",
            gid,
            version,
            due_at,
        )

    async def pending_deadline(self, game_id: str) -> Claim | None:
        """A game's stored deadline, if it has one (tests, operators)."""
        r = await self._pool.fetchrow(
            "SELECT game_id::text AS game_id, due_at, version FROM deadlines WHERE game_id = $1",
            uuid.UUID(game_id),
        )
        return None if r is None else Claim(r["game_id"], r["due_at"], r["version"])
