"""The event store on PostgreSQL: games, events, commands and secrets
(:mod:`service.eventstore.store`, made of :mod:`~service.eventstore.games`,
:mod:`~service.eventstore.reads` and :mod:`~service.eventstore.commandlog` on
:mod:`~service.eventstore.pooled`), the one-statement optimistic append
(:mod:`service.eventstore.optimistic`), a game held under its row lock
(:mod:`service.eventstore.locked`), SQL fragments and row decoding
(:mod:`service.eventstore.pgrows`), records (:mod:`service.eventstore.records`), the hash chain
(:mod:`service.eventstore.chain`), bounded refusals (:mod:`service.eventstore.rejections`) and
migrations (:mod:`service.eventstore.migrate`, the SQL in ``migrations/``)."""
