"""The machine's ceiling for ``bench.e2e``: the least a write endpoint can do on this stack.

    PG_DSN=... REDIS_URL=... .venv/bin/python -m bench.ceiling [--port 8001] [--workers 1]

One endpoint, ``POST /ceiling``: decode a small JSON body, one asyncpg INSERT (into
``ceiling(id bigserial, body jsonb)``, which ``bench.e2e`` creates beforehand), one Redis SET,
answer a small JSON. It runs under uvicorn exactly as ``manifest serve`` does
(``service.workers.serve``: N workers on SO_REUSEPORT sockets, uvicorn's default loop and HTTP
implementation, no access log, the same garbage-collector threshold), with the same asyncpg
pool size, so the two measurements differ only in what the real server does per request.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import msgspec
from litestar import Litestar, Request, post
from redis.asyncio import Redis

CREATE_TABLE = "CREATE TABLE IF NOT EXISTS ceiling (id bigserial PRIMARY KEY, body jsonb NOT NULL)"


@post("/ceiling", status_code=200)
async def ceiling(request: Request[Any, Any, Any], data: dict[str, Any]) -> dict[str, Any]:
    state = request.app.state
    row_id = await state.pool.fetchval(
        "INSERT INTO ceiling (body) VALUES ($1::text::jsonb) RETURNING id",
        msgspec.json.encode(data).decode(),
    )
    await state.redis.set(f"{state.prefix}:ceiling:{row_id % 1024}", str(row_id))
    return {"id": row_id, "ok": True}


def create_app() -> Litestar:
    from service.collector import tune_collector
    from service.settings import Settings

    tune_collector(Settings.from_env().gc_threshold)  # as each manifest serve worker does

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        pool = await asyncpg.create_pool(
            os.environ["PG_DSN"],
            min_size=2,
            max_size=int(os.environ.get("MANIFEST_PG_POOL", "20")),
            command_timeout=30,
        )
        redis = Redis.from_url(os.environ["REDIS_URL"], decode_responses=False)
        app.state.pool = pool
        app.state.redis = redis
        app.state.prefix = os.environ.get("MANIFEST_REDIS_PREFIX", "mf")
        try:
            yield
        finally:
            await redis.aclose()
            await pool.close()

    return Litestar(route_handlers=[ceiling], lifespan=[lifespan], debug=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    from service.workers import serve

    serve(  # as manifest serve
        "bench.ceiling:create_app",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level="warning",
        access_log=False,
    )


if __name__ == "__main__":
    main()
