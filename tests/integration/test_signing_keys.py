"""Signing keys (issue 10): production takes its Ed25519 key from a file or the environment and
refuses to start without one; a rotation keeps every old public key in ``GET /v1/keys``, by key
id, so receipts and tree heads signed before it still verify — end to end, on the real server.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ledger.receipts import Signer, SigningKeyMissing, key_for, verify_receipt, verify_tree_head
from ledger.treeheads import verify_dispute
from service.bootstrap import build_manifest
from service.eventstore.keys import SigningKeys, load_signer
from service.settings import Settings

from .apihelp import bot_step, create_started, tokens_of
from .serverproc import ROOT, ServerProcess, free_port

pytestmark = pytest.mark.integration


def _pem(key: Ed25519PrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


def test_production_is_recognised_by_pg_dsn() -> None:
    """PG_DSN set means production: the key must be configured; the embedded default (no
    PG_DSN) keeps a generated key in its database; an explicit source overrides both."""
    assert Settings.from_env({}).signing_key_source == "database"
    prod = Settings.from_env({"PG_DSN": "postgresql://db/manifest"})
    assert prod.signing_key_source == "config" and prod.signing_key is None
    explicit = {"PG_DSN": "postgresql://db/m", "MANIFEST_SIGNING_KEY_SOURCE": "Database"}
    assert Settings.from_env(explicit).signing_key_source == "database"
    assert Settings.from_env({"MANIFEST_SIGNING_KEY_SOURCE": "config"}).signing_key_source == (
        "config"
    )
    with pytest.raises(ValueError, match="config or database"):
        Settings.from_env({"MANIFEST_SIGNING_KEY_SOURCE": "vault"})


def test_production_without_a_usable_key_does_not_start(
    fresh_database: str, redis_url: str, tmp_path: Path
) -> None:
    """``manifest serve`` with PG_DSN and no MANIFEST_SIGNING_KEY exits, saying why; so does a
    key that is not an Ed25519 private key, or a path that cannot be read. In process,
    ``build_manifest`` refuses the same settings (and generates nothing in the database)."""
    not_ed25519 = tmp_path / "not-a-key.pem"
    not_ed25519.write_text("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
    cases = {
        None: "MANIFEST_SIGNING_KEY must be set",
        str(not_ed25519): "not a PEM private key",
        str(tmp_path / "missing.pem"): "cannot read",
        # a key pasted without its PEM lines is taken for a path, and never echoed
        "MC4CAQAwBQYDK2VwBCIEIPretendThisIsSecretKeyMaterial0000000000": "cannot read",
    }
    for key, reason in cases.items():
        server = ServerProcess(fresh_database, redis_url)
        server.env.pop("MANIFEST_SIGNING_KEY_SOURCE")
        if key is not None:
            server.env["MANIFEST_SIGNING_KEY"] = key
        try:
            with pytest.raises(RuntimeError, match="exited"):
                server.start()
            assert reason in server.log_tail(), server.log_tail()
            assert "Secret" not in server.log_tail()
        finally:
            server.close()

    async def in_process() -> None:
        settings = Settings(pg_dsn=fresh_database, signing_key_source="config")
        with pytest.raises(SigningKeyMissing):
            await build_manifest(settings)
        conn = await asyncpg.connect(fresh_database)
        try:
            assert await conn.fetchval("SELECT count(*) FROM server_keys") == 0
        finally:
            await conn.close()

    asyncio.run(in_process())


async def _move(client: httpx.AsyncClient, gid: str, tokens: list[str]) -> dict[str, Any]:
    r = await bot_step(client, gid, tokens, random.Random(len(tokens)))
    assert r is not None and r.status_code == 200, None if r is None else r.text
    receipt: dict[str, Any] = r.json()["receipt"]
    return receipt


def test_rotation_keeps_old_receipts_verifiable(
    fresh_database: str, redis_url: str, tmp_path: Path
) -> None:
    """Three keys in turn on one database: the embedded-style database key, then a key from a
    file, then a key in the environment variable itself. After each restart the answers are
    signed by the new key and name it; ``/v1/keys`` lists the current key first and every
    earlier one after it; every receipt and tree head from every phase still verifies with the
    key its ``key_id`` names, and with no other. No configured private key is ever stored."""
    k1, k2 = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    (tmp_path / "k1.pem").write_text(_pem(k1))
    server = ServerProcess(fresh_database, redis_url)
    receipts: list[dict[str, Any]] = []
    disputes: list[dict[str, Any]] = []
    ids: list[str] = []

    game: dict[str, Any] = {}

    async def phase() -> None:
        async with server.async_client() as client:
            await _phase(client)

    async def _phase(client: httpx.AsyncClient) -> None:
        if not game:
            created = await create_started(client)
            game.update(id=created["id"], tokens=tokens_of(created))
        gid = game["id"]
        receipt = await _move(client, gid, game["tokens"])
        receipts.append(receipt)
        r = await client.get(f"/v1/games/{gid}/audit/{receipt['version']}")
        assert r.status_code == 200, r.text
        disputes.append(r.json())
        keys = (await client.get("/v1/keys")).json()["keys"]
        ids.append(keys[0]["id"])
        assert keys[0]["status"] == "current" and keys[0]["id"] == receipt["key_id"]
        assert disputes[-1]["inclusion"]["tree_head"]["key_id"] == receipt["key_id"]
        assert [k["id"] for k in keys] == ids[::-1]  # newest first, none forgotten
        assert all(k["status"] == "previous" for k in keys[1:])

    try:
        server.start()  # the suite's opt-in: MANIFEST_SIGNING_KEY_SOURCE=database
        asyncio.run(phase())
        server.stop()
        server.env.pop("MANIFEST_SIGNING_KEY_SOURCE")  # production from here on
        server.env["MANIFEST_SIGNING_KEY"] = str(tmp_path / "k1.pem")  # a file
        server.start()
        asyncio.run(phase())
        server.stop()
        server.env["MANIFEST_SIGNING_KEY"] = _pem(k2)  # the variable holds the key itself
        server.start()
        asyncio.run(phase())
        with server.client() as client:
            published = client.get("/v1/keys").json()
    finally:
        server.close()

    assert ids == [ids[0], Signer(k1).key_id, Signer(k2).key_id] and len(set(ids)) == 3
    assert [r["key_id"] for r in receipts] == ids
    for receipt, dispute in zip(receipts, disputes, strict=True):
        own = key_for(published, receipt["key_id"])
        assert own is not None and verify_receipt(own, receipt)
        assert verify_tree_head(own, dispute["inclusion"]["tree_head"])
        assert verify_dispute(dispute, published)["ok"] is True
        for other in set(ids) - {receipt["key_id"]}:
            key = key_for(published, other)
            assert key is not None and not verify_receipt(key, receipt)
        # a key document that lost the old key cannot vouch for the old receipt
        forgot = {"keys": [k for k in published["keys"] if k["id"] != receipt["key_id"]]}
        assert verify_dispute(dispute, forgot)["ok"] is False

    async def stored() -> tuple[int, int]:
        conn = await asyncpg.connect(fresh_database)
        try:
            private = await conn.fetchval("SELECT count(*) FROM server_keys")
            public = await conn.fetchval("SELECT count(*) FROM signing_keys")
            return int(private), int(public)
        finally:
            await conn.close()

    assert asyncio.run(stored()) == (1, 3)  # only the database key's private part


def test_load_signer_records_the_public_key_once(fresh_database: str) -> None:
    """In process: the database key is made once and shared; a configured key wins over it and
    only its public part is recorded."""

    async def body() -> None:
        from service.eventstore.migrate import migrate

        await migrate(fresh_database)
        pool = await asyncpg.create_pool(fresh_database, min_size=1, max_size=2)
        keys = SigningKeys(pool)
        try:
            a = await load_signer(keys, None, source="database")
            b = await load_signer(keys, None, source="database")
            assert a.key_id == b.key_id
            configured = Ed25519PrivateKey.generate()
            c = await load_signer(keys, _pem(configured), source="config")
            assert c.key_id == Signer(configured).key_id != a.key_id
            rows = await pool.fetch("SELECT key_id FROM signing_keys ORDER BY first_used")
            assert [r["key_id"] for r in rows] == [a.key_id, c.key_id]
            with pytest.raises(SigningKeyMissing):
                await load_signer(keys, "", source="config")
        finally:
            await pool.close()

    asyncio.run(body())


def test_the_embedded_default_signs_with_a_stored_key(tmp_path: Path) -> None:
    """``manifest serve`` with no PG_DSN (the embedded default) needs no configured key: it
    generates one, keeps it in its own PostgreSQL and publishes it."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PG_DSN", "REDIS_URL", "MANIFEST_SIGNING_KEY", "MANIFEST_SIGNING_KEY_SOURCE")
    }
    env["MANIFEST_DATA_DIR"] = str(tmp_path / "data")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "serve", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 90
        keys: list[dict[str, Any]] = []
        while not keys:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the embedded server did not start"
            with contextlib.suppress(httpx.HTTPError):
                r = httpx.get(f"http://127.0.0.1:{port}/v1/keys", timeout=2)
                if r.status_code == 200:
                    keys = r.json()["keys"]
            time.sleep(0.2)
        assert len(keys) == 1 and keys[0]["status"] == "current"
    finally:
        proc.send_signal(signal.SIGTERM)  # an orderly exit also stops the embedded PostgreSQL
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
