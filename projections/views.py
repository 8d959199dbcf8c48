"""Lazy views: a viewer's document (``doc:<viewer>``) and a seat's legal commands
(``legal:<n>``) are built when first read at a version, not on every append.

The write path after a move stores only the game's table and what the mover's answer already
computed (its legal commands), with :meth:`~projections.store.ProjectionStore.advance`, which
leaves the other views where they are. Each stored view carries the version it was built at
(:func:`~projections.store.tag_view`), so a reader serves it only if it is at least the version
PostgreSQL has (``games.version``, the rule every view read keeps:
``service.application.freshness``); otherwise the view is built
from the table at that version (this process's cached table, the projection's table, or the
stored events), kept with :meth:`~projections.store.ProjectionStore.put_view` (which never
replaces a view by an older one, and never creates a record), and answered.

Why this cannot serve a stale view: the version is the view's own, written in the same field
as its body. A view built at N and stored after a move to N+1 says N, and a reader at N+1
builds again. Two readers building the same view (here or on other instances) build the same
bytes (a view is a pure function of the table at its version) and either store wins.

Within a process each (game, view, version) is built once: the build is pure and runs without
yielding, and its result is kept in a small bounded map (``recent``) that readers consult before
building, so readers that missed in the store at the same time take the first one's bytes."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec
import structlog
from prometheus_client import Counter

from domain.platform.table import Table, encode_table, game_document, legal_document, viewer_keys
from projections.store import ProjectionStore, StoreUnavailable

log = structlog.get_logger("manifest.projections")
_encoder = msgspec.json.Encoder()

#: How many built views a process keeps (FIFO), for readers racing the store.
RECENT_VIEWS = 1024

BUILDS = Counter(
    "manifest_view_builds_total",
    "Views built on first read (doc: a game document, legal: a seat's legal commands)",
    ["kind"],
)


def table_field(table: Table, name: str) -> bytes | None:
    """One view of ``table`` as JSON (``doc:<viewer>`` or ``legal:<n>``), or its ``table``
    field; None when the game has no such field (a seat it does not have)."""
    if name.startswith("doc:"):
        key = name[4:]
        return _encoder.encode(game_document(table, key)) if key in viewer_keys(table) else None
    if name.startswith("legal:"):
        number = name[6:]
        if not number.isdigit() or int(number) >= table.seats:
            return None
        return _encoder.encode(legal_document(table, int(number)))
    return encode_table(table) if name == "table" else None


class Views:
    """Builds views on first read and keeps them in the projection store."""

    def __init__(self, store: ProjectionStore, recent: int = RECENT_VIEWS) -> None:
        self.store = store
        #: views built by this process (tests count them; also ``manifest_view_builds_total``)
        self.builds = 0
        self._recent: dict[tuple[str, str, int], bytes] = {}
        self._keep = recent

    def built(self, game_id: str, name: str, version: int) -> bytes | None:
        """View ``name`` of the game at ``version`` if this process built it lately."""
        return self._recent.get((game_id, name, version))

    def keep_built(self, table: Table, views: Mapping[str, bytes]) -> None:
        """Remember ``views`` (name -> body) of ``table``, built by the write path."""
        for name, body in views.items():
            self._recent[(table.game_id, name, table.version)] = body
        while len(self._recent) > self._keep:
            del self._recent[next(iter(self._recent))]

    async def view(self, table: Table, name: str, *, keep: bool = True) -> bytes | None:
        """View ``name`` of ``table`` at its version: built once here, then stored (unless
        ``keep`` is False: the store just failed). None: the game has no such view."""
        key = (table.game_id, name, table.version)
        body = self._recent.get(key)
        if body is not None:
            return body  # built (and stored, or tried) by an earlier reader
        body = table_field(table, name)
        if body is None:
            return None
        self.builds += 1
        BUILDS.labels(kind=name.partition(":")[0]).inc()
        self.keep_built(table, {name: body})
        if keep:
            try:
                await self.store.put_view(table.game_id, name, table.version, body)
            except StoreUnavailable as error:  # answered anyway; the next reader builds again
                log.info("view not kept", game=table.game_id, view=name, error=str(error))
        return body
