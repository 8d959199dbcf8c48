-- 0008_kept_documents: the heavy documents of a game (its whole replay, its export, its audit
-- report), computed once and kept, so a second download costs a read and not a fold (issue 25;
-- docs/scaling.md, "Heavy reads"). One row per (game, kind, redaction class): `class` is
-- 'all' (every caller reads the same bytes), 'spectator' or 'seat:N'. `stamp` names what the
-- body was computed from — for a replay the game's version and head, for an export or an audit
-- the fingerprint of every stored row they read — and a row is served only while the game's
-- stamp is still that one (a later message or refused command replaces it). Only finished
-- games are kept. No foreign key to games: nothing here is evidence, a row is a cache that can
-- be dropped at any time (DELETE FROM kept_documents) and is computed again on the next read.
CREATE TABLE kept_documents (
    game_id uuid        NOT NULL,
    kind    text        NOT NULL CHECK (kind IN ('replay', 'export', 'audit')),
    class   text        NOT NULL,
    stamp   bytea       NOT NULL,
    body    bytea       NOT NULL,
    kept_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (game_id, kind, class)
);
-- Bodies are mostly JSON text: compressed, out of line (the default for bytea), which is what
-- a 1 MB replay wants.
