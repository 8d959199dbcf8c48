"""Freshness: when each place a read can be answered from may answer it (issue 27; the same
rules in prose, with what each tier buys, in docs/scaling.md, "Freshness").

**The one rule: a read is never older than an acknowledged version.** A command is answered
only after its events are committed to PostgreSQL, so the game's stored state — ``games``'
(version, head) read when the request begins (:data:`Stored`) — is at least every version
acknowledged before the request. Every read answers at that stored state or a newer one.

The tiers a read of the current game (a viewer's document, a seat's legal commands) tries, in
order, and when each may answer (:mod:`service.application.documents` asks these functions):

1. :attr:`Tier.BUILT` — a view this process built or published itself
   (``projections.views.Views.built``, keyed by game, view and version): when this process's
   table of the game is the stored state, version *and* head (:func:`built_answers`; the head
   tells a rolled-back or another instance's version N from ours).
2. :attr:`Tier.PROJECTED` — a view stored in the projection (Redis, or in process without
   ``REDIS_URL``), which carries the version it was built at: when that version is the stored
   one or newer (:func:`projected_view`).
3. :attr:`Tier.TABLES` — this process's table cache (``Tables``, keyed by game, holding
   the head): a view is built from it when it is the stored state (:func:`table_answers`).
4. :attr:`Tier.PROJECTED_TABLE` — the projection's table: when the projection record says it
   is at the stored version or newer (:func:`projection_current`) and the table read is
   (:func:`projected_table_answers`).
5. Folding from PostgreSQL — the stored events up to the stored version: always may answer
   (it *is* the stored state), and is cached as tier 3 for the next read.

Writes have two rules of their own, kept where they are enforced:

- a command may be *decided* on this process's table at any version (``play.py``): its append
  compares and sets the head (``service.eventstore.optimistic``), so a stale table costs a
  retry on the stored state, never an event decided on an older one;
- a *refusal* (409, 422) decided on a cached table is answered only once PostgreSQL's head is
  the cached one (``play.py``'s ``_still``): else it would refuse on a state that is gone.

Reads that need no particular version (the rules of a game, to redact its events) may use any
table of it, from any tier.

:data:`TIERS` names the tiers in service; each ``*_answers`` function says no for a tier left
out of it, so that the A/B of docs/scaling.md (each tier removed in turn) is a one-line change
here and not a fork of the read path. Folding cannot be left out.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

from domain.platform.table import Table
from service.application.projection import view_version


class Stored(NamedTuple):
    """The game's state in PostgreSQL when the read began: ``games.version`` and ``games.head``
    (the hash of its last event)."""

    version: int
    head: bytes


class Tier(enum.Enum):
    BUILT = "views built by this process"
    PROJECTED = "versioned views in the projection (Redis)"
    TABLES = "this process's table cache"
    PROJECTED_TABLE = "the projection's table"


#: The tiers a read may be answered from, besides folding from PostgreSQL (always).
TIERS: frozenset[Tier] = frozenset(Tier)


def is_stored(stored: Stored | None, version: int, head: bytes) -> bool:
    """Is the state at (``version``, ``head``) the stored one?"""
    return stored is not None and stored.version == version and stored.head == head


def built_answers(stored: Stored | None, version: int, head: bytes) -> bool:
    """May a view this process built of its table at (``version``, ``head``) answer?"""
    return Tier.BUILT in TIERS and is_stored(stored, version, head)


def projected_view(raw: bytes | None, stored: Stored) -> bytes | None:
    """The body of a view read from the projection if it may answer (its own version is the
    stored one or newer), else None."""
    if raw is None or Tier.PROJECTED not in TIERS:
        return None
    have, body = view_version(raw)
    return body if have is not None and have >= stored.version else None


def table_answers(cached: tuple[bytes, Table] | None, stored: Stored) -> Table | None:
    """This process's cached (head, table) of a game, if views may be built from it."""
    if cached is None or Tier.TABLES not in TIERS:
        return None
    head, table = cached
    return table if is_stored(stored, table.version, head) else None


def projection_current(have: bytes | None, stored: Stored) -> bool:
    """Is the projection record (its ``version`` field, ``have``) at the stored version or
    newer? (If not, it is repaired after the read.)"""
    return have is not None and int(have) >= stored.version


def projected_table_answers(table: Table | None, stored: Stored) -> bool:
    """May the projection's table (read from it) be the one a view is built from?"""
    return Tier.PROJECTED_TABLE in TIERS and table is not None and table.version >= stored.version
