"""``GET /readyz``: can this process serve? Each part needed is checked with a deadline and
named in the answer; an exception is a failing check (with its message), never "ready".

- ``postgres``: ``SELECT 1`` through the pool (acquire timeout included);
- ``redis``: reachable (``PING``) and writable (a small expiring key: fails when Redis is full,
  read-only or stalled) — only with ``REDIS_URL`` set;
- ``projections``: the oldest change this process committed and has not yet written to the
  projections is younger than ``MANIFEST_PROJECTION_LAG`` seconds, and the catch-up worker's
  last pass succeeded. Games whose projection cannot be computed at all (poison messages:
  ``projections.projector.Poison``) are reported (``poisoned``: how many this process knows,
  ``poisoned_games``: up to 10 ids) without failing the check: the instance serves every other
  game, and a restart would not mend them;
- ``streams``: the process's one change subscription (Redis pub/sub, fanned out to every live
  stream of the process: :mod:`projections.fanout`) is up; while it is down no stream can be
  opened (503) — only with ``REDIS_URL`` set.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from service.application.gameplay import Manifest

CHECK_TIMEOUT = 2.0
#: Poisoned games named in the answer (the latest; ``manifest_projection_poisoned_total``
#: counts them all).
POISONED_SHOWN = 10


async def _check(probe: Awaitable[Any]) -> dict[str, Any]:
    try:
        async with asyncio.timeout(CHECK_TIMEOUT):
            result = await probe
    except TimeoutError:
        return {"ok": False, "error": f"no answer within {CHECK_TIMEOUT:g} s"}
    except Exception as error:
        return {"ok": False, "error": f"{type(error).__name__}: {error}"}
    if result is False:
        return {"ok": False, "error": "the check failed"}
    return {"ok": True}


async def _redis(manifest: Manifest) -> bool:
    store = manifest.projector.store
    if not await store.ping():
        return False
    await store.probe_write()
    return True


async def _streams(manifest: Manifest) -> None:
    await manifest.projector.store.listening()


async def readiness(manifest: Manifest, max_lag: float) -> tuple[bool, dict[str, Any]]:
    """(ready, checks): every check by name, ``{"ok": bool, "error"?: str, ...}``."""
    postgres, redis, streams = await asyncio.gather(
        _check(manifest.store.ping()), _check(_redis(manifest)), _check(_streams(manifest))
    )
    projector = manifest.projector
    lag = round(projector.lag(), 3)
    projections: dict[str, Any] = {"ok": True, "lag_seconds": lag}
    if lag > max_lag:
        projections = {
            "ok": False,
            "lag_seconds": lag,
            "error": f"projections lag {lag:g} s behind the store (limit {max_lag:g} s)",
        }
    elif projector.last_pass_error is not None:
        projections = {
            "ok": False,
            "lag_seconds": lag,
            "error": f"catch-up failed: {projector.last_pass_error}",
        }
    if projector.poisoned:
        projections["poisoned"] = len(projector.poisoned)
        projections["poisoned_games"] = list(projector.poisoned)[-POISONED_SHOWN:]
    checks = {"postgres": postgres, "redis": redis, "projections": projections, "streams": streams}
    return all(c["ok"] for c in checks.values()), checks
