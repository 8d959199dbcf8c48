"""Projections in Redis: one hash per game (``mf:{<id>}:game``), replaced atomically by a Lua
script only when the new version is higher; replay snapshots in ``mf:{<id>}:snap`` (version →
table). Changes fan out on ``mf:{<id>}:changes`` (pub/sub), so
a client connected to any instance hears moves accepted by another.

Every key and channel of one game carries the hash tag ``{<id>}``: in a Redis Cluster
(``REDIS_CLUSTER=1``) they all live in one slot, so the write script, which touches the game's
hash and its channel together, never fails with ``CROSSSLOT``. In a cluster the commands go
through redis-py's ``RedisCluster``; pub/sub listens with a plain connection to the node named
by ``REDIS_URL``: a classic ``PUBLISH`` is broadcast over the cluster bus to every node, so a
subscriber on any node hears every game (see docs/scaling.md for why not sharded pub/sub).

Listening takes **one** pub/sub connection per store (per process), whatever the number of
live streams: :class:`~projections.fanout.Subscriptions` subscribes a game's channel while some
local stream follows it and fans each message out to the streams' bounded mailboxes.

Every call has a connect timeout and is bounded as a whole (``MANIFEST_REDIS_CONNECT_TIMEOUT``,
``MANIFEST_REDIS_TIMEOUT``), with no automatic retry, and every Redis failure (timeout, refused
connection, ``OOM`` when full) is raised as :class:`~projections.store.StoreUnavailable`. Pub/sub
listens on a connection of its own without that bound (a quiet channel is not a fault); a ping
every ``heartbeat`` seconds finds a dead or stalled one.

The write script declares itself with a ``#!lua`` shebang (Redis 7): Redis then checks
``maxmemory`` *before* running it, so a full Redis refuses the whole write (nothing changed)
instead of letting a script that starts with a non-growing command write past the limit. It
overwrites the fields and deletes only the ones the new record no longer has — no
DEL-then-write, so a refused write never leaves a game without its projection. The write path
after a move (``advance``) and a lazily built view (``put_view``) are scripts of the same
kind: the first moves the record forward without deleting anything, the second keeps a view
only if the record exists and holds no view of that version or newer (the version each view
carries, :func:`~projections.store.tag_view`, is parsed in the script)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from functools import wraps
from typing import Any, ParamSpec, TypeVar, cast

from redis.asyncio import ConnectionPool, Redis, RedisCluster
from redis.exceptions import RedisError, ResponseError

from infra.deadlines import Deadlines
from projections.fanout import Subscriptions
from projections.store import ProjectionStore, StoreUnavailable, tag_view

# KEYS[1] = the game's hash, KEYS[2] = its change channel; ARGV[1] = the new version;
# ARGV[2..] = field, value pairs. Written and announced in one round trip.
_WRITE_IF_NEWER = """#!lua
local current = redis.call('HGET', KEYS[1], 'version')
if current == false or tonumber(current) < tonumber(ARGV[1]) then
  local keep = {}
  for i = 2, #ARGV, 2 do keep[ARGV[i]] = true end
  local gone = {}
  for _, name in ipairs(redis.call('HKEYS', KEYS[1])) do
    if name ~= 'version' and not keep[name] then gone[#gone + 1] = name end
  end
  if #gone > 0 then redis.call('HDEL', KEYS[1], unpack(gone)) end
  redis.call('HSET', KEYS[1], 'version', ARGV[1], unpack(ARGV, 2))
  redis.call('PUBLISH', KEYS[2], ARGV[1])
  return 1
end
return 0
"""

# As above, but the fields not named stay (each view carries its own version).
_ADVANCE_IF_NEWER = """#!lua
local current = redis.call('HGET', KEYS[1], 'version')
if current == false or tonumber(current) < tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 'version', ARGV[1], unpack(ARGV, 2))
  redis.call('PUBLISH', KEYS[2], ARGV[1])
  return 1
end
return 0
"""

# KEYS[1] = the game's hash; ARGV[1] = the view's field, ARGV[2] = its version, ARGV[3] = the
# view as stored ("<version> <json>"). Kept only if the game has a record and the stored view
# is older (or carries no version).
_PUT_VIEW_IF_NEWER = """#!lua
if redis.call('HEXISTS', KEYS[1], 'version') == 0 then return 0 end
local have = redis.call('HGET', KEYS[1], ARGV[1])
if have then
  local stored = tonumber(string.match(have, '^(%d+) '))
  if stored ~= nil and stored >= tonumber(ARGV[2]) then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
