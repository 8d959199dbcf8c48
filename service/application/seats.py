"""Who a token is: the seat a seat token acts for (cached once its game has started: before,
the host may take the seat back), a viewer where a token is optional, and the host token of a
game. One :class:`Seats` per process, shared by every service (:mod:`service.bootstrap`)."""

from __future__ import annotations

import structlog

from infra.lru import LRU
from service.application.errors import Forbidden, NotFound, Unauthorized
from service.application.tables import CACHE_GAMES
from service.application.tokens import HOST_PREFIX, token_hash
from service.eventstore.port import EventLog
from service.eventstore.records import GameNotFound


class Seats:
    """Token authentication over the event store's seat tokens and host token hashes."""

    def __init__(self, store: EventLog, size: int = 8 * CACHE_GAMES) -> None:
        self.store = store
        #: token hash -> (game id, seat), of games that have started
        self._seat_tokens: LRU[bytes, tuple[str, int]] = LRU(size)

    async def seat_for(self, game_id: str, token: str | None) -> int | None:
        """The seat a token acts for in this game; None without a token."""
        if token is None:
            return None
        digest = token_hash(token)
        found = self._seat_tokens.get(digest)
        if found is None:
            found = await self.store.seat_for_token(digest)
            if found is None:
                raise Unauthorized("auth.invalid_token", "the token is not a seat token")
            if await self._started(found[0]):  # before the start the host may remove a seat
                self._seat_tokens.put(digest, found)
        if found[0] != game_id:
            raise Forbidden("auth.wrong_game", "the token is for a seat of another game")
        structlog.contextvars.bind_contextvars(seat=found[1])  # for the request's log line
        return found[1]

    async def viewer(self, game_id: str, token: str | None) -> int | None:
        """Who reads where a seat token is optional (events, replay, dispute files, export, the
        stream, queries): the token's seat, or None — a spectator — without a token or with
        this game's host token (the host is no seat; another game's host token: Forbidden)."""
        if token is not None and token.startswith(HOST_PREFIX):
            await self.require_host(game_id, token)
            return None
        return await self.seat_for(game_id, token)

    def knows_token(self, token: str) -> bool:
        """Is this a seat token this process has seen valid (issued or looked up) for a game
        that has started (only those are cached: see ``seat_for``)? For the quotas, which count
        a token as a client only then (``service.http.limits``)."""
        return self._seat_tokens.get(token_hash(token)) is not None

    def started(self, token: str, game_id: str, seat: int) -> None:
        """``token`` acts for ``seat`` of ``game_id``, which has started (committed): cached,
        since no host can take that seat back any more."""
        self._seat_tokens.put(token_hash(token), (game_id, seat))

    async def _started(self, game_id: str) -> bool:
        row = await self.store.get_game(game_id)
        return row is not None and row.status != "open"

    async def require_seat(self, game_id: str, token: str | None) -> int:
        if token is None:
            raise Unauthorized("auth.missing_token", "send the seat token: Authorization: Bearer")
        seat = await self.seat_for(game_id, token)
        if seat is None:  # seat_for answers None only without a token
            raise Unauthorized("auth.missing_token", "send the seat token: Authorization: Bearer")
        return seat

    async def require_host(self, game_id: str, token: str | None) -> None:
        if token is None:
            raise Unauthorized("auth.missing_token", "send the host token: Authorization: Bearer")
        try:
            expected = await self.store.host_token_hash(game_id)
        except GameNotFound:
            raise NotFound("game.not_found", f"no game {game_id}") from None
        if token_hash(token) != expected:
            raise Forbidden("auth.not_host", "only the host token of this game may do this")
