"""The application: lobby, play, table talk, documents, queries and turn clocks, each a service
of its own over explicit collaborators, gathered in one :class:`Manifest` per process (built by
:func:`service.bootstrap.compose`). HTTP-free: ``service.http`` maps requests onto
``manifest.lobby``, ``manifest.play``, ... and their typed errors
(:mod:`service.application.errors`) onto problem JSON.

The collaborators, shared by the services: the event store (:mod:`service.eventstore`), the
tables and keys this process holds (:class:`~service.application.tables.Tables`), who a token is
(:class:`~service.application.seats.Seats`), and how a write goes
(:class:`~service.application.writes.Writes`: admission, faults, the append under a row lock,
the projection after the commit).

A command's life (:class:`~service.application.play.Play`): authenticate the seat token
(``Seats``); answer a repeated ``Idempotency-Key`` with the first answer; take the latest
(version, head, table) this process knows (or read it: ``Tables``); decode the command
(malformed: refused, recorded); check ``expected_version`` (stale: a conflict, recorded); run
the game's ``decide`` with ``Rng(seed, version + 1)`` (illegal: refused by the rules, recorded —
refusals are only recorded after confirming the state was the stored one); append the events and
record the command with one compare-and-set statement (``service.eventstore.optimistic``),
deciding again on the fresh state if another writer moved the game first; then answer with the
events as the seat may see them, the new head, a signed receipt, and the hints ``to_act`` and
``legal``, while the projections are written in the background (:meth:`Projector.schedule`,
through ``Writes.project``). Lobby actions and table talk take the game's row lock instead
(``Writes.append``).

The write path needs PostgreSQL only: the state a command is decided on is this process's
cached table (checked against the stored head) or folded from the stored events; a retried
``Idempotency-Key`` is answered from the ``commands`` table. Redis trouble never fails, slows
or changes a command. Dependency failures become ``Unavailable`` (HTTP 503, with
``Retry-After``: :mod:`service.application.faults`).

Reads (``GET /v1/games/{id}``, ``/legal``: :class:`~service.application.documents.Documents`)
are never older than an acknowledged version: the projection's version is compared with
``games.version`` in PostgreSQL, and a projection that is behind (a write still pending, Redis
restored from an older save) or unreadable (Redis down, stalled) is answered from the table
folded from PostgreSQL instead, and repaired.
"""

from __future__ import annotations

from ledger.receipts import Signer
from service.application.clocks import Clocks
from service.application.documents import Documents
from service.application.faults import Faults
from service.application.lobby import Lobby
from service.application.play import Play
from service.application.players import Players
from service.application.projection import Projection
from service.application.queries import Queries
from service.application.seats import Seats
from service.application.tables import Tables
from service.application.talk import Talk
from service.eventstore.port import EventLog


class Manifest:
    """The application's services of one process and the collaborators they share; nothing
    but their names (the routes read ``manifest.play.command(...)``)."""

    def __init__(
        self,
        *,
        store: EventLog,
        projector: Projection,
        signer: Signer,
        faults: Faults,
        tables: Tables,
        seats: Seats,
        lobby: Lobby,
        play: Play,
        talk: Talk,
        documents: Documents,
        queries: Queries,
        clocks: Clocks,
        players: Players,
    ) -> None:
        self.store = store
        self.projector = projector
        self.signer = signer
        self.faults = faults
        self.tables = tables
        self.seats = seats
        self.lobby = lobby
        self.play = play
        self.talk = talk
        self.documents = documents
        self.queries = queries
        self.clocks = clocks
        self.players = players
