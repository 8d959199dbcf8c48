"""Refused commands, bounded — in number, in size and in bytes per minute.

**Number.** Each seat of a game has up to ``MANIFEST_REJECTED_CAP`` refusals recorded in
``commands`` (for dispute files); past the cap a refusal is only counted, in
``rejections_unrecorded`` (shown by ``GET /v1/games/{id}/audit`` as ``rejected.unrecorded``).

**Size.** A refusal keeps the SHA-256 and length of its whole body's canonical JSON
(:func:`canonical_body`: keys sorted, no spaces) and the body itself only when that is at most
``MANIFEST_REFUSAL_BODY_PREFIX`` bytes; a longer body is kept as its first bytes
(``body_prefix``, cut at a character boundary) — :class:`Bounded`. Anyone holding the body can
check it against the hash; an ``Idempotency-Key`` sent again is compared by it.

**Bytes per minute.** :class:`Budget`: a refusal is stored only while its client address has
stored fewer than ``MANIFEST_REFUSALS_PER_CLIENT`` refusals in the last minute and the process
fewer than ``MANIFEST_REFUSAL_BYTES`` bytes (token buckets, as the request quotas of
:mod:`service.http.limits`, counted in each process's memory). Past a budget a refusal is
answered as usual and counted (``rejections_unrecorded.over_budget``, within ``count``) — in
memory first, added to the table at most once a second per process (:class:`Tally`), so a flood
of refusals costs no write each (an ``UPDATE`` per refusal would grow the counters' table by a
dead row version each). A process that stops loses at most its last second of counts.

A refusal not recorded (over the cap or a budget) is answered as usual; its
``Idempotency-Key``, not being recorded, does not replay: sent again, the command is decided
afresh.

Concurrent refusals of one seat may each see the count just under the cap, so a seat can end a
few records past it (at most the number of its requests in flight) — a bound, not a quota.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
import uuid
from collections.abc import Callable
from typing import Any

import msgspec

from infra.lru import LRU
from service.eventstore.pooled import Pooled

#: What a stored refusal costs beside its body, answer and detail, for the bytes budget: the
#: row's header and other columns, its three index entries and the pages' free space, so that
#: the budget counts about the bytes the tables grow by (measured: a stored refusal of a
#: 64 KB body cut to 1,024 bytes grows them by ~2.4 KB; docs/operations.md).
ROW_BYTES = 1100

#: Client addresses whose refusals are counted at once in one process (least recent dropped).
MAX_CLIENTS = 100_000

_RECORDED = """
SELECT count(*) FROM (
    SELECT 1 FROM commands
     WHERE game_id = $1 AND seat = $2 AND outcome <> 'accepted'
     LIMIT $3
) AS capped
"""

_COUNT = """
INSERT INTO rejections_unrecorded (game_id, seat, count, over_budget) VALUES ($1, $2, 1, $3)
ON CONFLICT (game_id, seat) DO UPDATE
   SET count = rejections_unrecorded.count + 1,
       over_budget = rejections_unrecorded.over_budget + EXCLUDED.over_budget
"""


#: Characters of a refusal's error detail kept — in its record and in the answer, so that a
#: replayed ``Idempotency-Key`` answers the same. A detail may quote what was sent (msgspec's
#: ``Invalid value '<type>'``): uncut, a 60 KB ``type`` was stored twice (the detail and the
#: recorded answer) past the body's prefix.
MAX_DETAIL = 500


def short_detail(detail: str) -> str:
    """A refusal's ``detail`` cut to :data:`MAX_DETAIL` characters (``…`` marks a cut)."""
    if len(detail) <= MAX_DETAIL:
        return detail
    return detail[: MAX_DETAIL - 1] + "\u2026"


def canonical_body(body: Any) -> bytes:
    """A command body's canonical JSON: what a refusal's ``body_sha256`` and ``body_size`` are
    of (keys sorted, no spaces, UTF-8)."""
    return msgspec.json.encode(body, order="sorted")


class Bounded(msgspec.Struct, frozen=True):
    """A refused body as stored: whole (``body``) when its canonical JSON is at most the prefix
    length, else ``body`` None and its first bytes in ``prefix``; always its hash and size."""

    body: Any
    prefix: str | None
    sha256: bytes
    size: int

    @classmethod
    def of(cls, body: Any, keep: int) -> Bounded:
        raw = canonical_body(body)
        digest = hashlib.sha256(raw).digest()
        if len(raw) <= keep:
            return cls(body, None, digest, len(raw))
        # cut at a character boundary: a partial UTF-8 sequence at the end is dropped
        return cls(None, raw[:keep].decode("utf-8", "ignore"), digest, len(raw))

    def stored_bytes(self) -> int:
        """The bytes of the body as stored (whole, or its prefix)."""
        if self.body is None:
            return len((self.prefix or "").encode())
        return self.size


