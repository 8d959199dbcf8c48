-- 0002_rejections_unrecorded: refused commands past the per-seat cap (MANIFEST_REJECTED_CAP)
-- are not recorded one by one; they are counted here, per game and seat.
CREATE TABLE rejections_unrecorded (
    game_id uuid    NOT NULL,
    seat    integer NOT NULL,
    count   bigint  NOT NULL,
    PRIMARY KEY (game_id, seat)
);
