"""Projections in Redis: one hash per game (``mf:game:<id>``), replaced atomically by a Lua
script only when the new version is higher; replay snapshots in ``mf:snap:<id>`` (version →
table). Changes fan out on ``mf:changes:<id>`` (pub/sub), so
a client connected to any instance hears moves accepted by another."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from redis.asyncio import Redis

from .store import ProjectionStore

# KEYS[1] = the game's hash, KEYS[2] = its change channel; ARGV[1] = the new version;
# ARGV[2..] = field, value pairs. Written and announced in one round trip.
_WRITE_IF_NEWER = """
local current = redis.call('HGET', KEYS[1], 'version')
if current == false or tonumber(current) < tonumber(ARGV[1]) then
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 'version', ARGV[1], unpack(ARGV, 2))
  redis.call('PUBLISH', KEYS[2], ARGV[1])
  return 1
end
return 0
"""


class RedisStore(ProjectionStore):
    def __init__(self, redis: Redis, prefix: str = "mf") -> None:
        self.redis = redis
        self.prefix = prefix
        self._write: Any = redis.register_script(_WRITE_IF_NEWER)

    @classmethod
    def from_url(cls, url: str, prefix: str = "mf") -> RedisStore:
        return cls(Redis.from_url(url, decode_responses=False), prefix)

    def _key(self, game_id: str) -> str:
        return f"{self.prefix}:game:{game_id}"

    def _channel(self, game_id: str) -> str:
        return f"{self.prefix}:changes:{game_id}"

    async def version(self, game_id: str) -> int | None:
        raw: bytes | None = await self.redis.hget(self._key(game_id), "version")  # type: ignore[misc]
        return None if raw is None else int(raw)

    async def fields(self, game_id: str, names: list[str]) -> list[bytes | None]:
        values: list[bytes | None] = await self.redis.hmget(self._key(game_id), names)  # type: ignore[misc]
        return values

    async def write(self, game_id: str, version: int, fields: Mapping[str, bytes]) -> bool:
        args: list[bytes | str] = [str(version)]
        for name, value in fields.items():
            args += [name, value]
        keys = [self._key(game_id), self._channel(game_id)]
        return bool(await self._write(keys=keys, args=args))

    async def versions(self, game_ids: list[str]) -> list[int | None]:
        async with self.redis.pipeline(transaction=False) as pipe:
            for game_id in game_ids:
                pipe.hget(self._key(game_id), "version")
            raw = await pipe.execute()
        return [None if v is None else int(v) for v in raw]

    async def subscribe(self, game_id: str) -> AsyncIterator[int | None]:
        pubsub = self.redis.pubsub()
        await pubsub.subscribe(self._channel(game_id))
        try:
            yield None
            async for message in pubsub.listen():
                if message.get("type") == "message":
                    yield int(message["data"])
        finally:
            await pubsub.unsubscribe()
            await pubsub.aclose()  # type: ignore[no-untyped-call]

    def _snapshots(self, game_id: str) -> str:
        return f"{self.prefix}:snap:{game_id}"

    async def put_snapshots(self, game_id: str, snapshots: Mapping[int, bytes]) -> None:
        if snapshots:
            mapping = {str(v): raw for v, raw in snapshots.items()}
            await self.redis.hset(self._snapshots(game_id), mapping=mapping)  # type: ignore[misc]

    async def snapshot(self, game_id: str, version: int) -> bytes | None:
        raw: bytes | None = await self.redis.hget(self._snapshots(game_id), str(version))  # type: ignore[misc]
        return raw

    async def snapshot_versions(self, game_id: str) -> list[int]:
        keys: list[bytes] = await self.redis.hkeys(self._snapshots(game_id))  # type: ignore[misc]
        return sorted(int(k) for k in keys)

    async def clear(self) -> None:
        batch: list[bytes] = []
        async for key in self.redis.scan_iter(match=f"{self.prefix}:*", count=1000):
            batch.append(key)
            if len(batch) >= 1000:
                await self.redis.delete(*batch)
                batch.clear()
        if batch:
            await self.redis.delete(*batch)

    async def ping(self) -> bool:
        try:
            return bool(await self.redis.ping())
        except Exception:
            return False

    async def close(self) -> None:
        await self.redis.aclose()