"""

_FAILURES = (RedisError, OSError, asyncio.TimeoutError)
#: ``CLIENT SETNAME`` of the change subscription's connection (``CLIENT LIST`` shows it)
CHANGES_CLIENT_NAME = "manifest-changes"
P = ParamSpec("P")
R = TypeVar("R")


def _guarded(method: Callable[P, Coroutine[Any, Any, R]]) -> Callable[P, Coroutine[Any, Any, R]]:
    """Bound ``method`` by the store's ``timeout`` and raise every Redis failure of it as
    :class:`StoreUnavailable`. After a timeout or a lost connection, calls fail at once for
    ``cooldown`` seconds instead of each waiting for its own timeout (a stalled Redis costs one
    timeout, not one per request).

    One bound per call (:mod:`infra.deadlines`: no loop timer per call, as
    ``asyncio.timeout`` would arm), not redis-py's ``socket_timeout``: that one wraps every
    send in ``asyncio.wait_for`` (a task, on Python 3.11) and every read in a timeout of its
    own — an HMGET cost this process 100 µs of CPU with it, 65 µs without. A call cancelled by
    the timeout leaves no half-read reply behind: redis-py drops the connection on any
    exception in a send or a read."""

    @wraps(method)
    async def call(*args: P.args, **kwargs: P.kwargs) -> R:
        store = cast(RedisStore, args[0])
        if time.monotonic() < store.down_until:
            raise StoreUnavailable(f"redis: unreachable (last error: {store.last_error})")
        try:
            if store.timeout is None:
                return await method(*args, **kwargs)
            with store.deadlines.within(store.timeout):
                return await method(*args, **kwargs)
        except _FAILURES as error:
            reason = f"{type(error).__name__}: {error}"
            if not isinstance(error, ResponseError):  # not a refusal (OOM): a stall or loss
                store.down_until = time.monotonic() + store.cooldown
                store.last_error = reason
            raise StoreUnavailable(f"redis: {reason}") from error

    return call


class RedisStore(ProjectionStore):
    def __init__(
        self,
        redis: Redis | RedisCluster,
        prefix: str = "mf",
        changes: Subscriptions | None = None,
        cooldown: float = 0,
        timeout: float | None = None,
    ) -> None:
        self.redis = redis
        self.cooldown = cooldown
        #: seconds one call may take in all (None: unbounded; the clients' own timeouts)
        self.timeout = timeout
        self.deadlines = Deadlines()
        self.down_until = 0.0
        self.last_error = ""
        self.prefix = prefix
        if changes is None and isinstance(redis, Redis):
            pool = redis.connection_pool
            changes = Subscriptions(
                _connector(
                    ConnectionPool(
                        **{**pool.connection_kwargs, "socket_timeout": None, "protocol": 2}
                    )
                ),
                timeout=timeout or 1.0,
                cooldown=cooldown or 1.0,
            )
        #: the one pub/sub connection of this store and its listeners (None: no pub/sub)
        self.changes = changes
        # redis-py types register_script for Redis only; RedisCluster has it too (same script
        # object, run on the node that owns the keys' slot).
        scripting: Any = redis
        self._write: Any = scripting.register_script(_WRITE_IF_NEWER)
        self._advance: Any = scripting.register_script(_ADVANCE_IF_NEWER)
        self._put_view: Any = scripting.register_script(_PUT_VIEW_IF_NEWER)
        # The hash commands, untyped: redis-py's stubs type their answers differently from one
        # major release to the next (5-7: a sync|async union; 8: str|bytes), and the package
        # admits them all. The Redis here never decodes responses: answers are bytes.
        self._hashes: Any = redis

    @classmethod
    def from_url(
        cls,
        url: str,
        prefix: str = "mf",
        connect_timeout: float = 1.0,
        timeout: float = 1.0,
        cluster: bool = False,
        heartbeat: float = 5.0,
        mailbox: int = 16,
    ) -> RedisStore:
        redis: Redis | RedisCluster
        if cluster:
            # The URL names one node; the client learns the others from it. It follows MOVED
            # redirections itself, but does not retry a failed call (a dead node is a 503).
            redis = RedisCluster.from_url(
                url,
                decode_responses=False,
                socket_connect_timeout=connect_timeout,
                socket_timeout=None,  # each call is bounded whole (``_guarded``)
            )
        else:
            redis = Redis.from_url(
                url,
                decode_responses=False,
                socket_connect_timeout=connect_timeout,
                # each call is bounded whole (``_guarded``); None, not left out: redis-py 8
                # defaults to 5 s, and any socket timeout is a wait_for task per send
                socket_timeout=None,
                retry=None,
            )
        changes = Subscriptions(
            _connector(
                ConnectionPool.from_url(
                    url,
                    decode_responses=False,
                    socket_connect_timeout=connect_timeout,
                    socket_timeout=None,  # a quiet channel is not a fault: pings find dead ones
                    health_check_interval=0,
                    client_name=CHANGES_CLIENT_NAME,
                    protocol=2,  # pub/sub replies as plain arrays (RESP3 pushes them)
                )
            ),
            timeout=timeout,
            connect_timeout=connect_timeout,
            heartbeat=heartbeat,
            cooldown=timeout,
            bound=mailbox,
        )
        return cls(redis, prefix, changes, cooldown=timeout, timeout=timeout)

    def _key(self, game_id: str) -> str:
        return f"{self.prefix}:{{{game_id}}}:game"

    def _channel(self, game_id: str) -> str:
        return f"{self.prefix}:{{{game_id}}}:changes"

    @_guarded
    async def version(self, game_id: str) -> int | None:
        raw: bytes | None = await self._hashes.hget(self._key(game_id), "version")
        return None if raw is None else int(raw)

    @_guarded
    async def fields(self, game_id: str, names: list[str]) -> list[bytes | None]:
        values: list[bytes | None] = await self._hashes.hmget(self._key(game_id), names)
        return values

    @_guarded
    async def write(self, game_id: str, version: int, fields: Mapping[str, bytes]) -> bool:
        return await self._record(self._write, game_id, version, fields)

    @_guarded
    async def advance(self, game_id: str, version: int, fields: Mapping[str, bytes]) -> bool:
        return await self._record(self._advance, game_id, version, fields)

    async def _record(
        self, script: Any, game_id: str, version: int, fields: Mapping[str, bytes]
    ) -> bool:
        args: list[bytes | str] = [str(version)]
        for name, value in fields.items():
            args += [name, value]
        keys = [self._key(game_id), self._channel(game_id)]
        return bool(await script(keys=keys, args=args))

    @_guarded
    async def put_view(self, game_id: str, name: str, version: int, body: bytes) -> bool:
        args = [name, str(version), tag_view(version, body)]
        return bool(await self._put_view(keys=[self._key(game_id)], args=args))

    @_guarded
    async def versions(self, game_ids: list[str]) -> list[int | None]:
        async with self.redis.pipeline(transaction=False) as pipe:
            for game_id in game_ids:
                pipe.hget(self._key(game_id), "version")
            raw = await pipe.execute()
        return [None if v is None else int(v) for v in raw]

    def subscribe(self, game_id: str) -> AsyncIterator[int | None]:
        if self.changes is None:
            raise StoreUnavailable("redis: this store has no pub/sub connection")
        return self.changes.listen(self._channel(game_id))

    async def listening(self) -> None:
        if self.changes is None:
            raise StoreUnavailable("redis: this store has no pub/sub connection")
        await self.changes.ready()

    def _snapshots(self, game_id: str) -> str:
        return f"{self.prefix}:{{{game_id}}}:snap"

    @_guarded
    async def put_snapshots(self, game_id: str, snapshots: Mapping[int, bytes]) -> None:
        if snapshots:
            mapping = {str(v): raw for v, raw in snapshots.items()}
            await self._hashes.hset(self._snapshots(game_id), mapping=mapping)

    @_guarded
    async def snapshot(self, game_id: str, version: int) -> bytes | None:
        raw: bytes | None = await self._hashes.hget(self._snapshots(game_id), str(version))
        return raw

    @_guarded
    async def snapshot_versions(self, game_id: str) -> list[int]:
        keys: list[bytes] = await self._hashes.hkeys(self._snapshots(game_id))
        return sorted(int(k) for k in keys)

    async def clear(self) -> None:
        """Delete every key of this prefix (``manifest rebuild``, tests). Each SCAN step and
        each DEL is bounded by the timeout, not the whole: a large keyspace takes longer."""
        redis: Any = self.redis  # a cluster scans (and deletes on) every primary
        keys = redis.scan_iter(match=f"{self.prefix}:*", count=1000)
        batch: list[bytes] = []
        try:
            while True:
                async with asyncio.timeout(self.timeout):
                    key = await anext(keys, None)
                    if key is not None:
                        batch.append(key)
                    if batch and (key is None or len(batch) >= 1000):
                        await redis.delete(*batch)
                        batch.clear()
                if key is None:
                    return
        except _FAILURES as error:
            raise StoreUnavailable(f"redis: {type(error).__name__}: {error}") from error

    async def ping(self) -> bool:
        try:
            async with asyncio.timeout(self.timeout):
                return bool(await self.redis.ping())
        except _FAILURES:
            return False

    @_guarded
    async def probe_write(self) -> None:
        """Write (and let expire) a small key: fails when Redis is full or read-only."""
        await self.redis.set(f"{self.prefix}:probe", b"1", px=10_000)

    async def close(self) -> None:
        if self.changes is not None:
            await self.changes.close()
        await self.redis.aclose()


def _connector(pool: ConnectionPool) -> Callable[[], Any]:
    """New, unconnected connections with ``pool``'s settings (the pool itself is not used:
    the subscription's connection is owned, reconnected and closed by
    :class:`~projections.fanout.Subscriptions`)."""
    return pool.make_connection
