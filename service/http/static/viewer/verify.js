// verify.js — checks a dispute file (GET /v1/games/{id}/audit/{n}) in the browser with
// WebCrypto, trusting nothing but the server's published keys (GET /v1/keys). The same checks
// as `manifest verify-dispute` (service/treeheads.py verify_dispute):
//
//   link       SHA-256(prev_hash ‖ canonical) = hash, and the canonical bytes name event n of
//              this game (only when the canonical bytes are disclosed: not while a game is live)
//   events     event n's hash as listed in the file (and in /events, when given) is that hash
//   inclusion  the RFC 9162 audit path leads from leaf n-1 = SHA-256(0x00 ‖ hash) to the root of
//              the signed tree head (node = SHA-256(0x01 ‖ left ‖ right); §2.1.3.2 algorithm)
//   head       when event n is the last one, its hash is the tree head's chain head
//   tree head  Ed25519 by the key its key_id names, over {"game","head","root","size"}
//              (keys sorted, no spaces: service/receipts.py tree_head_message)
//   receipt    (when present) Ed25519 over {"game","head","version"}; at the tree's size it
//              signs the same head
//
// The chain's canonical bytes are checked in verifyLink alone, so a change of the canonical
// form touches only that function.

const enc = new TextEncoder();

export function hexToBytes(hex) {
  if (typeof hex !== "string" || hex.length % 2 !== 0 || /[^0-9a-f]/i.test(hex)) {
    throw new Error("not a hex string");
  }
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function bytesToHex(bytes) {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

function base64ToBytes(text) {
  const raw = atob(text);
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

export async function sha256(...parts) {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const joined = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    joined.set(p, at);
    at += p.length;
  }
  return new Uint8Array(await crypto.subtle.digest("SHA-256", joined));
}

const short = (hex) => `${String(hex).slice(0, 16)}…`;

// --- the hash chain: event n's link (canonical form 1) ----------------------------------------
// hash_n = SHA-256(hash_{n-1} ‖ canonical(event n)); the canonical bytes are JSON naming the
// event's game and version. Returns one check.
export async function verifyLink(chain, game, n) {
  if (chain.canonical == null) {
    return {
      check: "link",
      ok: null,
      detail: "canonical bytes are not disclosed while the game is live (they hold hidden data)",
    };
  }
  const got = bytesToHex(await sha256(hexToBytes(chain.prev_hash), enc.encode(chain.canonical)));
  let fields = {};
  try {
    fields = JSON.parse(chain.canonical);
  } catch {
    fields = {};
  }
  const names = fields.version === n && fields.game === game;
  return {
    check: "link",
    ok: got === chain.hash && names,
    detail:
      `SHA-256(prev_hash ‖ canonical) = ${short(got)}, hash ${short(chain.hash)}; ` +
      `canonical names event ${fields.version} of game ${fields.game}`,
  };
}

// --- the Merkle tree (RFC 9162) ---------------------------------------------------------------
export const leafHash = (data) => sha256(Uint8Array.of(0), data);
export const nodeHash = (left, right) => sha256(Uint8Array.of(1), left, right);

// RFC 9162 §2.1.3.2: does `path` (sibling hashes, leaf side first) show that `leaf` (a leaf
// hash) is leaf `index` of the tree of `size` leaves whose root is `root`?
export async function verifyInclusion(index, size, leaf, path, root) {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) {
    return false;
  }
  let fn = BigInt(index);
  let sn = BigInt(size - 1);
  let r = leaf;
  for (const p of path) {
    if (sn === 0n) return false;
    if (fn & 1n || fn === sn) {
      r = await nodeHash(p, r);
      if (!(fn & 1n)) {
        while (!(fn & 1n) && fn !== 0n) {
          fn >>= 1n;
          sn >>= 1n;
        }
      }
    } else {
      r = await nodeHash(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n && bytesToHex(r) === bytesToHex(root);
}

// --- signatures ---------------------------------------------------------------------------------
// Exactly the bytes the server signs: msgspec's JSON with keys sorted, no spaces.
export function receiptMessage(receipt) {
  return JSON.stringify({ game: receipt.game, head: receipt.head, version: receipt.version });
}

export function treeHeadMessage(head) {
  return JSON.stringify({ game: head.game, head: head.head, root: head.root, size: head.size });
}

// The public key a key id names in a /v1/keys list; the id must be the key's own
// (first 16 hex digits of SHA-256 of the raw key), as the server's verifier demands.
async function keyFor(keys, keyId) {
  const entry = (Array.isArray(keys) ? keys : []).find((k) => k && k.id === keyId);
  if (!entry) return null;
  const raw = base64ToBytes(String(entry.public_key));
  if (bytesToHex(await sha256(raw)).slice(0, 16) !== keyId) return null;
  return crypto.subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]);
}

async function verifySigned(name, signed, message, keys, detail) {
  try {
    const key = await keyFor(keys, signed.key_id);
    if (!key) return { check: name, ok: false, detail: `${detail} (no published key ${signed.key_id})` };
    const ok = await crypto.subtle.verify(
      { name: "Ed25519" },
      key,
      base64ToBytes(String(signed.signature)),
      enc.encode(message),
    );
    return { check: name, ok, detail };
  } catch (error) {
    return { check: name, ok: false, detail: `${detail}: ${error.message || error}` };
  }
}

export function verifyReceipt(receipt, keys) {
  return verifySigned(
    "receipt",
    receipt,
    receiptMessage(receipt),
    keys,
    `Ed25519 by key ${receipt.key_id} over head ${short(receipt.head)} at version ${receipt.version}`,
  );
}

export function verifyTreeHead(head, keys) {
  return verifySigned(
    "tree head",
    head,
    treeHeadMessage(head),
    keys,
    `Ed25519 by key ${head.key_id} over the tree of ${head.size} events of game ${head.game}, ` +
      `root ${short(head.root)}`,
  );
}

// --- the whole dispute file -------------------------------------------------------------------
async function checksOf(dispute, keys, listedHash) {
  const checks = [];
  const game = String(dispute.game);
  const n = dispute.version;
  const chain = dispute.chain;
  const proof = dispute.inclusion;
  const head = proof.tree_head;
  checks.push(await verifyLink(chain, game, n));

  const listed = (dispute.events || []).find((e) => e.version === n);
  if (listed || listedHash !== undefined) {
    checks.push({
      check: "events",
      ok: (!listed || listed.hash === chain.hash) && (listedHash === undefined || listedHash === chain.hash),
      detail: "event n's hash as listed (dispute file and event log) is the proven one",
    });
  }

  const digest = hexToBytes(chain.hash);
  const leaf = await leafHash(digest);
  const path = proof.path.map(hexToBytes);
  const size = head.size;
  const index = proof.leaf_index;
  const included =
    index === n - 1 &&
    proof.tree_size === size &&
    proof.leaf_hash === bytesToHex(leaf) &&
    (await verifyInclusion(index, size, leaf, path, hexToBytes(head.root)));
  checks.push({
    check: "inclusion",
    ok: included,
    detail:
      `the audit path (${path.length} hashes) leads from leaf ${index} (event ${n}) to the ` +
      `root ${short(head.root)} of the signed tree of ${size} events`,
  });
  if (size === n) {
    checks.push({
      check: "head",
      ok: head.head === chain.hash,
      detail: "event n is the last: its hash is the tree head's chain head",
    });
  }
  const signedHead = await verifyTreeHead(head, keys);
  if (head.game !== game) {
    signedHead.ok = false;
    signedHead.detail += ` — not this game (${game})`;
  }
  checks.push(signedHead);

  const receipt = dispute.receipt;
  if (receipt && typeof receipt === "object") {
    const signed = await verifyReceipt(receipt, keys);
    const same = receipt.version !== size || receipt.head === head.head;
    signed.ok = signed.ok && receipt.game === game && same;
    if (!same) signed.detail += " — signs another head than the tree head at the same size";
    checks.push(signed);
  }
  return checks;
}

// Everything about one dispute file; `keys` is the `keys` list of GET /v1/keys, `listedHash`
// (optional) event n's hash as /events lists it. Never throws: a malformed file fails a check.
// Returns {ok, checks: [{check, ok (true, false, or null: not checkable), detail}]}.
export async function verifyDispute(dispute, keys, listedHash) {
  let checks;
  try {
    checks = await checksOf(dispute, keys, listedHash);
  } catch (error) {
    checks = [{ check: "format", ok: false, detail: `not a dispute file: ${error.message || error}` }];
  }
  const decided = checks.filter((c) => c.ok !== null);
  return { ok: decided.length > 0 && decided.every((c) => c.ok === true), checks };
}
