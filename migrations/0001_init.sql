-- 0001_init: games, the immutable event log, commands, secrets, seat tokens, server keys.
-- Applied once by service/migrate.py inside one transaction, under an advisory lock.

CREATE TABLE IF NOT EXISTS schema_migrations (
    name       text PRIMARY KEY,
    checksum   text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);

-- One row per game (= one event stream). version/head always describe the last event.
CREATE TABLE games (
    id          uuid PRIMARY KEY,
    game        text NOT NULL,
    seats       int NOT NULL CHECK (seats > 0),
    options     jsonb NOT NULL,
    status      text NOT NULL CHECK (status IN ('open', 'active', 'finished')),
    version     int NOT NULL DEFAULT 0 CHECK (version >= 0),
    head        bytea NOT NULL DEFAULT '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea
                CHECK (length(head) = 32),
    invite_code text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    players     jsonb NOT NULL DEFAULT '[]'::jsonb,   -- one name (or null) per seat
    result      jsonb
);
CREATE INDEX games_status_created_idx ON games (status, created_at);
CREATE INDEX games_game_status_idx ON games (game, status);
CREATE INDEX games_created_id_idx ON games (created_at, id);

-- The event log. hash = sha256(prev_hash || canonical bytes), see service/chain.py.
CREATE TABLE events (
    game_id     uuid NOT NULL REFERENCES games (id),
    version     int NOT NULL CHECK (version > 0),
    type        text NOT NULL,
    data        jsonb NOT NULL,
    seat        int NULL,
    command_id  uuid NULL,
    recorded_at timestamptz NOT NULL,
    prev_hash   bytea NOT NULL CHECK (length(prev_hash) = 32),
    hash        bytea NOT NULL CHECK (length(hash) = 32),
    PRIMARY KEY (game_id, version)
);
CREATE INDEX events_command_idx ON events (command_id) WHERE command_id IS NOT NULL;

CREATE FUNCTION events_immutable() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events are immutable: % on table events is not allowed', TG_OP
        USING ERRCODE = 'restrict_violation',
              HINT = 'the event log is append-only; correct a game with new events';
END;
$$;

CREATE TRIGGER events_no_update_delete
    BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION events_immutable();

CREATE TRIGGER events_no_truncate
    BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_immutable();

-- Every command received, with its outcome; idempotency keys are unique per game.
CREATE TABLE commands (
    id              uuid PRIMARY KEY,
    game_id         uuid NOT NULL REFERENCES games (id),
    seat            int NULL,
    idempotency_key text NULL,
    type            text NOT NULL,
    body            jsonb NOT NULL,
    received_at     timestamptz NOT NULL,
    outcome         text NOT NULL CHECK (outcome IN ('accepted', 'rejected', 'conflict')),
    error_code      text NULL,
    error_detail    text NULL,
    first_version   int NULL,
    last_version    int NULL,
    response        jsonb NULL
);
CREATE UNIQUE INDEX commands_idempotency_idx
    ON commands (game_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX commands_seat_idx ON commands (game_id, seat, received_at);

CREATE TABLE secrets (
    game_id         uuid PRIMARY KEY REFERENCES games (id),
    seed            bytea NOT NULL,
    host_token_hash bytea NOT NULL
);

CREATE TABLE seat_tokens (
    game_id    uuid NOT NULL REFERENCES games (id),
    seat       int NOT NULL CHECK (seat >= 0),
    token_hash bytea NOT NULL UNIQUE,
    name       text,
    PRIMARY KEY (game_id, seat)
);

-- Ed25519 keys for signed receipts.
CREATE TABLE server_keys (
    id          text PRIMARY KEY,
    private_key bytea NOT NULL,
    public_key  bytea NOT NULL,
    created_at  timestamptz DEFAULT now()
);
