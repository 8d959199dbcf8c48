-- 0010_players: players and their keys (issue 39; docs/api.md, "Players"). A player is a name
-- with keys; a key is stored only as its SHA-256 (`key_hash`), with the scopes it holds. A
-- revoked key keeps its row (`revoked_at` set), so listing shows it and it never works again:
-- every request with a player key reads this table (no process caches a key), so a revocation
-- holds at once on every instance. A seat taken with a player key is bound to the player
-- (`seat_tokens.player_id`); the seat keeps its seat token too (seat tokens work as before).
CREATE TABLE players (
    id         uuid        PRIMARY KEY,
    name       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE player_keys (
    id         uuid        PRIMARY KEY,
    player_id  uuid        NOT NULL REFERENCES players (id),
    key_hash   bytea       NOT NULL UNIQUE CHECK (length(key_hash) = 32),
    scopes     text[]      NOT NULL,
    label      text        NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz NULL
);
CREATE INDEX player_keys_player_idx ON player_keys (player_id, created_at);

ALTER TABLE seat_tokens ADD COLUMN player_id uuid NULL REFERENCES players (id);
-- one seat per player per game
CREATE UNIQUE INDEX seat_tokens_player_game ON seat_tokens (player_id, game_id)
    WHERE player_id IS NOT NULL;
