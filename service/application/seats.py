"""Who a token is: the seat a seat token acts for (cached once its game has started: before,
the host may take the seat back), a viewer where a token is optional, and the host token of a
game; the :class:`Grant` a long-lived read keeps and re-checks. One :class:`Seats` per process,
shared by every service (:mod:`service.bootstrap`).

A player key (``mfp_…``, issue 39) is taken wherever a seat token is: it acts for the seat of
the game bound to its player, if its scopes allow (reading needs ``read``, acting ``play``).
Player keys are never cached: each use is one PostgreSQL lookup (key, revocation, scopes and
seat in one query), so a revoked key is refused at once by every instance."""

from __future__ import annotations

import msgspec
import structlog

from infra.lru import LRU
from service.application.errors import Forbidden, NotFound, Unauthorized
from service.application.tables import CACHE_GAMES
from service.application.tokens import HOST_PREFIX, PLAYER_PREFIX, token_hash
from service.eventstore.players import KeyHolder
from service.eventstore.port import EventLog
from service.eventstore.records import GameNotFound


class Grant(msgspec.Struct, frozen=True):
    """What a token was found to read of one game: a seat — held by the token's hash, not by
    the seat's number — or the spectator's view (no token, or the game's host token). A read
    that outlives its request (a live stream) keeps its grant and asks :meth:`Seats.holds`
    again after every change: a seat's document is read for its token, never for whoever holds
    that seat now (issue 35)."""

    game_id: str
    seat: int | None = None
    #: the seat token's SHA-256 (None: the spectator's grant, which nothing revokes)
    digest: bytes | None = None
    #: ``digest`` is a player key's (its seat is its player's; revoking the key ends it)
    player: bool = False

    @property
    def field(self) -> str:
        """The projection field of the document this grant reads."""
        return "doc:spectator" if self.seat is None else f"doc:seat:{self.seat}"


class Seats:
    """Token authentication over the event store's seat tokens and host token hashes."""

    def __init__(self, store: EventLog, size: int = 8 * CACHE_GAMES) -> None:
        self.store = store
        #: token hash -> (game id, seat), of games that have started
        self._seat_tokens: LRU[bytes, tuple[str, int]] = LRU(size)

    async def seat_for(self, game_id: str, token: str | None, scope: str = "read") -> int | None:
        """The seat a token acts for in this game; None without a token. ``scope``: what a
        player key must hold for this (``read``, or ``play`` to act)."""
        if token is None:
            return None
        if token.startswith(PLAYER_PREFIX):
            seat = await self._player_seat(game_id, token_hash(token), scope)
            structlog.contextvars.bind_contextvars(seat=seat)
            return seat
        found = await self._binding(token_hash(token))
        if found is None:
            raise Unauthorized("auth.invalid_token", "the token is not a seat token")
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

    async def grant(self, game_id: str, token: str | None) -> Grant:
        """:meth:`viewer` as a :class:`Grant` to keep (raises as :meth:`viewer` does)."""
        seat = await self.viewer(game_id, token)
        if seat is None or token is None:
            return Grant(game_id)
        return Grant(game_id, seat, token_hash(token), token.startswith(PLAYER_PREFIX))

    async def holds(self, grant: Grant) -> bool:
        """Does ``grant`` still stand: its token still bound to its seat of its game? The
        spectator's always does. Sound when asked *after* a read made under the grant: a seat
        token's binding never comes back once gone (a removed seat's row is deleted; a new
        holder gets a new random token), so a binding there before and after a read was there
        throughout it. Costs nothing once the game has started (the binding is cached then:
        nothing can take the seat back); before, one PostgreSQL lookup."""
        if grant.digest is None:
            return True
        if grant.player:  # not cached: one lookup per change, so a revocation ends it
            try:
                return await self._player_seat(grant.game_id, grant.digest, "read") == grant.seat
            except (Unauthorized, Forbidden):
                return False
        return await self._binding(grant.digest) == (grant.game_id, grant.seat)

    async def _player_seat(self, game_id: str, digest: bytes, scope: str) -> int:
        """The seat of ``game_id`` bound to the player of the key with this hash."""
        found = await self.store.players.seat_of(digest, game_id)
        if found is None:
            raise Unauthorized("auth.invalid_token", "the token is not a seat token or player key")
        seat, revoked, scopes = found
        _usable(revoked, scopes, scope)
        if seat is None:
            raise Forbidden("player.not_seated", "the player has no seat in this game")
        return seat

    async def player(self, token: str | None, scope: str) -> KeyHolder:
        """The player a player key is, if the key is live and holds ``scope``."""
        if token is None:
            raise Unauthorized("auth.missing_token", "send a player key: Authorization: Bearer")
        found = None
        if token.startswith(PLAYER_PREFIX):
            found = await self.store.players.holder(token_hash(token))
        if found is None:
            raise Unauthorized("auth.invalid_token", "the token is not a player key")
        holder, revoked = found
        _usable(revoked, holder.scopes, scope)
        structlog.contextvars.bind_contextvars(player=holder.player_id)
        return holder

    async def _binding(self, digest: bytes) -> tuple[str, int] | None:
        """(game id, seat) a seat token's hash is bound to, None when to nothing."""
        found = self._seat_tokens.get(digest)
        if found is None:
            found = await self.store.seat_for_token(digest)
            if found is not None and await self._started(found[0]):
                # Final only when read after the start was seen: the binding read before may
                # be gone (the seat removed, retaken and the game started in between).
                found = await self.store.seat_for_token(digest)
                if found is not None:
                    self._seat_tokens.put(digest, found)
        return found

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

    async def require_seat(self, game_id: str, token: str | None, scope: str = "play") -> int:
        if token is None:
            raise Unauthorized("auth.missing_token", "send the seat token: Authorization: Bearer")
        if token.startswith(HOST_PREFIX) and await self._is_host(game_id, token):
            # a valid token, just no seat (another game's or a made-up one: unknown, 401)
            raise Forbidden("auth.not_seat", "the host token is no seat: send a seat's token")
        seat = await self.seat_for(game_id, token, scope)
        if seat is None:  # seat_for answers None only without a token
            raise Unauthorized("auth.missing_token", "send the seat token: Authorization: Bearer")
        return seat

    async def _is_host(self, game_id: str, token: str) -> bool:
        try:
            return token_hash(token) == await self.store.host_token_hash(game_id)
        except GameNotFound:
            return False

    async def require_host(self, game_id: str, token: str | None) -> None:
        if token is None:
            raise Unauthorized("auth.missing_token", "send the host token: Authorization: Bearer")
        try:
            expected = await self.store.host_token_hash(game_id)
        except GameNotFound:
            raise NotFound("game.not_found", f"no game {game_id}") from None
        if token_hash(token) != expected:
            raise Forbidden("auth.not_host", "only the host token of this game may do this")


def _usable(revoked: bool, scopes: list[str], scope: str) -> None:
    """A player key found: refused when revoked, or when it does not hold ``scope``."""
    if revoked:
        raise Unauthorized("player.key_revoked", "the player key has been revoked")
    if scope not in scopes:
        raise Forbidden("player.scope_missing", f"the player key does not hold the {scope!r} scope")
