"""Players, their keys and the seats bound to them in the event store's database
(``migrations/0010_players.sql``; docs/api.md, "Players"). A key is found by its SHA-256 only;
nothing here is cached, so a revoked key is refused by the next lookup of any instance."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import msgspec

from service.eventstore.atomic import atomic


class PlayerKey(msgspec.Struct, frozen=True):
    """A key as stored (never the key itself)."""

    id: str
    player_id: str
    scopes: list[str]
    label: str | None
    created_at: datetime
    revoked_at: datetime | None


class KeyHolder(msgspec.Struct, frozen=True):
    """Who a live key is: its player (id and name) and the key's own id and scopes."""

    player_id: str
    name: str
    key_id: str
    scopes: list[str]


class PlayerGame(msgspec.Struct, frozen=True):
    """One of a player's games: its row's status, version and head, the player's seat, the
    game's earliest clock deadline and the type of its last event."""

    game_id: str
    game: str
    status: str
    seat: int
    version: int
    head: bytes
    updated_at: datetime
    due_at: datetime | None
    last_event: str | None


class TooManyKeys(Exception):
    """The player holds as many live keys as it may."""


_KEY_COLS = "id::text AS id, player_id::text AS player_id, scopes, label, created_at, revoked_at"


def _key(r: Any) -> PlayerKey:
    return PlayerKey(
        r["id"], r["player_id"], list(r["scopes"]), r["label"], r["created_at"], r["revoked_at"]
    )


class PlayerRows:
    """The ``players`` and ``player_keys`` tables (``EventStore.players``)."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    async def create(self, name: str, key_hash: bytes, scopes: list[str]) -> tuple[str, str]:
        """A new player with its first key: (player id, key id)."""
        pid, kid = uuid.uuid4(), uuid.uuid4()
        async with self._pool.acquire() as conn, atomic(conn):
            await conn.execute("INSERT INTO players (id, name) VALUES ($1, $2)", pid, name)
            await conn.execute(
                "INSERT INTO player_keys (id, player_id, key_hash, scopes) VALUES ($1, $2, $3, $4)",
                kid,
                pid,
                key_hash,
                scopes,
            )
        return str(pid), str(kid)

    async def add_key(
        self, player_id: str, key_hash: bytes, scopes: list[str], label: str | None, most: int
    ) -> PlayerKey:
        """A further key of the player; :class:`TooManyKeys` past ``most`` live keys (counted
        under the player's row lock, so two requests at once cannot both pass)."""
        pid = uuid.UUID(player_id)
        async with self._pool.acquire() as conn, atomic(conn):
            await conn.execute("SELECT 1 FROM players WHERE id = $1 FOR UPDATE", pid)
            live = await conn.fetchval(
                "SELECT count(*) FROM player_keys WHERE player_id = $1 AND revoked_at IS NULL", pid
            )
            if live >= most:
                raise TooManyKeys(player_id)
            r = await conn.fetchrow(
                "INSERT INTO player_keys (id, player_id, key_hash, scopes, label) "
                f"VALUES ($1, $2, $3, $4, $5) RETURNING {_KEY_COLS}",
                uuid.uuid4(),
                pid,
                key_hash,
                scopes,
                label,
            )
        return _key(r)

    async def holder(self, key_hash: bytes) -> tuple[KeyHolder, bool] | None:
        """The key with this hash: its holder and whether it is revoked; None: no such key."""
        r = await self._pool.fetchrow(
            "SELECT k.id::text AS key_id, k.player_id::text AS player_id, k.scopes, "
            "k.revoked_at IS NOT NULL AS revoked, p.name FROM player_keys k "
            "JOIN players p ON p.id = k.player_id WHERE k.key_hash = $1",
            key_hash,
        )
        if r is None:
            return None
        return KeyHolder(r["player_id"], r["name"], r["key_id"], list(r["scopes"])), r["revoked"]

    async def seat_of(
        self, key_hash: bytes, game_id: str
    ) -> tuple[int | None, bool, list[str]] | None:
        """For a player key and a game, in one query: None when there is no such key, else
        (the seat of the game bound to the key's player or None, whether the key is revoked,
        its scopes)."""
        try:
            gid: uuid.UUID | None = uuid.UUID(game_id)
        except ValueError:  # no game has such an id: the key is still looked up
            gid = None
        r = await self._pool.fetchrow(
            "SELECT k.revoked_at IS NOT NULL AS revoked, k.scopes, s.seat FROM player_keys k "
            "LEFT JOIN seat_tokens s ON s.player_id = k.player_id AND s.game_id = $2 "
            "WHERE k.key_hash = $1",
            key_hash,
            gid,
        )
        return None if r is None else (r["seat"], r["revoked"], list(r["scopes"]))

    async def keys(self, player_id: str) -> list[PlayerKey]:
        """Every key of the player, revoked ones too, oldest first."""
        rows = await self._pool.fetch(
            f"SELECT {_KEY_COLS} FROM player_keys WHERE player_id = $1 ORDER BY created_at, id",
            uuid.UUID(player_id),
        )
        return [_key(r) for r in rows]

    async def key(self, key_id: str) -> PlayerKey | None:
        r = await self._pool.fetchrow(
            f"SELECT {_KEY_COLS} FROM player_keys WHERE id = $1", uuid.UUID(key_id)
        )
        return None if r is None else _key(r)

    async def revoke(self, key_id: str, player_id: str) -> PlayerKey | None:
        """Revoke the player's key (kept revoked: the first revocation's time stays)."""
        r = await self._pool.fetchrow(
            "UPDATE player_keys SET revoked_at = coalesce(revoked_at, now()) "
            f"WHERE id = $1 AND player_id = $2 RETURNING {_KEY_COLS}",
            uuid.UUID(key_id),
            uuid.UUID(player_id),
        )
        return None if r is None else _key(r)

    async def games(self, player_id: str, status: str | None, most: int) -> list[PlayerGame]:
        """The player's games (at most ``most``, most recently changed first), with each one's
        deadline and last event type."""
        rows = await self._pool.fetch(
            "SELECT g.id::text AS game_id, g.game, g.status, s.seat, g.version, g.head, "
            "g.updated_at, d.due_at, e.type AS last_event "
            "FROM seat_tokens s JOIN games g ON g.id = s.game_id "
            "LEFT JOIN deadlines d ON d.game_id = g.id "
            "LEFT JOIN events e ON e.game_id = g.id AND e.version = g.version "
            "WHERE s.player_id = $1 AND ($2::text IS NULL OR g.status = $2) "
            "ORDER BY g.updated_at DESC, g.id LIMIT $3",
            uuid.UUID(player_id),
            status,
            most,
        )
        return [
            PlayerGame(
                r["game_id"],
                r["game"],
                r["status"],
                r["seat"],
                r["version"],
                bytes(r["head"]),
                r["updated_at"],
                r["due_at"],
                r["last_event"],
            )
            for r in rows
        ]
