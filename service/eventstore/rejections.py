"""Refused commands, bounded: each seat of a game has up to ``MANIFEST_REJECTED_CAP`` refusals
recorded in ``commands`` (with their bodies, for dispute files); past the cap a refusal is only
counted, in ``rejections_unrecorded`` (shown by ``GET /v1/games/{id}/audit`` as
``rejected.unrecorded``). A refusal past the cap is answered as usual; its ``Idempotency-Key``,
not being recorded, does not replay: sent again, the command is decided afresh.

Concurrent refusals of one seat may each see the count just under the cap, so a seat can end a
few records past it (at most the number of its requests in flight) — a bound, not a quota.
"""

from __future__ import annotations

import uuid
from typing import Any

_RECORDED = """
SELECT count(*) FROM (
    SELECT 1 FROM commands
     WHERE game_id = $1 AND seat = $2 AND outcome <> 'accepted'
     LIMIT $3
) AS capped
"""

_COUNT = """
INSERT INTO rejections_unrecorded (game_id, seat, count) VALUES ($1, $2, 1)
ON CONFLICT (game_id, seat) DO UPDATE SET count = rejections_unrecorded.count + 1
"""


async def admit(pool: Any, game_id: str, seat: int, cap: int) -> bool:
    """True if this refusal is to be recorded; else it is counted (and False)."""
    gid = uuid.UUID(game_id)
    if await pool.fetchval(_RECORDED, gid, seat, cap) < cap:
        return True
    await pool.execute(_COUNT, gid, seat)
    return False


async def unrecorded(pool: Any, game_id: str) -> dict[str, int]:
    """Refusals counted past the cap, by seat (as a string: a JSON object key)."""
    rows = await pool.fetch(
        "SELECT seat, count FROM rejections_unrecorded WHERE game_id = $1 ORDER BY seat",
        uuid.UUID(game_id),
    )
    return {str(r["seat"]): int(r["count"]) for r in rows}
