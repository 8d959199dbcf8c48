"""Infrastructure that both ``service`` and ``projections`` stand on, and that imports neither
of them (nor ``domain``): :mod:`infra.deadlines` (coarse deadlines, one loop timer for every
bounded block), :mod:`infra.pool` (the PostgreSQL pool with an acquire bound, and asyncpg's
errors classified) and :mod:`infra.lru` (the bounded caches of a process).

Nothing here knows a game, a request or a setting: what it needs (a bound in seconds, a
capacity) is passed in by its caller. ``tests/test_layers.py`` checks the imports.
"""
