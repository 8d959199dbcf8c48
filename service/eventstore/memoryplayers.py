"""Players, their keys and the seats bound to them in process memory: the in-memory log's
``players`` (:class:`service.eventstore.memory.MemoryLog`), the same answers as
:class:`service.eventstore.players.PlayerRows` gives from PostgreSQL (held to one contract,
``tests/service/test_event_log_contract.py``)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

import msgspec

from service.eventstore.players import KeyHolder, PlayerGame, PlayerKey, TooManyKeys

if TYPE_CHECKING:
    from service.eventstore.memoryparts import MemorySide


class _Key(msgspec.Struct):
    key: PlayerKey
    digest: bytes


class MemoryPlayers:
    """The players of one :class:`MemorySide`: names by id, keys by id (with their hashes)."""

    def __init__(self, log: MemorySide, clock: Callable[[], datetime]) -> None:
        self._log = log
        self._clock = clock
        self._names: dict[str, str] = {}
        self._keys: dict[str, _Key] = {}

    def _new_key(self, pid: str, digest: bytes, scopes: list[str], label: str | None) -> PlayerKey:
        key = PlayerKey(str(uuid.uuid4()), pid, list(scopes), label, self._clock(), None)
        self._keys[key.id] = _Key(key, digest)
        return key

    def _by_hash(self, digest: bytes) -> PlayerKey | None:
        return next((k.key for k in self._keys.values() if k.digest == digest), None)

    async def create(self, name: str, key_hash: bytes, scopes: list[str]) -> tuple[str, str]:
        pid = str(uuid.uuid4())
        self._names[pid] = name
        return pid, self._new_key(pid, key_hash, scopes, None).id

    async def add_key(
        self, player_id: str, key_hash: bytes, scopes: list[str], label: str | None, most: int
    ) -> PlayerKey:
        live = [k for k in self._keys.values() if k.key.player_id == player_id]
        if sum(k.key.revoked_at is None for k in live) >= most:
            raise TooManyKeys(player_id)
        return self._new_key(player_id, key_hash, scopes, label)

    async def holder(self, key_hash: bytes) -> tuple[KeyHolder, bool] | None:
        key = self._by_hash(key_hash)
        if key is None:
            return None
        holder = KeyHolder(key.player_id, self._names[key.player_id], key.id, list(key.scopes))
        return holder, key.revoked_at is not None

    async def seat_of(
        self, key_hash: bytes, game_id: str
    ) -> tuple[int | None, bool, list[str]] | None:
        key = self._by_hash(key_hash)
        if key is None:
            return None
        game = self._log._games.get(game_id)
        bound = None if game is None else game.seat_of_player(key.player_id)
        return bound, key.revoked_at is not None, list(key.scopes)

    async def keys(self, player_id: str) -> list[PlayerKey]:
        mine = [k.key for k in self._keys.values() if k.key.player_id == player_id]
        return sorted(mine, key=lambda k: (k.created_at, k.id))

    async def key(self, key_id: str) -> PlayerKey | None:
        found = self._keys.get(key_id)
        return None if found is None else found.key

    async def revoke(self, key_id: str, player_id: str) -> PlayerKey | None:
        found = self._keys.get(key_id)
        if found is None or found.key.player_id != player_id:
            return None
        if found.key.revoked_at is None:
            found.key = msgspec.structs.replace(found.key, revoked_at=self._clock())
        return found.key

    async def games(self, player_id: str, status: str | None, most: int) -> list[PlayerGame]:
        mine: list[PlayerGame] = []
        for gid, game in self._log._games.items():
            seat = game.seat_of_player(player_id)
            row = game.row
            if seat is None or (status is not None and row.status != status):
                continue
            deadline = self._log._deadlines.get(gid)
            last = game.events[-1].type if game.events else None
            mine.append(
                PlayerGame(
                    gid, row.game, row.status, seat, row.version, row.head, row.updated_at,
                    None if deadline is None else deadline.due_at, last,
                )
            )  # fmt: skip
        mine.sort(key=lambda g: g.game_id)
        mine.sort(key=lambda g: g.updated_at, reverse=True)
        return mine[:most]
