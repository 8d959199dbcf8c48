"""Dispute files of a long game stay small and verify offline (issue 10, "Must show": a dispute
file of event 5 in a 5,000-event game is under 10 KB and verifies offline).

The game is built through the real append path in-process (two bots mostly ending their turns),
as the long-game seek test does; the dispute files come from the server process over HTTP and
are checked by ``manifest verify-dispute`` with no database configured, and by
:func:`ledger.treeheads.verify_dispute`, which must also catch every tampering.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ledger.merkle import root_of
from ledger.receipts import Signer
from ledger.treeheads import verify_dispute

from .apihelp import pg, tokens_of
from .historyhelp import bot_command, create, in_process, mostly_end_turn
from .serverproc import ROOT, ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]

EVENTS = 5000


class Long:
    def __init__(self, game_id: str, version: int, early: dict[str, Any]) -> None:
        self.id = game_id
        self.version = version
        self.early = early  # the first command answer at or after event 5 (with its receipt)


@pytest.fixture(scope="module")
def long_game(module_server: ServerProcess) -> Long:
    async def build() -> Long:
        rng = random.Random(10)
        early: dict[str, Any] | None = None
        async with in_process(module_server) as manifest:
            created = await create(manifest)
            game_id, tokens = created["id"], tokens_of(created)
            version = created["version"]
            while version < EVENTS:
                answer = await bot_command(manifest, game_id, tokens, rng, mostly_end_turn)
                assert answer is not None, "the game ended early"
                version = answer["version"]
                if early is None and version >= 5:
                    early = answer
        assert early is not None
        return Long(game_id, version, early)

    return asyncio.run(build())


def _get(server: ServerProcess, path: str) -> tuple[bytes, float]:
    with server.client() as client:
        started = time.perf_counter()
        r = client.get(path)
        took = time.perf_counter() - started
        assert r.status_code == 200, r.text[:300]
        return r.content, took


def _verify_offline(tmp: Path, dispute: bytes, keys: bytes) -> tuple[int, dict[str, Any]]:
    """``manifest verify-dispute`` with no database configured (no PG_DSN, no REDIS_URL, an
    empty data directory that stays empty)."""
    (tmp / "dispute.json").write_bytes(dispute)
    (tmp / "keys.json").write_bytes(keys)
    data_dir = tmp / "data"
    data_dir.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PG_DSN", "REDIS_URL")}
    env["MANIFEST_DATA_DIR"] = str(data_dir)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "service.cli",
            "verify-dispute",
            str(tmp / "dispute.json"),
            "--keys",
            str(tmp / "keys.json"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert list(data_dir.iterdir()) == []  # nothing was started
    return done.returncode, json.loads(done.stdout)


def test_dispute_of_event_5_in_a_5000_event_game_is_small_and_verifies_offline(
    server: ServerProcess, long_game: Long, tmp_path: Path
) -> None:
    n = 5
    keys, _ = _get(server, "/v1/keys")
    first, cold = _get(server, f"/v1/games/{long_game.id}/audit/{n}")
    again, warm = _get(server, f"/v1/games/{long_game.id}/audit/{n}")
    print(
        f"/audit/{n} of a {long_game.version}-event game: {len(first)} bytes; "
        f"{cold * 1000:.0f} ms building the tree, {warm * 1000:.0f} ms with it cached"
    )
    assert len(first) < 10_000, len(first)
    dispute = json.loads(first)
    proof = dispute["inclusion"]
    assert proof["tree_size"] == proof["tree_head"]["size"] >= EVENTS
    assert len(proof["path"]) == (proof["tree_size"] - 1).bit_length()  # 13 for 5,000
    assert "to_head" not in dispute["chain"]
    assert json.loads(again)["inclusion"]["tree_head"]["root"] == proof["tree_head"]["root"]

    code, report = _verify_offline(tmp_path, first, keys)
    assert code == 0 and report["ok"] is True, report
    names = {c["check"] for c in report["checks"]}
    assert {"link", "inclusion", "tree_head", "receipt"} <= names

    # the root is the RFC 9162 root over every stored chain hash
    async def stored_root() -> str:
        async with pg(server.pg_dsn) as store:
            events = await store.read(long_game.id)
        return root_of([e.hash for e in events[: proof["tree_size"]]]).hex()

    assert asyncio.run(stored_root()) == proof["tree_head"]["root"]

    # tampered: the CLI says no (exit 1) ...
    bad = copy.deepcopy(dispute)
    bad["inclusion"]["path"][3] = "00" * 32
    code, report = _verify_offline(tmp_path, json.dumps(bad).encode(), keys)
    assert code == 1 and report["ok"] is False
    assert [c["check"] for c in report["checks"] if not c["ok"]] == ["inclusion"]
    # ... and so does every other way of spoiling the file
    published = json.loads(keys)
    for what, spoil, failing in _tamperings(dispute):
        spoiled = copy.deepcopy(dispute)
        spoil(spoiled)
        report = verify_dispute(spoiled, published)
        assert report["ok"] is False, what
        failed = {c["check"] for c in report["checks"] if not c["ok"]}
        assert failing & failed, (what, failed)
    # another server's keys do not vouch for this tree head
    stranger = {"keys": [Signer(Ed25519PrivateKey.generate()).public_document()]}
    report = verify_dispute(dispute, stranger)
    assert {c["check"] for c in report["checks"] if not c["ok"]} == {"tree_head", "receipt"}
    assert verify_dispute({"game": "x"}, published)["ok"] is False


def _flip(hex_text: str) -> str:
    return ("1" if hex_text[0] == "0" else "0") + hex_text[1:]


def _tamperings(d: dict[str, Any]) -> list[tuple[str, Any, set[str]]]:
    def set_in(path: list[Any], value: Any) -> Any:
        def spoil(doc: dict[str, Any]) -> None:
            target = doc
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = value(target[path[-1]])

        return spoil

    out: list[tuple[str, Any, set[str]]] = []
    for i in range(len(d["inclusion"]["path"])):
        out.append((f"path[{i}]", set_in(["inclusion", "path", i], _flip), {"inclusion"}))
    out += [
        ("path dropped", set_in(["inclusion", "path"], lambda p: p[:-1]), {"inclusion"}),
        ("path added", set_in(["inclusion", "path"], lambda p: [*p, "00" * 32]), {"inclusion"}),
        ("leaf index", set_in(["inclusion", "leaf_index"], lambda i: i + 1), {"inclusion"}),
        ("leaf hash", set_in(["inclusion", "leaf_hash"], _flip), {"inclusion"}),
        ("event hash", set_in(["chain", "hash"], _flip), {"link", "inclusion", "events"}),
        ("root", set_in(["inclusion", "tree_head", "root"], _flip), {"inclusion", "tree_head"}),
        ("size", set_in(["inclusion", "tree_head", "size"], lambda s: s + 1), {"tree_head"}),
        ("head", set_in(["inclusion", "tree_head", "head"], _flip), {"tree_head", "receipt"}),
        ("game", set_in(["inclusion", "tree_head", "game"], lambda g: g[::-1]), {"tree_head"}),
        ("signature", set_in(["inclusion", "tree_head", "signature"], _flip), {"tree_head"}),
        ("key id", set_in(["inclusion", "tree_head", "key_id"], _flip), {"tree_head"}),
        ("version", set_in(["version"], lambda v: v + 1), {"link", "inclusion"}),
        ("receipt", set_in(["receipt", "signature"], _flip), {"receipt"}),
    ]
    if d["chain"]["canonical"] is not None:  # disclosed: no hidden value in event n
        spoil = set_in(["chain", "canonical"], lambda c: c.replace('"type":"', '"type":"x', 1))
        out.append(("canonical", spoil, {"link"}))
    return out


def test_an_old_receipt_is_in_todays_signed_tree(server: ServerProcess, long_game: Long) -> None:
    """A receipt kept from early in the game (event ~5) is checked against today's tree head:
    the dispute file of its version proves its head is leaf ``version - 1`` of the signed tree
    over all 5,000+ events; the last event's dispute file is the tree head's own head."""
    receipt = long_game.early["receipt"]
    v = receipt["version"]
    keys = json.loads(_get(server, "/v1/keys")[0])
    dispute = json.loads(_get(server, f"/v1/games/{long_game.id}/audit/{v}")[0])
    assert dispute["chain"]["hash"] == receipt["head"]
    assert verify_dispute(dispute, keys)["ok"] is True
    assert dispute["inclusion"]["tree_head"]["size"] >= EVENTS > v
    last = json.loads(_get(server, f"/v1/games/{long_game.id}/audit/{long_game.version}")[0])
    report = verify_dispute(last, keys)
    assert report["ok"] is True and "head" in {c["check"] for c in report["checks"]}
    assert last["inclusion"]["tree_head"]["head"] == last["chain"]["hash"]
