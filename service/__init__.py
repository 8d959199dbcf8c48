"""Manifest's service: the HTTP API over the event store, in layers whose imports run one way.

    service/http/         the edge: litestar app, routes, problem rendering, input hardening,
                          quotas, OpenAPI, pictures and the viewer's static files
    service/application/  what a request means: lobby, play, table talk, documents, history,
                          queries and tokens — HTTP-free
    ledger/        proving what happened: audit, commitments to hidden values, receipts,
                          Merkle proofs, signed tree heads, export files
    service/eventstore/   PostgreSQL: appends under optimistic concurrency, rows, the hash chain,
                          migrations

``http → application → audit → eventstore → domain / projections``: a module imports only from
its own layer or the layers after it (and from :mod:`infra`, the infrastructure beside
``service`` and ``projections``: deadlines, the bounded pool, the LRU). Beside the layers:
:mod:`service.settings` (the validated configuration, read once at start),
:mod:`service.problems` (the error every layer raises), :mod:`service.observability` (logs,
metrics), :mod:`service.collector` (the garbage collector's threshold), and the process entry
points
:mod:`service.cli` (with :mod:`service.terminal`, what it tells a person) and
:mod:`service.workers`.
"""
