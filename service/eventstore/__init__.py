"""The event store on PostgreSQL: games, events, commands and secrets
(:mod:`service.eventstore.store`, made of :mod:`~service.eventstore.games`,
:mod:`~service.eventstore.reads` and :mod:`~service.eventstore.commandlog` on
:mod:`~service.eventstore.pooled`), the appends' one description and named SQL
(:mod:`service.eventstore.appending`), the one-statement optimistic append
(:mod:`service.eventstore.optimistic`) and its batches (:mod:`service.eventstore.batched`), a
game held under its row lock (:mod:`service.eventstore.locked`), SQL fragments and row decoding
(:mod:`service.eventstore.pgrows`), records (:mod:`service.eventstore.records`), the hash chain
(:mod:`ledger.chain`), bounded refusals (:mod:`service.eventstore.rejections`),
kept documents (:mod:`service.eventstore.kept`), signing keys (:mod:`service.eventstore.keys`)
and migrations (:mod:`service.eventstore.migrate`, the SQL in ``migrations/``)."""
