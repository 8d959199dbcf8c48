-- 0002_idempotency_per_seat: an Idempotency-Key belongs to the seat that sent it.
-- Before, keys were unique per game, so another seat sending a key already used got
-- "idempotency.key_reused" — which told it the key existed. Now each (game, seat) has its own
-- key space: another seat's use of the same key is an ordinary new command. Commands without a
-- seat (none send a key today) share one key space per game (coalesce(seat, -1)).
-- The index keeps the name service/optimistic.py recognises ("commands_idempotency...").
DROP INDEX commands_idempotency_idx;
CREATE UNIQUE INDEX commands_idempotency_idx
    ON commands (game_id, coalesce(seat, -1), idempotency_key) WHERE idempotency_key IS NOT NULL;