class Budget:
    """Refusals stored per minute: ``per_client`` per client address and ``bytes_per_minute``
    in all, per process (token buckets refilled continuously; ``0`` turns one off)."""

    def __init__(
        self,
        per_client: int,
        bytes_per_minute: int,
        clock: Callable[[], float] = time.monotonic,
        max_clients: int = MAX_CLIENTS,
    ) -> None:
        self.per_client = per_client
        self.bytes_per_minute = bytes_per_minute
        self.clock = clock
        self._clients: LRU[str, tuple[float, float]] = LRU(max_clients)
        self._bytes = (float(bytes_per_minute), clock())

    def take(self, client: str, cost: int) -> bool:
        """Spend one refusal of ``client`` and ``cost`` bytes; False (nothing spent) if either
        budget has not that much left."""
        now = self.clock()
        ours = None
        if self.per_client > 0:
            ours = _refill(self._clients.get(client), self.per_client, now)
            if ours < 1.0:
                return False
        every = None
        if self.bytes_per_minute > 0:
            every = _refill(self._bytes, self.bytes_per_minute, now)
            if every < cost:
                return False
        if ours is not None:
            self._clients.put(client, (ours - 1.0, now))
        if every is not None:
            self._bytes = (every - cost, now)
        return True


def _refill(bucket: tuple[float, float] | None, per_minute: int, now: float) -> float:
    if bucket is None:
        return float(per_minute)
    left, stamp = bucket
    return min(float(per_minute), left + (now - stamp) * per_minute / 60.0)


_COUNT_MANY = """
INSERT INTO rejections_unrecorded (game_id, seat, count, over_budget)
SELECT g, s, n, n FROM unnest($1::uuid[], $2::int[], $3::bigint[]) AS u(g, s, n)
ON CONFLICT (game_id, seat) DO UPDATE
   SET count = rejections_unrecorded.count + EXCLUDED.count,
       over_budget = rejections_unrecorded.over_budget + EXCLUDED.over_budget
"""


class Tally:
    """Refusals not stored because a budget was spent, counted in memory per (game, seat) and
    added to ``rejections_unrecorded`` by one statement ``every`` seconds at most (while there
    are any). At most ``max_keys`` (game, seat) pairs wait at once; a failed write is retried
    with the next."""

    def __init__(self, pool: Any, every: float = 1.0, max_keys: int = MAX_CLIENTS) -> None:
        self._pool = pool
        self.every = every
        self.max_keys = max_keys
        self.pending: dict[tuple[str, int], int] = {}
        #: refusals dropped uncounted: more (game, seat) pairs waiting than ``max_keys``
        self.lost = 0
        self._flushing: asyncio.Task[None] | None = None

    def add(self, game_id: str, seat: int) -> None:
        key = (game_id, seat)
        if key not in self.pending and len(self.pending) >= self.max_keys:
            self.lost += 1
            return
        self.pending[key] = self.pending.get(key, 0) + 1
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self) -> None:
        await asyncio.sleep(self.every)
        pending, self.pending = self.pending, {}
        if not pending:
            return
        try:
            await self._pool.execute(
                _COUNT_MANY,
                [uuid.UUID(g) for g, _ in pending],
                [s for _, s in pending],
                list(pending.values()),
            )
        except Exception:  # PostgreSQL down or slow: keep the counts for the next write
            for key, n in pending.items():
                self.pending[key] = self.pending.get(key, 0) + n
        # counts added while this write was under way found this task running and started
        # none: write them too, or they would wait for the next refusal over a budget
        if self.pending:
            self._flushing = asyncio.get_running_loop().create_task(self._flush())


class Unrecorded(msgspec.Struct, frozen=True):
    """Refusals counted but not recorded, by seat (as a string: a JSON object key): all of
    them (past the cap or a budget), and of those the ones over a budget."""

    by_seat: dict[str, int]
    over_budget: dict[str, int]


class Refusals(Pooled):
    """The refusals of the event store's games, past what :meth:`EventStore.record_rejection`
    records: the cap per seat, the counts of those not recorded (:class:`Tally` for those over
    a budget), and what a game's audit shows of them."""

    def __init__(self, pool: Any, **options: Any) -> None:
        super().__init__(pool, **options)
        #: refusals over a budget, counted in memory and written once a second at most
        self.tally = Tally(pool)

    async def admit_refusal(self, game_id: str, seat: int, cap: int) -> bool:
        """True if this refusal is to be recorded (the seat has fewer than ``cap`` recorded);
        else it is counted (and False)."""
        gid = uuid.UUID(game_id)
        if await self._pool.fetchval(_RECORDED, gid, seat, cap) < cap:
            return True
        await self._pool.execute(_COUNT, gid, seat, 0)
        return False

    def refusal_over_budget(self, game_id: str, seat: int) -> None:
        """Count a refusal not stored because a budget was spent (:class:`Tally`)."""
        self.tally.add(game_id, seat)

    async def unrecorded_refusals(self, game_id: str) -> Unrecorded:
        """The game's refusals counted but not recorded."""
        rows = await self._pool.fetch(
            "SELECT seat, count, over_budget FROM rejections_unrecorded WHERE game_id = $1 "
            "ORDER BY seat",
            uuid.UUID(game_id),
        )
        return Unrecorded(
            {str(r["seat"]): int(r["count"]) for r in rows},
            {str(r["seat"]): int(r["over_budget"]) for r in rows if r["over_budget"]},
        )
