"""The signing keys in the event store's database: the generated server key kept for every
instance when none is configured (``server_keys``, development only) and the public key of
every key ever used to sign (``signing_keys``), which ``GET /v1/keys`` publishes. The keys
themselves are made and read by :mod:`service.audit.receipts`."""

from __future__ import annotations

from datetime import datetime
from typing import Any


class SigningKeys:
    def __init__(self, pool: Any) -> None:
        self._pool = pool

    async def server_key(self, key_id: str, private_pem: bytes, public_raw: bytes) -> bytes:
        """The stored server key's private PEM under ``key_id``: ``private_pem`` (with its
        ``public_raw``) stored now if none was, else the one stored first by any instance."""
        async with self._pool.acquire() as conn:
            await conn.execute(
                "INSERT INTO server_keys (id, private_key, public_key) VALUES ($1, $2, $3) "
                "ON CONFLICT (id) DO NOTHING",
                key_id,
                private_pem,
                public_raw,
            )
            stored = await conn.fetchval(
                "SELECT private_key FROM server_keys WHERE id = $1", key_id
            )
        return bytes(stored)

    async def record_used(self, key_id: str, public_raw: bytes) -> None:
        """Record that the key ``key_id`` signs (its first use is kept)."""
        await self._pool.execute(
            "INSERT INTO signing_keys (key_id, public_key) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            key_id,
            public_raw,
        )

    async def used(self) -> list[tuple[bytes, datetime]]:
        """Every key ever used, as (raw public key, first used), newest first."""
        rows = await self._pool.fetch(
            "SELECT public_key, first_used FROM signing_keys ORDER BY first_used DESC, key_id"
        )
        return [(bytes(r["public_key"]), r["first_used"]) for r in rows]
