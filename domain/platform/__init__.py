"""The platform's write model, pure: a game table (lobby, seats, names, status, table talk and
the game's own state) folded from a game's whole stream (:mod:`domain.platform.table`), and the
platform's own events (:mod:`domain.platform.events`). Commands are decided on this table;
projections only derive views from it."""
