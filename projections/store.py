"""Where projections live: one record per game, a set of named fields written atomically.

A game's projection at version V is the fold of the stream's first V events — one value for each
V — so writes are monotonic: a record is replaced only by one of a higher version, atomically.
Whoever writes, in whatever order, the stored projection only moves forward, and since each is
folded from dense reads of the stream, no event is skipped or applied twice.

Fields of a game's record: ``version``; ``table`` (the folded :class:`~domain.platform.table.Table`,
JSON); ``doc:<viewer>`` (the ``GET /v1/games/{id}`` body for ``spectator`` / ``seat:<n>``);
``legal:<n>`` (the ``GET .../legal`` body of seat ``n``).

The views (``doc:``, ``legal:``) are *lazy* (:mod:`projections.views`): after a move only the
table and the legal commands of the mover and of the seats to act are written
(:meth:`ProjectionStore.advance`, which leaves the other fields where they are), and a view is
built when first read at a version and kept (:meth:`ProjectionStore.put_view`). So each view
carries its own version, as a decimal prefix and a space before its JSON body
(:func:`tag_view`): a view older than the record is never mistaken for a current one, and a view
built at version N and stored after a move to N+1 stays what it is, a view of N."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import AsyncIterator, Mapping


def tag_view(version: int, body: bytes) -> bytes:
    """A view as stored: its version, a space, its JSON body."""
    return b"%d %s" % (version, body)


def split_view(raw: bytes) -> tuple[int | None, bytes]:
    """(version, body) of a stored view; version None when it carries none (written before
    views were versioned: never served, rebuilt when read)."""
    number, space, body = raw.partition(b" ")
    if not space or not number.isdigit():
        return None, raw
    return int(number), body


#: Versions one listener may have waiting before it is cut down to the newest.
MAILBOX_BOUND = 16


class Mailbox:
    """A listener's waiting versions (at most ``bound``), or the error that ended it.

    Only the newest version matters (a stream re-reads the game's document when it wakes
    up), so a mailbox that fills because its reader is slow is cut down to the newest
    version: a slow client costs at most ``bound`` integers, never memory that grows with the
    game's moves. ``None`` is a version too: "re-read, something may have been missed"."""

    def __init__(self, bound: int = MAILBOX_BOUND) -> None:
        self.bound = bound
        self._items: deque[int | None] = deque()
        self._ready = asyncio.Event()
        self._error: Exception | None = None

    def __len__(self) -> int:
        return len(self._items)

    def put(self, version: int | None) -> None:
        if len(self._items) >= self.bound:
            self._items.clear()  # only the newest matters: the reader re-reads the document
        self._items.append(version)
        self._ready.set()

    def fail(self, error: Exception) -> None:
        self._error = error
        self._ready.set()

    async def get(self) -> int | None:
        while not self._items:
            if self._error is not None:
                raise self._error
            self._ready.clear()
            await self._ready.wait()
        return self._items.popleft()


class StoreUnavailable(Exception):
    """The projection store did not answer in time, refused a write (full), or is gone. Reads
    fall back to PostgreSQL or answer 503; writes are retried and repaired by catch-up."""


