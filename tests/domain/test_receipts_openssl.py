"""A receipt verifies with standard tools: OpenSSL, as docs/receipts-and-audit.md shows."""

from __future__ import annotations

import base64
import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from service.receipts import Signer, receipt_message, verify_receipt

GAME = "0b0e4a8e-6a43-4b8a-9a51-7d6d1c2b9a11"


def test_receipt_verifies_with_openssl_and_a_forged_one_does_not(tmp_path: Path) -> None:
    openssl = shutil.which("openssl")
    if openssl is None:  # Debian's base image has it; CI runs there
        pytest.fail("openssl is needed to show receipts verify with standard tools")
    signer = Signer(Ed25519PrivateKey.generate())
    receipt = signer.receipt(GAME, 42, "ab" * 32)
    (tmp_path / "server.pem").write_text(signer.public_document()["pem"])
    message = f'{{"game":"{GAME}","head":"{"ab" * 32}","version":42}}'.encode()
    assert message == receipt_message(GAME, 42, "ab" * 32)
    (tmp_path / "receipt.msg").write_bytes(message)
    (tmp_path / "receipt.sig").write_bytes(base64.b64decode(receipt["signature"]))

    def openssl_verify() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                openssl,
                "pkeyutl",
                "-verify",
                "-pubin",
                "-inkey",
                "server.pem",
                "-rawin",
                "-in",
                "receipt.msg",
                "-sigfile",
                "receipt.sig",
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
        )

    ok = openssl_verify()
    assert ok.returncode == 0 and "Verified Successfully" in ok.stdout
    (tmp_path / "receipt.msg").write_bytes(message.replace(b"42", b"43"))
    assert openssl_verify().returncode != 0


def test_receipt_verifies_with_the_published_raw_key() -> None:
    signer = Signer(Ed25519PrivateKey.generate())
    receipt = signer.receipt(GAME, 7, "cd" * 32)
    key = Ed25519PublicKey.from_public_bytes(
        base64.b64decode(signer.public_document()["public_key"])
    )
    assert verify_receipt(key, receipt)
    assert not verify_receipt(key, {**receipt, "version": 8})
    assert not verify_receipt(key, {**receipt, "head": "00" * 32})
