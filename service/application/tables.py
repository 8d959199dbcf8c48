"""The tables of the games this process serves, and their keys: each table cached against the
stored head it was folded to, or folded from the stored events — never read from Redis: the
write path needs PostgreSQL only. One :class:`Tables` per process, shared by the lobby, play,
talk, documents, queries and the history (:mod:`service.bootstrap` wires it)."""

from __future__ import annotations

from domain.platform.table import Table, fold_stream
from infra.lru import LRU
from ledger.chain import CANONICAL_UUID
from ledger.commitments import Keys
from service.application.errors import NotFound
from service.application.freshness import Stored, table_answers
from service.eventstore.port import EventLog, LockedGame
from service.eventstore.records import GameRow

#: Games whose table (and keys) a process keeps.
CACHE_GAMES = 4096


class Tables:
    """This process's (head, table) per game and the games' secret keys, over the event store.
    A cached table is used for a decision only at the locked row's (version, head)."""

    def __init__(self, store: EventLog, size: int = CACHE_GAMES) -> None:
        self.store = store
        #: game id -> (head hash, table at that head)
        self._tables: LRU[str, tuple[bytes, Table]] = LRU(size)
        self._keys: LRU[str, Keys] = LRU(size)

    # --- the cache -----------------------------------------------------------------------------
    def remember(self, table: Table, head: bytes) -> None:
        """Cache ``table`` as the game at ``head``. Keyed by the head hash, not the version
        alone: a table remembered inside a transaction that then rolled back must never pass
        for the different events another instance committed at the same version."""
        self._tables.put(table.game_id, (head, table))

    def forget(self, game_id: str) -> None:
        """Drop the game's table (it lost a race: the next use reads the stored one)."""
        self._tables.pop(game_id)

    def latest(self, game_id: str) -> tuple[bytes, Table] | None:
        """The latest (head, table) this process holds of the game, unchecked; None if none."""
        return self._tables.get(game_id)

    def cached(self, game_id: str, head: bytes, version: int) -> Table | None:
        """This process's table of the game, if it may answer for the state at (``version``,
        ``head``) (:func:`service.application.freshness.table_answers`)."""
        return table_answers(self._tables.get(game_id), Stored(version, head))

    # --- tables read -----------------------------------------------------------------------------
    async def at_lock(self, locked: LockedGame) -> Table:
        """The table at the locked version: from the cache, or folded from the stored events."""
        table = self.cached(locked.row.id, locked.row.head, locked.row.version)
        if table is not None:
            return table
        table = fold_stream(None, await locked.read(after=0), locked.row.id)
        self.remember(table, locked.row.head)
        return table

    async def stored(self, game_id: str, head: bytes, version: int, latest: bool = True) -> Table:
        """The table at (``version``, ``head``), a stored state: cached, or folded from the
        stored events (and cached, when it is the ``latest``)."""
        table = self.cached(game_id, head, version)
        if table is not None:
            return table
        events = await self.store.read(game_id, after=0, limit=version)
        table = fold_stream(None, events, game_id)
        if table.version != version:
            raise LookupError(f"game {game_id} has no event {version}")
        cached = self._tables.get(game_id)
        if latest and (cached is None or cached[1].version <= version):  # never cache older
            self.remember(table, head)
        return table

    async def current(self, game_id: str) -> tuple[bytes, Table]:
        """The latest table this process knows, with its head hash; read if unknown (from
        PostgreSQL: the stored events)."""
        cached = self._tables.get(game_id)
        if cached is not None:
            return cached
        row = await self.row(game_id)
        return row.head, await self.stored(game_id, row.head, row.version)

    async def row(self, game_id: str) -> GameRow:
        """The game's stored row, or :class:`NotFound`."""
        row = await self.store.get_game(game_id)
        if row is None:
            raise NotFound("game.not_found", f"no game {game_id}")
        return row

    # --- keys ------------------------------------------------------------------------------------
    async def keys(self, game_id: str) -> Keys:
        """The game's secret keys (seed and message key), cached."""
        keys = self._keys.get(game_id)
        if keys is None:
            keys = Keys(await self.store.seed(game_id), await self.store.message_key(game_id))
            self._keys.put(game_id, keys)
        return keys

    def known_keys(self, game_id: str) -> Keys | None:
        """The game's keys if this process holds them (no read)."""
        return self._keys.get(game_id)

    def keep_keys(self, game_id: str, keys: Keys) -> None:
        """The keys of a game just created (so they are never read back)."""
        self._keys.put(game_id, keys)

    async def seed(self, game_id: str) -> bytes:
        return (await self.keys(game_id)).seed


def check_game_id(game_id: str) -> None:
    """:class:`NotFound` for anything that is not a game id: a UUID in the one spelling the
    server issues (lower case, hyphenated). PostgreSQL would read any spelling as the same UUID,
    but Redis keys and this process's caches are keyed by the string: another spelling would be
    another projection record of the same game (decision, docs/api.md)."""
    if not CANONICAL_UUID.fullmatch(game_id):
        raise NotFound("game.not_found", f"no game {game_id}")
