"""Signed receipts: the server's Ed25519 signature over (game id, version, head hash).

A receipt proves the server accepted the stream up to ``version`` with head ``head``. The
signed bytes are the canonical JSON ``{"game":"<uuid>","head":"<hex>","version":<int>}``
(keys sorted, no spaces, UTF-8) — exactly ``msgspec.json.encode(..., order="sorted")``.
The signature is base64 (standard alphabet, padded); the public key is published at
``GET /v1/keys`` as raw 32 bytes in base64 and as PEM.

The key is ``MANIFEST_SIGNING_KEY`` when set (a PEM private key, or its path), else the one
stored in the ``server_keys`` table, generated on first start.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

import msgspec
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

KEY_ID = "primary"


def receipt_message(game_id: str, version: int, head: str) -> bytes:
    return msgspec.json.encode({"game": game_id, "head": head, "version": version}, order="sorted")


class Signer:
    def __init__(self, private_key: Ed25519PrivateKey) -> None:
        self._key = private_key
        self.public_key = private_key.public_key()
        raw = self.public_key.public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        self.public_raw = raw
        self.key_id = hashlib.sha256(raw).hexdigest()[:16]

    def receipt(self, game_id: str, version: int, head: str) -> dict[str, Any]:
        signature = self._key.sign(receipt_message(game_id, version, head))
        return {
            "game": game_id,
            "version": version,
            "head": head,
            "key_id": self.key_id,
            "signature": base64.b64encode(signature).decode(),
        }

    def public_document(self) -> dict[str, Any]:
        pem = self.public_key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return {
            "id": self.key_id,
            "alg": "Ed25519",
            "public_key": base64.b64encode(self.public_raw).decode(),
            "pem": pem.decode(),
        }

    def private_pem(self) -> bytes:
        return self._key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )


def verify_receipt(public_key: Ed25519PublicKey, receipt: dict[str, Any]) -> bool:
    from cryptography.exceptions import InvalidSignature

    try:
        public_key.verify(
            base64.b64decode(receipt["signature"]),
            receipt_message(receipt["game"], receipt["version"], receipt["head"]),
        )
    except (InvalidSignature, KeyError, ValueError):
        return False
    return True


def _from_pem(pem: bytes) -> Ed25519PrivateKey:
    key = serialization.load_pem_private_key(pem, password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError("MANIFEST_SIGNING_KEY must be an Ed25519 private key")
    return key


async def load_signer(pool: Any, configured: str | None = None) -> Signer:
    """The configured key (``MANIFEST_SIGNING_KEY``, from the settings), else the stored one,
    else a new one stored for every instance."""
    if configured:
        text = configured.encode()
        if not text.lstrip().startswith(b"-----"):
            text = Path(configured).read_bytes()
        return Signer(_from_pem(text))
    fresh = Ed25519PrivateKey.generate()
    signer = Signer(fresh)
    async with pool.acquire() as conn:
        await conn.execute(
            "INSERT INTO server_keys (id, private_key, public_key) VALUES ($1, $2, $3) "
            "ON CONFLICT (id) DO NOTHING",
            KEY_ID,
            signer.private_pem(),
            signer.public_raw,
        )
        stored = await conn.fetchval("SELECT private_key FROM server_keys WHERE id = $1", KEY_ID)
    return Signer(_from_pem(bytes(stored)))
