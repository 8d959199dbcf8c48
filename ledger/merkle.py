"""A Merkle tree over a game's event hashes, as Certificate Transparency builds one (RFC 9162).

Pure: no I/O. Beside the hash chain (``ledger.chain``), not instead of it: leaf ``i``
(0-based)
of a game's tree is the chain hash of event ``i + 1``, so the tree of size ``n`` commits to the
same events 1..n as the chain head ``hash_n``, but proves one event's inclusion in O(log n)
hashes instead of every later link.

Construction (RFC 9162 §2.1.1)::

    leaf_hash(d)    = SHA-256(0x00 || d)            d = hash_n, the 32-byte chain hash
    node_hash(l, r) = SHA-256(0x01 || l || r)
    MTH({})         = SHA-256("")
    MTH({d0})       = leaf_hash(d0)
    MTH(D[n])       = node_hash(MTH(D[0:k]), MTH(D[k:n]))   k = largest power of 2 < n

Inclusion proofs (audit paths) and consistency proofs are RFC 9162 §2.1.3 and §2.1.4, and their
verification the RFC's iterative algorithms (§2.1.3.2, §2.1.4.2), hashes listed leaf-side first.

:class:`Tree` keeps every level of the tree built bottom-up (pairs left to right, an odd last
node carried up unchanged — exactly the RFC's shape), so building costs n - 1 node hashes once
and every proof after that is O(log n) list look-ups.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

EMPTY_ROOT = hashlib.sha256(b"").digest()


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


class Tree:
    """The Merkle tree of ``leaves`` (the leaf *data*: chain hashes), with every level kept.

    ``levels[0]`` are the leaf hashes; ``levels[h][i]`` is the root of the leaves
    ``i * 2**h .. min((i + 1) * 2**h, n) - 1``; the last level holds the root alone.
    """

    def __init__(self, leaves: Sequence[bytes] = ()) -> None:
        self.levels: list[list[bytes]] = [[leaf_hash(d) for d in leaves]]
        self._build(0)

    @property
    def size(self) -> int:
        return len(self.levels[0])

    def extend(self, leaves: Sequence[bytes]) -> None:
        """Add leaves at the end; rehashes only the right edge (O(k + log n) node hashes)."""
        if not leaves:
            return
        start = self.size
        self.levels[0].extend(leaf_hash(d) for d in leaves)
        self._build(start)

    def _build(self, start: int) -> None:
        """Recompute every node whose range includes a leaf at or after ``start``."""
        level, first = 0, start
        while len(self.levels[level]) > 1:
            below = self.levels[level]
            if level + 1 == len(self.levels):
                self.levels.append([])
            above = self.levels[level + 1]
            first = first // 2
            del above[first:]
            for i in range(2 * first, len(below), 2):
                above.append(node_hash(below[i], below[i + 1]) if i + 1 < len(below) else below[i])
            level += 1
        del self.levels[level + 1 :]

    def root(self) -> bytes:
        if self.size == 0:
            return EMPTY_ROOT
        return self.levels[-1][0]

    def _node(self, lo: int, hi: int) -> bytes:
        """MTH(D[lo:hi]) for a range that is a node of this tree: lo a multiple of 2**h and
        hi = lo + 2**h, or hi the tree's size and hi - lo <= 2**h."""
        height = (hi - lo - 1).bit_length()
        return self.levels[height][lo >> height]

    def inclusion_proof(self, index: int) -> list[bytes]:
        """PATH(index, D[n]) of RFC 9162 §2.1.3.1: sibling hashes from the leaf up."""
        if not 0 <= index < self.size:
            raise IndexError(f"leaf {index} of a tree of size {self.size}")
        path: list[bytes] = []
        for level in self.levels[:-1]:
            sibling = index ^ 1
            if sibling < len(level):
                path.append(level[sibling])
            index //= 2
        return path

    def consistency_proof(self, old_size: int) -> list[bytes]:
        """PROOF(m, D[n]) of RFC 9162 §2.1.4.1 for ``m = old_size`` and this tree's size."""
        n = self.size
        if not 0 < old_size <= n:
            raise ValueError(f"no consistency proof from size {old_size} to size {n}")
        return self._subproof(old_size, 0, n, True)

    def _subproof(self, m: int, lo: int, hi: int, complete: bool) -> list[bytes]:
        # SUBPROOF(m, D[lo:hi], b); m counts leaves from lo
        n = hi - lo
        if m == n:
            return [] if complete else [self._node(lo, hi)]
        k = 1 << ((n - 1).bit_length() - 1)  # largest power of 2 smaller than n
        if m <= k:
            return [*self._subproof(m, lo, lo + k, complete), self._node(lo + k, hi)]
        return [*self._subproof(m - k, lo + k, hi, False), self._node(lo, lo + k)]


def root_of(leaves: Sequence[bytes]) -> bytes:
    return Tree(leaves).root()


def verify_inclusion(
    index: int, size: int, leaf: bytes, proof: Sequence[bytes], root: bytes
) -> bool:
    """RFC 9162 §2.1.3.2: does ``proof`` show that the leaf hash ``leaf`` is leaf ``index`` of
    the tree of ``size`` leaves whose root is ``root``?"""
    if not 0 <= index < size:
        return False
    fn, sn = index, size - 1
    r = leaf
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(
    old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> bool:
    """RFC 9162 §2.1.4.2: does ``proof`` show that the tree of ``old_size`` leaves with root
    ``old_root`` is a prefix of the tree of ``new_size`` leaves with root ``new_root``?"""
    if not 0 < old_size <= new_size:
        return False
    if old_size == new_size:
        return not proof and old_root == new_root
    if not proof:
        return False
    path = list(proof)
    if old_size & (old_size - 1) == 0:  # a power of 2: the old root is the first node
        path.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return fr == old_root and sr == new_root and sn == 0
