"""A receipt verifies with standard tools: OpenSSL, as docs/receipts-and-audit.md shows."""

from __future__ import annotations

import base64
import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ledger.receipts import (
    Signer,
    key_for,
    receipt_message,
    tree_head_message,
    verify_receipt,
    verify_tree_head,
)

GAME = "0b0e4a8e-6a43-4b8a-9a51-7d6d1c2b9a11"


def _openssl() -> str:
    openssl = shutil.which("openssl")
    if openssl is None:  # Debian's base image has it; CI runs there
        pytest.fail("openssl is needed to show receipts verify with standard tools")
    return openssl


def test_receipt_verifies_with_openssl_and_a_forged_one_does_not(tmp_path: Path) -> None:
    openssl = _openssl()
    signer = Signer(Ed25519PrivateKey.generate())
    receipt = signer.receipt(GAME, 42, "ab" * 32)
    (tmp_path / "server.pem").write_text(signer.public_document()["pem"])
    message = f'{{"game":"{GAME}","head":"{"ab" * 32}","version":42}}'.encode()
    assert message == receipt_message(GAME, 42, "ab" * 32)
    (tmp_path / "receipt.msg").write_bytes(message)
    (tmp_path / "receipt.sig").write_bytes(base64.b64decode(receipt["signature"]))
    ok = _openssl_verify(openssl, tmp_path, "receipt")
    assert ok.returncode == 0 and "Verified Successfully" in ok.stdout
    (tmp_path / "receipt.msg").write_bytes(message.replace(b"42", b"43"))
    assert _openssl_verify(openssl, tmp_path, "receipt").returncode != 0


def test_tree_head_verifies_with_openssl_and_never_passes_for_a_receipt(tmp_path: Path) -> None:
    """A signed tree head is checked exactly like a receipt (docs: "Inclusion proofs and
    signed tree heads"); its signature is not a receipt's, nor the other way round."""
    openssl = _openssl()
    signer = Signer(Ed25519PrivateKey.generate())
    head = signer.tree_head(GAME, 5000, "cd" * 32, "ab" * 32)
    assert head["key_id"] == signer.key_id == signer.public_document()["id"]
    message = (
        f'{{"game":"{GAME}","head":"{"ab" * 32}","root":"{"cd" * 32}","size":5000}}'
    ).encode()
    assert message == tree_head_message(GAME, 5000, "cd" * 32, "ab" * 32)
    (tmp_path / "server.pem").write_text(signer.public_document()["pem"])
    (tmp_path / "tree-head.msg").write_bytes(message)
    (tmp_path / "tree-head.sig").write_bytes(base64.b64decode(head["signature"]))
    ok = _openssl_verify(openssl, tmp_path, "tree-head")
    assert ok.returncode == 0 and "Verified Successfully" in ok.stdout
    (tmp_path / "tree-head.msg").write_bytes(message.replace(b"5000", b"5001"))
    assert _openssl_verify(openssl, tmp_path, "tree-head").returncode != 0

    keys = {"keys": [signer.public_document()]}
    key = key_for(keys, head["key_id"])
    assert key is not None and verify_tree_head(key, head)
    for field, value in (("size", 4999), ("root", "00" * 32), ("head", "00" * 32)):
        assert not verify_tree_head(key, {**head, field: value})
    receipt = signer.receipt(GAME, 5000, "ab" * 32)
    assert not verify_receipt(key, {**receipt, "signature": head["signature"]})
    assert not verify_tree_head(key, {**head, "signature": receipt["signature"]})
    # a key entry whose id does not name its key is no key at all
    other = Signer(Ed25519PrivateKey.generate()).public_document()
    assert key_for({"keys": [{**other, "id": signer.key_id}]}, signer.key_id) is None
    assert key_for({"keys": []}, signer.key_id) is None


def _openssl_verify(openssl: str, tmp_path: Path, name: str) -> subprocess.CompletedProcess[str]:
    """The documented command: ``openssl pkeyutl -verify -pubin -inkey server.pem -rawin
    -in NAME.msg -sigfile NAME.sig``."""
    return subprocess.run(
        [
            *(openssl, "pkeyutl", "-verify", "-pubin", "-inkey", "server.pem", "-rawin"),
            *("-in", f"{name}.msg", "-sigfile", f"{name}.sig"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )


def test_receipt_verifies_with_the_published_raw_key() -> None:
    signer = Signer(Ed25519PrivateKey.generate())
    receipt = signer.receipt(GAME, 7, "cd" * 32)
    key = Ed25519PublicKey.from_public_bytes(
        base64.b64decode(signer.public_document()["public_key"])
    )
    assert verify_receipt(key, receipt)
    assert not verify_receipt(key, {**receipt, "version": 8})
    assert not verify_receipt(key, {**receipt, "head": "00" * 32})
