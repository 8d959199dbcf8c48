-- 0006_events_partitioned: the event log partitioned by game (declarative HASH partitions on
-- game_id), so that no single table or index grows with every event of every game: a game's
-- reads and appends touch one partition (the planner prunes on game_id = $1), vacuum and index
-- maintenance work partition by partition, and a partition can later be split or moved without
-- touching the others.
--
-- Unchanged in meaning: the columns and their CHECK constraints, the foreign key to games, the
-- primary key (game_id, version) that backs optimistic appends (a partitioned table's unique
-- keys must contain the partition key: this one does), the partial index on command_id, and the
-- immutability of events (UPDATE/DELETE/TRUNCATE raise 'events are immutable'). Statements that
-- name the table "events" (service/optimistic.py, service/pgrows.py) work as before.
--
-- Existing games survive: every row is copied, byte for byte (jsonb to jsonb, bytea to bytea),
-- into the new table, so every stored hash still verifies. The copy runs inside this
-- migration's transaction: instances keep reading and block on writes until it commits; on a
-- large database run `manifest migrate` before rolling out (docs/scaling.md).
--
-- 16 partitions (MODULUS 16): see docs/scaling.md for why and how to go further.

ALTER TABLE events RENAME TO events_unpartitioned;
ALTER TABLE events_unpartitioned RENAME CONSTRAINT events_pkey TO events_unpartitioned_pkey;
ALTER INDEX events_command_idx RENAME TO events_unpartitioned_command_idx;

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
    public      jsonb NULL,  -- 0005_hidden_values: the chained form of an event with hidden values
    PRIMARY KEY (game_id, version)
) PARTITION BY HASH (game_id);

DO $$
BEGIN
    FOR r IN 0..15 LOOP
        EXECUTE format(
            'CREATE TABLE events_p%s PARTITION OF events FOR VALUES WITH (MODULUS 16, REMAINDER %s)',
            lpad(r::text, 2, '0'), r);
        -- Statement-level triggers are not inherited: TRUNCATE of one partition is refused too.
        EXECUTE format(
            'CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events_p%s '
            'FOR EACH STATEMENT EXECUTE FUNCTION events_immutable()',
            lpad(r::text, 2, '0'));
    END LOOP;
END;
$$;

CREATE INDEX events_command_idx ON events (command_id) WHERE command_id IS NOT NULL;

INSERT INTO events
       (game_id, version, type, data, seat, command_id, recorded_at, prev_hash, hash, public)
SELECT game_id, version, type, data, seat, command_id, recorded_at, prev_hash, hash, public
  FROM events_unpartitioned;

DROP TABLE events_unpartitioned;

-- Row triggers on a partitioned table are cloned onto every partition (PostgreSQL 13+), so an
-- UPDATE or DELETE that names a partition directly is refused as well.
CREATE TRIGGER events_no_update_delete
    BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION events_immutable();

CREATE TRIGGER events_no_truncate
    BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_immutable();
