"""The signing keys in the event store's database: the generated server key kept for every
instance when none is configured (``server_keys``, development only) and the public key of
every key ever used to sign (``signing_keys``), which ``GET /v1/keys`` publishes. The keys
themselves are made by
:func:`load_signer` and signed with by :class:`ledger.receipts.Signer`."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ledger.chain import format_at
from ledger.receipts import KEY_ID, Signer, SigningKeyMissing, from_pem, public_document
from service.eventstore.pooled import Pooled

if TYPE_CHECKING:
    from service.eventstore.port import EventLog


class SigningKeys(Pooled):
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

    async def record_key_used(self, key_id: str, public_raw: bytes) -> None:
        """Record that the key ``key_id`` signs (its first use is kept)."""
        await self._pool.execute(
            "INSERT INTO signing_keys (key_id, public_key) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            key_id,
            public_raw,
        )

    async def keys_used(self) -> list[tuple[bytes, datetime]]:
        """Every key ever used, as (raw public key, first used), newest first."""
        rows = await self._pool.fetch(
            "SELECT public_key, first_used FROM signing_keys ORDER BY first_used DESC, key_id"
        )
        return [(bytes(r["public_key"]), r["first_used"]) for r in rows]


def configured_key(configured: str) -> Signer:
    """The signer of a configured key: PEM text, or the path of a PEM file."""
    text = configured.encode()
    if not text.lstrip().startswith(b"-----"):
        try:
            text = Path(configured).read_bytes()
        except OSError as error:  # (the value is never echoed: it may be key material)
            raise SigningKeyMissing(
                "MANIFEST_SIGNING_KEY is neither PEM text nor the path of a file we can read: "
                f"cannot read the file it names ({error.strerror})"
            ) from None
    return Signer(from_pem(text))


def check_source(configured: str | None, source: str) -> None:
    """Refuse production (source ``config``) without a key, before anything starts."""
    if source == "config" and not configured:
        raise SigningKeyMissing(
            "MANIFEST_SIGNING_KEY must be set (an Ed25519 private key in PEM, or its path) "
            "when PG_DSN is set; create one with `openssl genpkey -algorithm ed25519 -out "
            "signing-key.pem`. (MANIFEST_SIGNING_KEY_SOURCE=database keeps a generated key in "
            "PostgreSQL instead: for development only.)"
        )
    if configured:
        configured_key(configured)


async def load_signer(
    keys: EventLog, configured: str | None = None, *, source: str = "database"
) -> Signer:
    """The configured key, else (source ``database`` only) the stored one, else a new one
    stored for every instance. Its public key is recorded in ``signing_keys``."""
    check_source(configured, source)
    if configured:
        signer = configured_key(configured)
    else:
        fresh = Signer(Ed25519PrivateKey.generate())
        stored = await keys.server_key(KEY_ID, fresh.private_pem(), fresh.public_raw)
        signer = Signer(from_pem(stored))
    await keys.record_key_used(signer.key_id, signer.public_raw)
    return signer


class PublicKey(msgspec.Struct):
    id: str
    alg: str
    status: str
    public_key: str
    pem: str
    first_used: str | None


async def published_keys(keys: EventLog, current: Signer) -> list[PublicKey]:
    """``GET /v1/keys``: the key this instance signs with, then every other key ever used
    (newest first) — receipts and tree heads name theirs by ``key_id``."""
    used = dict(await keys.keys_used())
    first = used.get(current.public_raw)
    documents = [public_document(current.public_raw, "current", _at(first))]
    documents += [
        public_document(raw, "previous", _at(at))
        for raw, at in used.items()
        if raw != current.public_raw
    ]
    return [PublicKey(**k) for k in documents]


def _at(at: Any) -> str | None:
    return None if at is None else format_at(at)
