"""Poison messages of the projections: a game whose projection cannot be computed at all — its
stream does not read or fold, or its table or a view cannot be encoded (a forged or legacy
row: a number past what JSON encoding writes). Retrying cannot help, so the write path and the
catch-up worker (:mod:`projections.projector`) log it, count it
(``manifest_projection_poisoned_total``), keep it in :class:`Poisoned` — which ``/readyz``
reports without failing — and go on with the other games. A poisoned game is tried again only
once its stored version moves."""

from __future__ import annotations

import structlog
from prometheus_client import Counter

log = structlog.get_logger("manifest.projections")

POISONED = Counter(
    "manifest_projection_poisoned_total",
    "Games whose projection could not be computed (a stream that does not fold, a value that"
    " cannot be encoded): logged and skipped, the others carried on with",
)

#: Poisoned games remembered (the counter counts them all).
KEPT = 100


class Poison(Exception):
    """The projection of ``game_id`` at ``version`` cannot be computed (not a store failure):
    retrying cannot help. Raised from the failure it stands for."""

    def __init__(self, game_id: str, version: int, error: BaseException) -> None:
        super().__init__(f"{type(error).__name__}: {error}")
        self.game_id = game_id
        self.version = version


class Poisoned(dict[str, tuple[int, str]]):
    """The latest ``KEPT`` poisoned games: id -> (the stored version tried, why)."""

    def note(self, poison: Poison) -> None:
        """Log, count and keep ``poison``."""
        POISONED.inc()
        log.error(
            "projection poisoned: skipped",
            game=poison.game_id,
            version=poison.version,
            error=str(poison),
        )
        self.pop(poison.game_id, None)
        self[poison.game_id] = (poison.version, str(poison))
        while len(self) > KEPT:
            del self[next(iter(self))]

    def known_at(self, game_id: str, version: int) -> bool:
        """Whether ``game_id`` was poisoned at ``version`` or later (skip it)."""
        found = self.get(game_id)
        return found is not None and found[0] >= version
