"""Kept documents (``migrations/0008_kept_documents.sql``): a finished game's whole replay,
export and audit report, stored once as the bytes served, each with the stamp of what it was
computed from. A cache in PostgreSQL (shared by every process and instance, surviving
restarts), not evidence: rows may be deleted at any time."""

from __future__ import annotations

import uuid

import asyncpg  # type: ignore[import-untyped]

from service.eventstore.pooled import Pooled

#: how long a kept write waits for a lock held elsewhere before giving up (it is a cache)
LOCK_WAIT = "500ms"

#: the class of a document every caller reads alike
EVERYONE = "all"

_GET = """
SELECT class, body FROM kept_documents
 WHERE game_id = $1 AND kind = $2 AND class = ANY($3::text[]) AND stamp = $4
"""

_PUT = """
INSERT INTO kept_documents (game_id, kind, class, stamp, body) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (game_id, kind, class)
DO UPDATE SET stamp = EXCLUDED.stamp, body = EXCLUDED.body, kept_at = now()
"""


class KeptDocuments(Pooled):
    """The ``kept_documents`` table of the event store's database."""

    async def kept_document(
        self, game_id: str, kind: str, classes: list[str], stamp: bytes
    ) -> bytes | None:
        """The kept body of ``kind`` for the first of ``classes`` kept under ``stamp`` (None:
        none is)."""
        rows = await self._pool.fetch(_GET, uuid.UUID(game_id), kind, classes, stamp)
        by_class = {r["class"]: bytes(r["body"]) for r in rows}
        return next((by_class[c] for c in classes if c in by_class), None)

    async def keep_document(
        self, game_id: str, kind: str, klass: str, stamp: bytes, body: bytes
    ) -> bool:
        """Keep ``body`` (replacing what was kept for the same game, kind and class); whether
        it was kept. A write that cannot happen soon (the table locked elsewhere, PostgreSQL
        failing) is given up: the caller has computed the document and serves it anyway, it is
        kept by a later download — a cache write never turns a read into a 5xx or holds it for
        the statement timeout."""
        try:
            async with self._pool.acquire() as conn, conn.transaction():
                await conn.execute(f"SET LOCAL lock_timeout = '{LOCK_WAIT}'")
                await conn.execute(_PUT, uuid.UUID(game_id), kind, klass, stamp, body)
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError):
            return False
        return True
