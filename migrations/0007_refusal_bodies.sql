-- 0007_refusal_bodies: refused commands are stored bounded (issue 25). A refusal keeps the
-- SHA-256 (body_sha256) and length (body_size) of its whole body's canonical JSON (keys sorted,
-- no spaces), and the body itself only when that is at most MANIFEST_REFUSAL_BODY_PREFIX bytes;
-- a longer body is stored as its first bytes (body_prefix, cut at a character boundary) and
-- body is NULL. Accepted commands, and refusals recorded before this, keep their whole body
-- (body_sha256, body_size, body_prefix NULL). An Idempotency-Key sent again is compared by the
-- hash. Refusals not stored because a storage budget (per client address, bytes per minute)
-- was spent are counted per game and seat in rejections_unrecorded.over_budget (count stays
-- every refusal not recorded, over the per-seat cap or over a budget). The CHECK is NOT VALID:
-- every older row has its body, and a big commands table is not scanned under the lock.
ALTER TABLE commands ALTER COLUMN body DROP NOT NULL;
ALTER TABLE commands ADD COLUMN body_sha256 bytea NULL CHECK (length(body_sha256) = 32);
ALTER TABLE commands ADD COLUMN body_size integer NULL CHECK (body_size >= 0);
ALTER TABLE commands ADD COLUMN body_prefix text NULL;
ALTER TABLE commands ADD CONSTRAINT commands_body_kept
    CHECK (body IS NOT NULL OR (body_sha256 IS NOT NULL AND body_prefix IS NOT NULL)) NOT VALID;
ALTER TABLE rejections_unrecorded ADD COLUMN over_budget bigint NOT NULL DEFAULT 0;