class ProjectionStore(ABC):
    @abstractmethod
    async def version(self, game_id: str) -> int | None:
        """The version a game's projection reflects, or None if there is none."""

    @abstractmethod
    async def fields(self, game_id: str, names: list[str]) -> list[bytes | None]: ...

    @abstractmethod
    async def write(self, game_id: str, version: int, fields: Mapping[str, bytes]) -> bool:
        """Replace the record with ``fields`` at ``version`` if it has none or an older one, and
        tell subscribers (on any instance). False when the stored record is already at
        ``version`` or newer."""

    @abstractmethod
    async def advance(self, game_id: str, version: int, fields: Mapping[str, bytes]) -> bool:
        """As :meth:`write`, but the fields ``fields`` does not name stay as they are (views
        carry their own version): the write path after a move. Announced like a write."""

    @abstractmethod
    async def put_view(self, game_id: str, name: str, version: int, body: bytes) -> bool:
        """Keep view ``name`` of ``version`` (stored by :func:`tag_view`) unless the stored one
        is of that version or newer, or the game has no record (a view never creates one).
        Not announced: nothing changed in the game."""

    @abstractmethod
    async def versions(self, game_ids: list[str]) -> list[int | None]: ...

    @abstractmethod
    def subscribe(self, game_id: str) -> AsyncIterator[int | None]:
        """``None`` once subscribed, then the versions published for ``game_id``, oldest
        first; a reader that falls behind skips to the newest (:class:`Mailbox`), and ``None``
        again means "re-read, changes may have been missed". Raises
        :class:`StoreUnavailable` when changes can no longer be heard (the stream ends)."""

    async def listening(self) -> None:
        """Return if :meth:`subscribe` can be served now, else raise
        :class:`StoreUnavailable` saying why (``/readyz``)."""
        return None

    @abstractmethod
    async def put_snapshots(self, game_id: str, snapshots: Mapping[int, bytes]) -> None:
        """Keep replay snapshots (the table after event ``version``); they never change."""

    @abstractmethod
    async def snapshot(self, game_id: str, version: int) -> bytes | None: ...

    @abstractmethod
    async def snapshot_versions(self, game_id: str) -> list[int]: ...

    @abstractmethod
    async def clear(self) -> None:
        """Forget every projection (rebuild starts here)."""

    @abstractmethod
    async def ping(self) -> bool: ...

    async def probe_write(self) -> None:
        """Prove the store takes writes (raises :class:`StoreUnavailable` if not)."""
        return None

    async def close(self) -> None:
        return None


class MemoryStore(ProjectionStore):
    """Projections in this process: for running without Redis (one instance only)."""

    def __init__(self) -> None:
        self._records: dict[str, dict[str, bytes]] = {}
        self._snapshots: dict[str, dict[int, bytes]] = {}
        self._subscribers: dict[str, set[Mailbox]] = {}

    async def version(self, game_id: str) -> int | None:
        record = self._records.get(game_id)
        return None if record is None else int(record["version"])

    async def fields(self, game_id: str, names: list[str]) -> list[bytes | None]:
        record = self._records.get(game_id, {})
        return [record.get(name) for name in names]

    async def write(self, game_id: str, version: int, fields: Mapping[str, bytes]) -> bool:
        return self._replace(game_id, version, fields)

    async def advance(self, game_id: str, version: int, fields: Mapping[str, bytes]) -> bool:
        return self._replace(game_id, version, {**self._records.get(game_id, {}), **fields})

    def _replace(self, game_id: str, version: int, fields: Mapping[str, bytes]) -> bool:
        record = self._records.get(game_id)
        if record is not None and int(record["version"]) >= version:
            return False
        self._records[game_id] = {**fields, "version": str(version).encode()}
        for box in self._subscribers.get(game_id, ()):
            box.put(version)
        return True

    async def put_view(self, game_id: str, name: str, version: int, body: bytes) -> bool:
        record = self._records.get(game_id)
        if record is None:
            return False
        old = record.get(name)
        if old is not None and (split_view(old)[0] or 0) >= version:
            return False
        record[name] = tag_view(version, body)
        return True

    async def versions(self, game_ids: list[str]) -> list[int | None]:
        return [await self.version(g) for g in game_ids]

    async def subscribe(self, game_id: str) -> AsyncIterator[int | None]:
        box = Mailbox()
        self._subscribers.setdefault(game_id, set()).add(box)
        try:
            yield None
            while True:
                yield await box.get()
        finally:
            boxes = self._subscribers[game_id]
            boxes.discard(box)
            if not boxes:
                del self._subscribers[game_id]

    async def put_snapshots(self, game_id: str, snapshots: Mapping[int, bytes]) -> None:
        self._snapshots.setdefault(game_id, {}).update(snapshots)

    async def snapshot(self, game_id: str, version: int) -> bytes | None:
        return self._snapshots.get(game_id, {}).get(version)

    async def snapshot_versions(self, game_id: str) -> list[int]:
        return sorted(self._snapshots.get(game_id, {}))

    async def clear(self) -> None:
        self._records.clear()
        self._snapshots.clear()

    async def ping(self) -> bool:
        return True
