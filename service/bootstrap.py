"""The composition root: the objects every entry point needs (the pools, the event store, the
projection store and its projector, the signer, the application's services gathered in a
:class:`Manifest`: :func:`compose`) built from the :class:`Settings` read once at start. Used
by the HTTP app's lifespan (:mod:`service.http.app`), the CLI (:mod:`service.cli`) and the
benchmarks; it may import from every layer, and nothing in a layer imports it."""

from __future__ import annotations

from typing import Any

import asyncpg  # type: ignore[import-untyped]

from infra.pool import BoundedPool
from ledger.receipts import Signer
from projections.projector import Projector
from projections.redis_store import RedisStore
from projections.store import MemoryStore, ProjectionStore
from service.application.clocks import ClockLimits, Clocks
from service.application.documents import Documents
from service.application.faults import Admission, Faults, pg_session_settings
from service.application.gameplay import Manifest
from service.application.lobby import Lobby
from service.application.play import MAX_EVENTS_PER_COMMAND, Play
from service.application.players import Players
from service.application.queries import Queries
from service.application.seats import Seats
from service.application.tables import Tables
from service.application.talk import Talk
from service.application.writes import Writes
from service.eventstore.keys import load_signer
from service.eventstore.memory import MemoryLog
from service.eventstore.migrate import migrate
from service.eventstore.port import EventLog
from service.eventstore.primary import PrimaryConnector
from service.eventstore.rejections import Budget
from service.eventstore.store import EventStore
from service.http.problemmap import document_of
from service.settings import Settings


# --- the application -------------------------------------------------------------------------
async def build_manifest(settings: Settings) -> tuple[Manifest, EventStore, ProjectionStore]:
    """Connect, migrate and assemble the application (used by the app and the CLI). The
    caller closes the event store (its pools) and the projection store when done."""
    if not settings.pg_dsn:
        raise RuntimeError("PG_DSN is resolved before the app starts")
    raw_pool = await asyncpg.create_pool(
        settings.pg_dsn,
        min_size=2,
        max_size=settings.pg_pool,
        timeout=settings.pg_connect_timeout,
        command_timeout=settings.pg_statement_timeout + 1,  # the server's own limit comes first
        server_settings=pg_session_settings(settings),
        reset=_keep_session,
        connect=PrimaryConnector(settings.pg_dsn),  # several hosts: the one that takes writes
    )
    await migrate(raw_pool, settings.migrations)
    pool = BoundedPool(raw_pool, settings.pg_acquire_timeout)
    projections: ProjectionStore = (
        RedisStore.from_url(
            settings.redis_url,
            settings.redis_prefix,
            connect_timeout=settings.redis_connect_timeout,
            timeout=settings.redis_timeout,
            cluster=settings.redis_cluster,
            heartbeat=settings.stream_heartbeat,
        )
        if settings.redis_url
        else MemoryStore()
    )
    # The replica's pool opens no connection up front: an unreachable replica does not stop the
    # server, history reads fall back to the primary (EventStore.read_history).
    read_pool = (
        await asyncpg.create_pool(
            settings.pg_read_dsn,
            min_size=0,
            max_size=settings.pg_pool,
            timeout=settings.pg_connect_timeout,  # a replica that does not answer is skipped
            command_timeout=30,
        )
        if settings.pg_read_dsn
        else None
    )
    store = EventStore(pool, read_pool=read_pool, append_batch=settings.pg_append_batch)
    projector = Projector(
        projections,
        lambda game_id, after: store.read(game_id, after=after),
        retries=settings.projection_retries,
    )
    try:
        signer = await load_signer(store, settings.signing_key, source=settings.signing_key_source)
    except BaseException:
        await store.close()
        raise
    return (
        compose(
            store,
            projector,
            signer,
            faults=Faults(settings.retry_after),
            admission=Admission(settings.game_writers),
            rejected_cap=settings.rejected_cap,
            refusal_body_prefix=settings.refusal_body_prefix,
            refusal_budget=Budget(settings.refusals_per_client, settings.refusal_bytes),
            max_events=settings.max_events_per_command,
            clock_limits=ClockLimits(settings.clock_max_bank, settings.clock_rest_after),
            player_keys_max=settings.player_keys_max,
            my_games_max=settings.my_games_max,
        ),
        store,
        projections,
    )


def compose(
    store: EventLog,
    projector: Projector,
    signer: Signer,
    *,
    faults: Faults | None = None,
    admission: Admission | None = None,
    rejected_cap: int = 1000,
    refusal_body_prefix: int = 1024,
    refusal_budget: Budget | None = None,
    max_events: int = MAX_EVENTS_PER_COMMAND,
    clock_limits: ClockLimits | None = None,
    player_keys_max: int = 20,
    my_games_max: int = 500,
) -> Manifest:
    """The application's services over an event store, a projector and a signer already built
    (by :func:`build_manifest`; tests and benchmarks build their own, e.g. two "instances" on
    one database): the collaborators they share — the tables and keys, who a token is, how a
    write goes — made once, and each service given the ones it uses. A refused command is
    recorded with the answer the HTTP edge gives it
    (:func:`service.http.problemmap.document_of`)."""
    faults = faults or Faults()
    tables = Tables(store)
    seats = Seats(store)
    writes = Writes(tables, projector, faults, admission or Admission(8))
    play = Play(
        store,
        tables,
        seats,
        writes,
        signer,
        document_of=document_of,
        rejected_cap=rejected_cap,
        refusal_body_prefix=refusal_body_prefix,
        refusal_budget=refusal_budget,
        max_events=max_events,
    )
    return Manifest(
        store=store,
        projector=projector,
        signer=signer,
        faults=faults,
        tables=tables,
        seats=seats,
        lobby=Lobby(store, tables, seats, writes, clock_limits=clock_limits),
        play=play,
        talk=Talk(store, tables, seats, writes, signer),
        documents=Documents(store, tables, seats, projector),
        queries=Queries(store, tables, seats),
        clocks=Clocks(store, tables, seats, writes, play, signer),
        players=Players(store, tables, seats, player_keys_max, my_games_max),
    )


async def in_memory(**options: Any) -> Manifest:
    """The application over an event log in memory (:class:`service.eventstore.memory.MemoryLog`)
    and projections in memory, with a generated signing key: no PostgreSQL, no Redis — for
    tests and tools. ``options``: those of :func:`compose`."""
    log = MemoryLog()
    projector = Projector(MemoryStore(), lambda game_id, after: log.read(game_id, after=after))
    return compose(log, projector, await load_signer(log), **options)


async def _keep_session(connection: Any) -> None:
    """The pool's reset between uses. The default (unlisten, reset settings, release advisory
    locks, close cursors) costs a round trip per release, and nothing here leaves such state:
    the only advisory lock (migrations) is released by ``migrate`` itself."""
