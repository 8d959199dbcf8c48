"""Players (issue 39; docs/api.md, "Players"): a player is created with a name and gets a key
(``mfp_…``, shown once, stored only as its SHA-256) holding every scope; with a key holding
``keys`` it makes further keys with fewer scopes, lists and revokes them. Who a key is, and
what it may do in a game, is :class:`~service.application.seats.Seats`' business, as for seat
tokens. "My games" lists the games of the player's seats, the most urgent first."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Annotated

import msgspec

from domain.platform.table import table_to_act
from service.application.errors import BadRequest, Conflict, Forbidden, NotFound, RefusedByRules
from service.application.names import player_name
from service.application.seats import Seats
from service.application.tables import Tables
from service.application.tokens import PLAYER_PREFIX, SCOPES, new_token, token_hash
from service.eventstore.players import PlayerGame, PlayerKey, TooManyKeys
from service.eventstore.port import EventLog


class NewPlayer(msgspec.Struct, forbid_unknown_fields=True):
    name: str


class NewKey(msgspec.Struct, forbid_unknown_fields=True):
    scopes: Annotated[list[str], msgspec.Meta(max_length=len(SCOPES))]
    label: Annotated[str, msgspec.Meta(max_length=100)] | None = None


class KeyInfo(msgspec.Struct):
    """A player key as listed (never the key itself)."""

    id: str
    scopes: list[str]
    label: str | None
    created_at: str
    revoked: bool


class CreatedPlayer(msgspec.Struct):
    """``POST /v1/players``: the player and its first key (shown once, holding every scope)."""

    id: str
    name: str
    key: str
    key_id: str
    scopes: list[str]


class CreatedKey(msgspec.Struct):
    """``POST /v1/me/keys``: the new key, shown once."""

    key: str
    id: str
    scopes: list[str]
    label: str | None


class KeyList(msgspec.Struct):
    keys: list[KeyInfo]


class MyGame(msgspec.Struct):
    """One of the player's games: its seat there, who acts, the earliest clock deadline,
    version and the type of its last event."""

    id: str
    game: str
    status: str
    seat: int
    to_act: bool
    deadline: str | None
    version: int
    last_event: str | None


class MyGames(msgspec.Struct):
    games: list[MyGame]
    next: str | None


def _info(key: PlayerKey) -> KeyInfo:
    return KeyInfo(
        key.id, key.scopes, key.label, key.created_at.isoformat(), key.revoked_at is not None
    )


def _scopes(asked: list[str], held: list[str]) -> list[str]:
    unknown = [s for s in asked if s not in SCOPES]
    if not asked or unknown or len(set(asked)) != len(asked):
        raise RefusedByRules(
            "player.bad_scopes", f"scopes are one or more of {', '.join(SCOPES)}, each once"
        )
    missing = [s for s in asked if s not in held]
    if missing:
        raise Forbidden("player.scope_missing", f"the key does not hold {', '.join(missing)}")
    return [s for s in SCOPES if s in asked]


def _stamp(at: datetime) -> str:
    """A time in UTC in one fixed width (so times sort as text)."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


_FAR = _stamp(datetime.max.replace(tzinfo=UTC))


def _urgency(game: MyGame) -> tuple[int, str, str]:
    """Sort key: to act first, then the soonest deadline (none last), then the id."""
    return (0 if game.to_act else 1, game.deadline or _FAR, game.id)


class Players:
    def __init__(
        self, store: EventLog, tables: Tables, seats: Seats, keys_max: int, games_max: int
    ) -> None:
        self.store = store
        self.tables = tables
        self.seats = seats
        #: Most live keys a player holds at once (MANIFEST_PLAYER_KEYS_MAX).
        self.keys_max = keys_max
        #: Most of a player's games (the most recently changed) ordered (MANIFEST_MY_GAMES_MAX).
        self.games_max = games_max

    async def create(self, req: NewPlayer) -> CreatedPlayer:
        name = player_name(req.name)
        key = new_token(PLAYER_PREFIX)
        scopes = list(SCOPES)
        pid, kid = await self.store.players.create(name, token_hash(key), scopes)
        return CreatedPlayer(id=pid, name=name, key=key, key_id=kid, scopes=scopes)

    async def add_key(self, token: str | None, req: NewKey) -> CreatedKey:
        holder = await self.seats.player(token, "keys")
        scopes = _scopes(req.scopes, holder.scopes)
        key = new_token(PLAYER_PREFIX)
        try:
            stored = await self.store.players.add_key(
                holder.player_id, token_hash(key), scopes, req.label, self.keys_max
            )
        except TooManyKeys:
            raise Conflict(
                "player.too_many_keys", f"a player holds at most {self.keys_max} live keys"
            ) from None
        return CreatedKey(key=key, id=stored.id, scopes=stored.scopes, label=stored.label)

    async def keys(self, token: str | None) -> KeyList:
        holder = await self.seats.player(token, "keys")
        return KeyList(keys=[_info(k) for k in await self.store.players.keys(holder.player_id)])

    async def revoke(self, token: str | None, key_id: str) -> KeyInfo:
        holder = await self.seats.player(token, "keys")
        try:
            kid = str(uuid.UUID(key_id))
        except ValueError:
            raise NotFound("player.no_such_key", f"no key {key_id!r}") from None
        found = await self.store.players.key(kid)
        if found is None:
            raise NotFound("player.no_such_key", f"no key {key_id!r}")
        if found.player_id != holder.player_id:
            raise Forbidden("player.not_your_key", "the key is another player's")
        revoked = await self.store.players.revoke(kid, holder.player_id)
        if revoked is None:  # found above and keys are never deleted: only a race could get here
            raise NotFound("player.no_such_key", f"no key {key_id!r}")
        return _info(revoked)

    async def games(
        self, token: str | None, status: str | None, limit: int, cursor: str | None
    ) -> MyGames:
        """The player's games, the most urgent first: those waiting for the player, then the
        soonest clock deadline (none last), then by id; ``cursor``: the ``next`` of the page
        before (the games after it in this order)."""
        holder = await self.seats.player(token, "read")
        after = None if cursor is None else _cursor(cursor)
        rows = await self.store.players.games(holder.player_id, status, self.games_max)
        games = sorted([await self._mine(r) for r in rows], key=_urgency)
        if after is not None:
            games = [g for g in games if _urgency(g) > after]
        page = games[:limit]
        nxt = None
        if len(games) > limit:
            flag, deadline, gid = _urgency(page[-1])
            nxt = f"{flag}~{deadline}~{gid}"
        return MyGames(games=page, next=nxt)

    async def _mine(self, row: PlayerGame) -> MyGame:
        to_act = False
        if row.status == "active":
            table = await self.tables.stored(row.game_id, row.head, row.version)
            to_act = row.seat in table_to_act(table)  # never a resigned seat
        return MyGame(
            id=row.game_id,
            game=row.game,
            status=row.status,
            seat=row.seat,
            to_act=to_act,
            deadline=None if row.due_at is None else _stamp(row.due_at),
            version=row.version,
            last_event=row.last_event,
        )


def _cursor(text: str) -> tuple[int, str, str]:
    flag, _, rest = text.partition("~")
    deadline, _, gid = rest.partition("~")
    try:
        if flag not in ("0", "1"):
            raise ValueError("flag")
        datetime.fromisoformat(deadline)
        return int(flag), deadline, str(uuid.UUID(gid))
    except ValueError:
        raise BadRequest("request.bad_cursor", "the cursor is not one we gave out") from None
