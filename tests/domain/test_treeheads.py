"""ledger.treeheads without a server: the per-process tree cache never serves a wrong tree,
and the offline check of a dispute file accepts a genuine one and refuses malformed ones."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ledger.chain import link
from ledger.merkle import Tree
from ledger.receipts import Signer
from ledger.treeheads import inclusion, verify_dispute
from service.application.disputes import CACHE_FROM, TreeCache
from service.cli import _verify_dispute
from service.terminal import EXIT_BAD_FILE, EXIT_FILE, Failure

GAME = "0b0e4a8e-6a43-4b8a-9a51-7d6d1c2b9a11"


def _chain(count: int, salt: bytes = b"") -> list[bytes]:
    hashes, prev = [], bytes(32)
    for i in range(count):
        prev = link(prev, salt + i.to_bytes(4, "big"))
        hashes.append(prev)
    return hashes


def test_the_cache_extends_a_grown_game_and_rebuilds_a_different_one() -> None:
    cache = TreeCache(games=2)
    hashes = _chain(CACHE_FROM + 40)
    first = cache.tree("g", hashes[: CACHE_FROM + 10])
    assert first.root() == Tree(hashes[: CACHE_FROM + 10]).root()
    grown = cache.tree("g", hashes)
    assert grown is first and grown.root() == Tree(hashes).root()  # extended in place
    # a request for fewer events than cached gets its own tree; the cache keeps the longer one
    shorter = cache.tree("g", hashes[: CACHE_FROM + 5])
    assert shorter is not grown and shorter.root() == Tree(hashes[: CACHE_FROM + 5]).root()
    assert cache.tree("g", hashes) is grown
    # other hashes under the same game id (never happens to a stored game): rebuilt, not reused
    other = _chain(CACHE_FROM + 50, b"x")
    assert cache.tree("g", other).root() == Tree(other).root()
    # small games are not cached at all
    small = _chain(10)
    assert cache.tree("s", small) is not cache.tree("s", small)


def _dispute(signer: Signer, hashes: list[bytes], n: int) -> dict[str, object]:
    tree = Tree(hashes)
    prev = bytes(32) if n == 1 else hashes[n - 2]
    return {
        "game": GAME,
        "version": n,
        "chain": {"canonical": None, "prev_hash": prev.hex(), "hash": hashes[n - 1].hex()},
        "inclusion": inclusion(signer, GAME, tree, n, hashes[-1]),
        "receipt": signer.receipt(GAME, len(hashes), hashes[-1].hex()),
    }


def test_a_genuine_dispute_verifies_and_garbage_does_not(tmp_path: Path) -> None:
    signer = Signer(Ed25519PrivateKey.generate())
    keys = {"keys": [signer.public_document()]}
    hashes = _chain(37)
    for n in (1, 5, 36, 37):
        report = verify_dispute(_dispute(signer, hashes, n), keys)
        assert report["ok"] is True, report
    for garbage in (None, [], "x", {}, {"game": GAME, "version": "five"}):
        assert verify_dispute(garbage, keys)["ok"] is False
    genuine = _dispute(signer, hashes, 5)
    assert verify_dispute(genuine, {"keys": "none"})["ok"] is False
    assert verify_dispute({**genuine, "inclusion": {"path": 5}}, keys)["ok"] is False
    # the CLI's reading: an unreadable or non-JSON file is a user's mistake, told in one line
    # with its own exit status (service/terminal.py), never a traceback
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "keys.json").write_text("{}")
    with pytest.raises(Failure) as bad:
        _verify_dispute(str(tmp_path / "bad.json"), str(tmp_path / "keys.json"))
    assert bad.value.status == EXIT_BAD_FILE
    with pytest.raises(Failure) as missing:
        _verify_dispute(str(tmp_path / "missing"), str(tmp_path / "keys.json"))
    assert missing.value.status == EXIT_FILE
