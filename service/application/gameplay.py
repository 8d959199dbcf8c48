"""The application: lobby and play on the event store, with projections brought up to date
after every append. HTTP-free: ``service.http.app`` maps requests onto these methods.

A command's life: authenticate the seat token; answer a repeated ``Idempotency-Key`` with the
first answer; take the latest (version, head, table) this process knows (or read it); decode the
command (malformed: 422, recorded); check ``expected_version`` (stale: 409, recorded); run the
game's ``decide`` with ``Rng(seed, version + 1)`` (illegal: 422, recorded — refusals are only
recorded after confirming the state was the stored one); append the events and record the
command with one compare-and-set statement (``service.eventstore.optimistic``), deciding again on
the
fresh state if another writer moved the game first; then answer with the events as the seat may
see them, the new head, a signed receipt, and the hints ``to_act`` and ``legal``, while the
projections are written in the background (:meth:`Projector.schedule`). Lobby actions and table
talk take the game's row lock instead.

The write path needs PostgreSQL only: the state a command is decided on is this process's
cached table (checked against the stored head) or folded from the stored events; a retried
``Idempotency-Key`` is answered from the ``commands`` table. Redis trouble never fails, slows
or changes a command. Dependency failures become 503s (:mod:`service.application.faults`).

Reads (``GET /v1/games/{id}``, ``/legal``) are never older than an acknowledged version: the
projection's version is compared with ``games.version`` in PostgreSQL, and a projection that is
behind (a write still pending, Redis restored from an older save) or unreadable (Redis down,
stalled) is answered from the table folded from PostgreSQL instead, and repaired.
"""

from __future__ import annotations

from service.application.documents import Documents
from service.application.lobby import Lobby
from service.application.play import Play
from service.application.queries import Queries
from service.application.talk import Talk


class Manifest(Lobby, Play, Talk, Documents, Queries):
    """The application's games: one object per process, each concern in its own module over
    the shared :class:`service.application.games.Games` (tables, keys, tokens, the append)."""
