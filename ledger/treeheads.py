"""Signed tree heads and inclusion proofs for dispute files, and their offline verification.

A dispute file (``GET /v1/games/{id}/audit/{n}``) proves that event ``n`` belongs to the game
with O(log n) hashes: the inclusion proof (RFC 9162 §2.1.3) of leaf ``n - 1`` — the chain hash
``hash_n`` — in the game's Merkle tree (:mod:`ledger.merkle`) over the whole stream at
request
time, and a **tree head** the server signs: ``{"game", "size", "root", "head"}`` (``head`` =
``hash_size``, the chain head at that size), with ``key_id`` and ``signature`` as in receipts
(:mod:`ledger.receipts`). Offline, anyone with the file and the server's public keys
(``GET /v1/keys``) checks: event n's link (``SHA-256(prev_hash ‖ canonical) = hash``, when the
canonical bytes are disclosed), the audit path from ``hash`` to the signed root, and the
signature — :func:`verify_dispute`, ``manifest verify-dispute FILE --keys KEYS``.

Building a tree costs one hash per leaf and node (~16 ms for 5,000 events here); each process
keeps the trees of the most recently disputed long games
(:class:`service.application.disputes.TreeCache`).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ledger.merkle import Tree, leaf_hash, verify_inclusion
from ledger.receipts import Signer, key_for, verify_receipt, verify_tree_head

CONSTRUCTION = (
    "RFC 9162 Merkle tree over the chain hashes: leaf i = SHA-256(0x00 || hash_{i+1}), "
    "node = SHA-256(0x01 || left || right); path = the audit path of RFC 9162 2.1.3, "
    "leaf side first; tree_head signs {game, head, root, size} like a receipt"
)


def inclusion(signer: Signer, game_id: str, tree: Tree, n: int, head: bytes) -> dict[str, Any]:
    """The inclusion proof of event ``n`` in ``tree`` (the whole stream, whose chain head is
    ``head``), with the signed tree head it leads to."""
    return {
        "construction": CONSTRUCTION,
        "leaf_index": n - 1,
        "tree_size": tree.size,
        "leaf_hash": tree.levels[0][n - 1].hex(),
        "path": [h.hex() for h in tree.inclusion_proof(n - 1)],
        "tree_head": signer.tree_head(game_id, tree.size, tree.root().hex(), bytes(head).hex()),
    }


# --- offline verification ---------------------------------------------------------------------
def verify_dispute(dispute: Any, keys: Any) -> dict[str, Any]:
    """Check a dispute file with the server's published keys (a ``GET /v1/keys`` document),
    with no server and no database. Returns ``{"ok", "version", "checks": [...]}``; each check
    has ``check``, ``ok`` and ``detail``. Never raises on a malformed file: it fails a check."""
    checks: list[dict[str, Any]] = []

    def check(name: str, ok: bool, detail: str) -> bool:
        checks.append({"check": name, "ok": bool(ok), "detail": detail})
        return bool(ok)

    try:
        _verify(dispute, keys, check)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
        check("format", False, f"not a dispute file: {type(error).__name__}: {error}")
    version = dispute.get("version") if isinstance(dispute, dict) else None
    return {
        "ok": bool(checks) and all(c["ok"] for c in checks),
        "version": version,
        "checks": checks,
    }


def _verify(dispute: Any, keys: Any, check: Any) -> None:
    game, n = str(dispute["game"]), int(dispute["version"])
    chain, proof = dispute["chain"], dispute["inclusion"]
    digest = bytes.fromhex(chain["hash"])
    prev = bytes.fromhex(chain["prev_hash"])
    canonical = chain.get("canonical")
    if canonical is None:
        check("link", True, "canonical bytes not disclosed (hidden information): link unchecked")
    else:
        body = canonical.encode()
        recomputed = hashlib.sha256(prev + body).digest()
        fields = json.loads(canonical)
        check(
            "link",
            recomputed == digest and fields.get("version") == n and fields.get("game") == game,
            f"SHA-256(prev_hash || canonical) {'=' if recomputed == digest else '!='} hash; "
            f"canonical names event {fields.get('version')} of game {fields.get('game')}",
        )
    listed = [e for e in dispute.get("events", []) if e.get("version") == n]
    if listed:
        check("events", listed[0].get("hash") == chain["hash"], "event n's listed hash = hash")
    head = proof["tree_head"]
    size, root = int(head["size"]), bytes.fromhex(head["root"])
    index = int(proof["leaf_index"])
    leaf = leaf_hash(digest)
    path = [bytes.fromhex(h) for h in proof["path"]]
    check(
        "inclusion",
        index == n - 1
        and int(proof["tree_size"]) == size
        and proof["leaf_hash"] == leaf.hex()
        and verify_inclusion(index, size, leaf, path, root),
        f"the audit path ({len(path)} hashes) leads from leaf {index} (event {n}) to the "
        f"root of the signed tree of {size} events",
    )
    if size == n:
        check("head", head["head"] == chain["hash"], "event n is the last: its hash is the head")
    key = key_for(keys, head.get("key_id"))
    check(
        "tree_head",
        key is not None and head["game"] == game and verify_tree_head(key, head),
        f"tree head of game {head['game']} signed by key {head.get('key_id')}"
        + ("" if key is not None else " (not among the given keys)"),
    )
    receipt = dispute.get("receipt")
    if isinstance(receipt, dict):
        rkey = key_for(keys, receipt.get("key_id"))
        same = receipt.get("version") != size or receipt.get("head") == head["head"]
        check(
            "receipt",
            rkey is not None
            and receipt.get("game") == game
            and same
            and verify_receipt(rkey, receipt),
            f"receipt for version {receipt.get('version')} signed by key {receipt.get('key_id')}",
        )
