"""The application: what each request means, HTTP-free. Lobby, play, table talk, documents and
queries, separate services over shared collaborators (:mod:`service.application.gameplay`), a
game's history, replays, dispute files and live
changes (:mod:`service.application.history`), queries and tokens, and how dependency
faults become honest answers (:mod:`service.application.faults`); what it refuses, as
typed errors (:mod:`service.application.errors`), answered in HTTP by the edge. Commands are
decided by the pure :mod:`ledger.ruling` on the platform table
(:mod:`domain.platform`). The answers are msgspec Structs (:mod:`service.application.answers`),
sent by the HTTP edge as they are. A game id reaches the application in the one spelling the
server issues: the edge refuses any other (:func:`service.application.tables.check_game_id`,
called once for every route by :class:`service.http.hardening.HardeningMiddleware`)."""
