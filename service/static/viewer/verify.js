// verify.js — checks a dispute file in the browser with WebCrypto, trusting nothing but
// the server's published key (GET /v1/keys).
//
// Today's proof (service/history.py, docs/receipts-and-audit.md):
//   hash_n = SHA-256(hash_{n-1} || canonical(event n)), hash_0 = 32 zero bytes;
//   chain = {canonical, prev_hash, hash, to_head: [{version, prev_hash, hash}], head};
//   receipt = Ed25519 over {"game","head","version"} (keys sorted, no spaces).
// Everything proof-specific lives in this module, so a different proof (e.g. a Merkle
// inclusion proof against a signed tree head) replaces only verifyChain below.

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

// The chain proof: event n's hash recomputed from its canonical bytes, then every link up to
// the head joined to the one before it. Returns a list of {check, ok, detail}.
export async function verifyChain(chain) {
  const checks = [];
  if (chain.canonical == null) {
    checks.push({
      check: "event hash",
      ok: null,
      detail: "canonical bytes are not disclosed while the game is live (they hold hidden data)",
    });
  } else {
    const got = bytesToHex(await sha256(hexToBytes(chain.prev_hash), enc.encode(chain.canonical)));
    checks.push({
      check: "event hash",
      ok: got === chain.hash,
      detail: `SHA-256(prev_hash ‖ canonical) = ${got.slice(0, 16)}…, stored ${chain.hash.slice(0, 16)}…`,
    });
  }
  let last = chain.hash;
  let joined = true;
  for (const step of chain.to_head) {
    if (step.prev_hash !== last) {
      joined = false;
      break;
    }
    last = step.hash;
  }
  checks.push({
    check: "links to head",
    ok: joined && last === chain.head,
    detail: `${chain.to_head.length} later events link event to head ${chain.head.slice(0, 16)}…`,
  });
  return checks;
}

export function receiptMessage(receipt) {
  // Keys sorted, no spaces: exactly the bytes the server signs.
  return JSON.stringify({ game: receipt.game, head: receipt.head, version: receipt.version });
}

export async function verifyReceipt(receipt, keys) {
  const key = keys.find((k) => k.id === receipt.key_id);
  if (!key) return { check: "receipt signature", ok: false, detail: `no key ${receipt.key_id}` };
  try {
    const publicKey = await crypto.subtle.importKey(
      "raw",
      base64ToBytes(key.public_key),
      { name: "Ed25519" },
      false,
      ["verify"],
    );
    const ok = await crypto.subtle.verify(
      { name: "Ed25519" },
      publicKey,
      base64ToBytes(receipt.signature),
      enc.encode(receiptMessage(receipt)),
    );
    return {
      check: "receipt signature",
      ok,
      detail: `Ed25519 by key ${key.id} over head ${receipt.head.slice(0, 16)}… at version ${receipt.version}`,
    };
  } catch (error) {
    return { check: "receipt signature", ok: false, detail: `WebCrypto: ${error.message || error}` };
  }
}

// Everything about one dispute file: chain proof, the receipt's signature, and that the
// receipt signs the head the proof reaches (and, given, the event's hash as listed).
export async function verifyDispute(dispute, keys, listedHash) {
  const checks = await verifyChain(dispute.chain);
  checks.push(await verifyReceipt(dispute.receipt, keys));
  checks.push({
    check: "receipt covers proof",
    ok: dispute.receipt.head === dispute.chain.head && dispute.receipt.game === dispute.game,
    detail: "the signed head is the head the chain proof reaches",
  });
  if (listedHash !== undefined) {
    checks.push({
      check: "matches event log",
      ok: listedHash === dispute.chain.hash,
      detail: "the event's hash in /events is the proven one",
    });
  }
  const decided = checks.filter((c) => c.ok !== null);
  return { ok: decided.length > 0 && decided.every((c) => c.ok), checks };
}
