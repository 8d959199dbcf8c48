"""Signed receipts and tree heads: the server's Ed25519 signatures, and where its key comes from.

A receipt proves the server accepted the stream up to ``version`` with head ``head``. The
signed bytes are the canonical JSON ``{"game":"<uuid>","head":"<hex>","version":<int>}``
(keys sorted, no spaces, UTF-8) — exactly ``msgspec.json.encode(..., order="sorted")``.
A tree head (``ledger.treeheads``) signs ``{"game","head","root","size"}`` the same way: the
root of the game's Merkle tree (``ledger.merkle``) over its first ``size`` event hashes, and
the chain head at that size. The two key sets differ, so one signature never passes for the
other. Signatures are base64 (standard alphabet, padded), each naming its ``key_id`` (the first
16 hex digits of SHA-256 of the raw public key).

The key: ``MANIFEST_SIGNING_KEY`` (a PEM private key, or its path) whenever the settings' key
source is ``config`` — the default when ``PG_DSN`` is set: production refuses to start without
it. With source ``database`` (the embedded default) and no key configured, the key stored in the
``server_keys`` table, generated on first start. Every public key ever used is recorded in
``signing_keys`` (public part only), and ``GET /v1/keys`` lists them all, the current one
first: after a rotation (a new ``MANIFEST_SIGNING_KEY``, restart) old receipts still verify.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import msgspec
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

KEY_ID = "primary"


class SigningKeyMissing(RuntimeError):
    """Production (key source ``config``) without a configured signing key, or a bad one."""


def receipt_message(game_id: str, version: int, head: str) -> bytes:
    return msgspec.json.encode({"game": game_id, "head": head, "version": version}, order="sorted")


def tree_head_message(game_id: str, size: int, root: str, head: str) -> bytes:
    return msgspec.json.encode(
        {"game": game_id, "head": head, "root": root, "size": size}, order="sorted"
    )


def key_id_of(public_raw: bytes) -> str:
    return hashlib.sha256(public_raw).hexdigest()[:16]


class Signer:
    def __init__(self, private_key: Ed25519PrivateKey) -> None:
        self._key = private_key
        self.public_key = private_key.public_key()
        raw = self.public_key.public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        self.public_raw = raw
        self.key_id = key_id_of(raw)

    def _sign(self, message: bytes) -> str:
        return base64.b64encode(self._key.sign(message)).decode()

    def receipt(self, game_id: str, version: int, head: str) -> dict[str, Any]:
        return {
            "game": game_id,
            "version": version,
            "head": head,
            "key_id": self.key_id,
            "signature": self._sign(receipt_message(game_id, version, head)),
        }

    def tree_head(self, game_id: str, size: int, root: str, head: str) -> dict[str, Any]:
        return {
            "game": game_id,
            "size": size,
            "root": root,
            "head": head,
            "key_id": self.key_id,
            "signature": self._sign(tree_head_message(game_id, size, root, head)),
        }

    def public_document(self) -> dict[str, Any]:
        return public_document(self.public_raw, "current")

    def private_pem(self) -> bytes:
        return self._key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )


def public_document(raw: bytes, status: str, first_used: str | None = None) -> dict[str, Any]:
    """One entry of ``GET /v1/keys``: the raw key in base64, as PEM, its id and status."""
    pem = Ed25519PublicKey.from_public_bytes(raw).public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return {
        "id": key_id_of(raw),
        "alg": "Ed25519",
        "status": status,
        "public_key": base64.b64encode(raw).decode(),
        "pem": pem.decode(),
        "first_used": first_used,
    }


def _verify(public_key: Ed25519PublicKey, signature: Any, message: Any) -> bool:
    from cryptography.exceptions import InvalidSignature

    try:
        public_key.verify(base64.b64decode(signature(), validate=True), message())
    except (InvalidSignature, KeyError, ValueError, TypeError):
        return False
    return True


def verify_receipt(public_key: Ed25519PublicKey, receipt: dict[str, Any]) -> bool:
    return _verify(
        public_key,
        lambda: receipt["signature"],
        lambda: receipt_message(receipt["game"], receipt["version"], receipt["head"]),
    )


def verify_tree_head(public_key: Ed25519PublicKey, head: dict[str, Any]) -> bool:
    return _verify(
        public_key,
        lambda: head["signature"],
        lambda: tree_head_message(head["game"], head["size"], head["root"], head["head"]),
    )


def key_for(keys: dict[str, Any], key_id: Any) -> Ed25519PublicKey | None:
    """The public key with ``key_id`` in a ``GET /v1/keys`` document, or None."""
    for entry in keys.get("keys", []) if isinstance(keys, dict) else []:
        if isinstance(entry, dict) and entry.get("id") == key_id:
            try:
                raw = base64.b64decode(str(entry.get("public_key")), validate=True)
                if key_id_of(raw) != key_id:
                    return None  # an entry whose id does not name its key
                return Ed25519PublicKey.from_public_bytes(raw)
            except ValueError:
                return None
    return None


def from_pem(pem: bytes) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        raise SigningKeyMissing("MANIFEST_SIGNING_KEY is not a PEM private key") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningKeyMissing("MANIFEST_SIGNING_KEY must be an Ed25519 private key")
    return key
