-- 0009_deadlines: turn clocks' deadlines (issue 31; docs/api.md, "Clocks"), one row per game
-- with a running clock: the earliest deadline of any seat (`due_at`), at the game's `version`
-- whose `clock.set` set it. The row is written by a trigger on the `clock.set` event itself, in
-- the append's own statement and transaction: a deadline exists exactly when the stored stream
-- says a clock runs, whichever instance appended it, and survives a restart of every instance.
-- A `clock.set` with no running clock (the game ended, nobody is asked) deletes the row.
--
-- An instance fires a deadline after claiming its row for a lease (`claimed_until`, taken with
-- `FOR UPDATE SKIP LOCKED`: service/eventstore/deadlines.py); an instance that dies holding a
-- claim loses it when the lease ends and another takes it. Firing appends with a
-- compare-and-set on the game's version like any command, so a deadline fires once: a move
-- appended first wins, and the next `clock.set` resets the claim.
CREATE TABLE deadlines (
    game_id       uuid        PRIMARY KEY REFERENCES games (id) ON DELETE CASCADE,
    due_at        timestamptz NOT NULL,
    version       int         NOT NULL,
    claimed_until timestamptz NULL,
    claimed_by    text        NULL
);
CREATE INDEX deadlines_due_idx ON deadlines (due_at);

CREATE FUNCTION deadlines_from_clock() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    due timestamptz;
BEGIN
    SELECT min((s ->> 'deadline')::timestamptz) INTO due
      FROM jsonb_array_elements(NEW.data -> 'seats') AS s;
    IF due IS NULL THEN
        DELETE FROM deadlines WHERE game_id = NEW.game_id;
    ELSE
        INSERT INTO deadlines (game_id, due_at, version)
        VALUES (NEW.game_id, due, NEW.version)
        ON CONFLICT (game_id) DO UPDATE
           SET due_at = EXCLUDED.due_at, version = EXCLUDED.version,
               claimed_until = NULL, claimed_by = NULL
         WHERE deadlines.version < EXCLUDED.version;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER events_clock_deadline AFTER INSERT ON events
    FOR EACH ROW WHEN (NEW.type = 'clock.set') EXECUTE FUNCTION deadlines_from_clock();
