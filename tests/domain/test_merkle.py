"""ledger.merkle against RFC 9162 itself: the Certificate Transparency reference vectors,
and the
RFC's recursive definitions (MTH, PATH, PROOF) computed independently here, by list slicing, for
every leaf of every tree size 1..64 and every pair of sizes; tampered proofs fail."""

from __future__ import annotations

import hashlib

import pytest

from ledger.merkle import EMPTY_ROOT, Tree, leaf_hash, root_of, verify_consistency, verify_inclusion


# --- the RFC's definitions, transcribed independently (RFC 9162 §2.1.1, §2.1.3.1, §2.1.4.1) ---
def _sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than n (n > 1)."""
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def mth(d: list[bytes]) -> bytes:
    if not d:
        return _sha(b"")
    if len(d) == 1:
        return _sha(b"\x00" + d[0])
    k = _split(len(d))
    return _sha(b"\x01" + mth(d[:k]) + mth(d[k:]))


def path(m: int, d: list[bytes]) -> list[bytes]:
    if len(d) == 1:
        return []
    k = _split(len(d))
    if m < k:
        return [*path(m, d[:k]), mth(d[k:])]
    return [*path(m - k, d[k:]), mth(d[:k])]


def proof(m: int, d: list[bytes]) -> list[bytes]:
    return subproof(m, d, True)


def subproof(m: int, d: list[bytes], b: bool) -> list[bytes]:
    n = len(d)
    if m == n:
        return [] if b else [mth(d)]
    k = _split(n)
    if m <= k:
        return [*subproof(m, d[:k], b), mth(d[k:])]
    return [*subproof(m - k, d[k:], False), mth(d[:k])]


# 64 distinct leaves of different lengths (the chain's leaves are 32 bytes; the tree takes any)
DATA = [hashlib.sha256(i.to_bytes(2, "big")).digest()[: 1 + i % 32] for i in range(64)]


# --- Certificate Transparency's published test vectors (RFC 6962 = RFC 9162's tree) -----------
CT_LEAVES = [
    bytes.fromhex(h)
    for h in (
        "",
        "00",
        "10",
        "2021",
        "3031",
        "40414243",
        "5051525354555657",
        "606162636465666768696a6b6c6d6e6f",
    )
]
CT_ROOTS = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]


def _hexes(hashes: list[bytes]) -> list[str]:
    return [h.hex() for h in hashes]


def test_certificate_transparency_vectors() -> None:
    assert EMPTY_ROOT.hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert root_of([]) == EMPTY_ROOT
    for n in range(1, 9):
        assert root_of(CT_LEAVES[:n]).hex() == CT_ROOTS[n - 1], n
    tree = Tree(CT_LEAVES)
    assert _hexes(tree.inclusion_proof(0)) == [
        "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
    ]
    assert _hexes(tree.inclusion_proof(5)) == [
        "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    ]
    assert _hexes(tree.consistency_proof(2)) == [
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
    ]
    root = bytes.fromhex(CT_ROOTS[7])
    assert verify_inclusion(5, 8, leaf_hash(CT_LEAVES[5]), tree.inclusion_proof(5), root)
    old = bytes.fromhex(CT_ROOTS[1])
    assert verify_consistency(2, 8, old, root, tree.consistency_proof(2))


# --- every leaf of every size, against the RFC's definitions ------------------------------------
def _tampered(proof_: list[bytes]) -> list[list[bytes]]:
    """Every way of spoiling a proof by one step: a flipped bit in each hash, one hash dropped,
    one added, two swapped."""
    out: list[list[bytes]] = []
    for i, h in enumerate(proof_):
        out.append([*proof_[:i], bytes([h[0] ^ 1]) + h[1:], *proof_[i + 1 :]])
        out.append([*proof_[:i], *proof_[i + 1 :]])
    out.append([*proof_, bytes(32)])
    if len(proof_) > 1 and proof_[0] != proof_[1]:
        out.append([proof_[1], proof_[0], *proof_[2:]])
    return out


@pytest.mark.parametrize("n", range(1, 65))
def test_inclusion_of_every_leaf_matches_the_rfc(n: int) -> None:
    leaves = DATA[:n]
    tree = Tree(leaves)
    root = tree.root()
    assert root == mth(leaves)
    for m in range(n):
        audit = tree.inclusion_proof(m)
        assert audit == path(m, leaves), (n, m)
        leaf = leaf_hash(leaves[m])
        assert verify_inclusion(m, n, leaf, audit, root)
        # the proof shows this leaf at this index in this tree, and nothing else
        assert not verify_inclusion(m, n, leaf_hash(leaves[m] + b"x"), audit, root)
        assert not verify_inclusion(m, n, leaf, audit, leaf_hash(b"other root"))
        assert not verify_inclusion(m, n, leaves[m], audit, root)  # unhashed leaf data
        assert not verify_inclusion(n, n, leaf, audit, root)
        assert not verify_inclusion(-1, n, leaf, audit, root)
        for other in {m - 1, m + 1, m ^ 1, m ^ 2} - {m}:
            if 0 <= other < n:
                assert not verify_inclusion(other, n, leaf, audit, root), (n, m, other)
        # (no check of a wrong tree size: it passes when the path has the same shape — leaf 0
        # of 3 leaves and of 4 — which is why the tree head signs the size beside the root)
        for bad in _tampered(audit):
            assert not verify_inclusion(m, n, leaf, bad, root), (n, m)


@pytest.mark.parametrize("n", range(1, 65))
def test_consistency_with_every_smaller_tree_matches_the_rfc(n: int) -> None:
    leaves = DATA[:n]
    tree = Tree(leaves)
    root = tree.root()
    for m in range(1, n + 1):
        old_root = mth(leaves[:m])
        proof_ = tree.consistency_proof(m)
        assert proof_ == proof(m, leaves), (n, m)
        assert verify_consistency(m, n, old_root, root, proof_)
        assert not verify_consistency(m, n, leaf_hash(b"forged"), root, proof_)
        assert not verify_consistency(m, n, old_root, leaf_hash(b"forged"), proof_)
        if m < n:
            assert not verify_consistency(m, n, old_root, root, [])
            # a tree whose first m leaves differ is not consistent with the old root
            forked = mth([*leaves[: m - 1], b"forked", *leaves[m:]])
            assert not verify_consistency(m, n, old_root, forked, proof_)
            for bad in _tampered(proof_):
                assert not verify_consistency(m, n, old_root, root, bad), (n, m)
    with pytest.raises(ValueError):
        tree.consistency_proof(0)
    with pytest.raises(ValueError):
        tree.consistency_proof(n + 1)


def test_extending_a_tree_equals_building_it_whole() -> None:
    tree = Tree()
    assert tree.root() == EMPTY_ROOT and tree.size == 0
    for n, step in enumerate([1, 1, 1, 2, 3, 1, 7, 16, 1, 31], 1):
        before = tree.size
        tree.extend(DATA[before : before + step])
        whole = Tree(DATA[: tree.size])
        assert tree.levels == whole.levels, n
        assert tree.root() == mth(DATA[: tree.size])
    with pytest.raises(IndexError):
        tree.inclusion_proof(tree.size)
