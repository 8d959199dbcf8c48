-- 0003_signing_keys: every public key the server has signed with, so that receipts and tree
-- heads signed before a key rotation still verify (GET /v1/keys lists them all, by key id).
-- Public keys only: a configured private key (MANIFEST_SIGNING_KEY) never enters the database.
-- key_id = the first 16 hex digits of SHA-256(raw 32-byte public key) (service/receipts.py).
CREATE TABLE signing_keys (
    key_id     text PRIMARY KEY,
    public_key bytea NOT NULL UNIQUE CHECK (length(public_key) = 32),
    first_used timestamptz NOT NULL DEFAULT now()
);
-- The database-stored key of the embedded default, if one was made already.
INSERT INTO signing_keys (key_id, public_key, first_used)
SELECT substr(encode(sha256(public_key), 'hex'), 1, 16), public_key, coalesce(created_at, now())
  FROM server_keys
ON CONFLICT DO NOTHING;
