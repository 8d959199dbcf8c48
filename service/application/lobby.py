"""The lobby: creating a game (in one transaction: row, seats, events, start), joining with the
invite code (and the invited names), the host taking a seat back or starting the game, and the
list of games. Lobby actions take the game's row lock and append through
:meth:`~service.application.writes.Writes.append`; who a token is, :class:`Seats`."""

from __future__ import annotations

import hmac
import uuid
from datetime import UTC, datetime
from typing import Any

import msgspec

from domain.kernel import Rng, RuleError, seed_commitment
from domain.kernel.errors import UnknownGame
from domain.platform import referee
from domain.platform.events import (
    LobbyCreated,
    LobbyJoined,
    LobbyLeft,
)
from domain.platform.table import Table, game_document, table_to_act
from domain.registry import AnyGame, current_edition, get_game
from ledger.commitments import CANONICAL, Keys
from service.application.answers import (
    CreatedGame,
    GameList,
    GameSummary,
    Joined,
    SeatRemoved,
    SeatSlot,
    Started,
)
from service.application.bodies import CreateGame, JoinGame
from service.application.clocks import ClockLimits, clock_terms
from service.application.errors import BadRequest, Conflict, Forbidden, RefusedByRules
from service.application.names import alike, all_distinct, player_name
from service.application.seats import Seats
from service.application.tables import Tables
from service.application.tokens import (
    HOST_PREFIX,
    PLAYER_PREFIX,
    SEAT_PREFIX,
    new_invite_code,
    new_seed,
    new_token,
    token_hash,
)
from service.application.writes import Writes
from service.eventstore.players import KeyHolder
from service.eventstore.port import EventLog, LockedGame
from service.eventstore.records import SeatTaken


def _names(values: list[str], seats: int) -> list[str]:
    """Players named at creation: one per seat (counted first: the list is as long as a body
    allows, and each name costs its confusables skeleton), each a valid name, no two alike
    (:func:`alike`)."""
    if len(values) != seats:
        raise RefusedByRules("lobby.bad_players", f"name {seats} players, one per seat")
    names = [player_name(v) for v in values]
    if not all_distinct(names):
        raise BadRequest("lobby.name_taken", "two players may not have the same name")
    return names


class Lobby:
    """Games created, joined, started, seats taken back, games listed."""

    def __init__(
        self,
        store: EventLog,
        tables: Tables,
        seats: Seats,
        writes: Writes,
        canonical: int = CANONICAL,
        clock_limits: ClockLimits | None = None,
    ) -> None:
        self.store = store
        self.tables = tables
        self.seats = seats
        self.writes = writes
        #: The canonical form new games are created in (``ledger.chain``; 1 only to
        #: test that games created before commitments still verify).
        self.canonical = canonical
        #: The operator's bounds kept in a new game's clock terms.
        self.clock_limits = clock_limits or ClockLimits()

    async def create(self, req: CreateGame, token: str | None = None) -> CreatedGame:
        """A new game; created with a player key (``token``), its creator takes the seat
        ``req.seat`` names (else the first), bound to the player (docs/api.md, "Players")."""
        creator = None if token is None else await _player_of(self.seats, token)
        _check_creator(creator, req)
        try:
            rules = get_game(req.game)
        except UnknownGame:
            raise RefusedByRules(
                "lobby.unknown_game", f"no game {req.game!r}; see /v1/rules"
            ) from None
        if not rules.min_seats <= req.seats <= rules.max_seats:
            raise RefusedByRules(
                "lobby.bad_seats",
                f"{rules.title} is for {rules.min_seats} to {rules.max_seats} players",
            )
        options = _problem_from(lambda: rules.decode_options(req.options))
        clock = clock_terms(req.clock, self.clock_limits)
        position = None
        if req.position is not None:
            position = _problem_from(lambda: rules.decode_position(req.position or {}))
        players = None if req.players is None else _names(req.players, req.seats)
        invited = _invited(req.invited, players)
        mine = 0 if req.seat is None else req.seat
        if creator and invited and not any(alike(creator.name, n) for n in invited):
            raise RefusedByRules("lobby.bad_players", "invite the creator's name too")
        seed = new_seed()
        message_key = new_seed() if self.canonical >= CANONICAL else None
        # Dry run of the set-up, so bad options or positions never leave a game behind.
        _problem_from(lambda: self._opening(rules, options, position, req.seats, seed, 1))
        if position is not None and rules.position_seats(position) != req.seats:
            raise RefusedByRules(
                "position.invalid",
                f"the position has {rules.position_seats(position)} players, not {req.seats}",
            )
        host_token = new_token(HOST_PREFIX)
        seats = [SeatSlot(seat=i, name=None, token=None) for i in range(req.seats)]
        snapshots: dict[int, bytes] = {}
        # One transaction: the game row, its seats, its events and its start — a failure
        # anywhere leaves nothing behind (no orphan game in the list).
        async with self.store.creating(
            game=rules.id,
            seats=req.seats,
            options=msgspec.to_builtins(options),
            invite_code=new_invite_code(),
            seed=seed,
            host_token_hash=token_hash(host_token),
            message_key=message_key,
        ) as locked:
            row = locked.row
            self.tables.keep_keys(row.id, Keys(seed, message_key))
            created = LobbyCreated(
                rules.id,
                req.seats,
                msgspec.to_builtins(options),
                seed_commitment(seed),
                None if position is None else msgspec.to_builtins(position),
                canonical=self.canonical,
                invited=invited,
                edition=current_edition(rules.id),
                clock=clock,
            )
            pending: list[msgspec.Struct] = [created]
            for i, name in enumerate(players or []):
                token = new_token(SEAT_PREFIX)
                await locked.set_seat(i, name, token_hash(token))
                seats[i] = SeatSlot(seat=i, name=name, token=token)
                pending.append(LobbyJoined(i, name))
            if creator is not None:
                token = new_token(SEAT_PREFIX)
                await locked.set_seat(
                    mine, creator.name, token_hash(token), player=creator.player_id
                )
                seats[mine] = SeatSlot(seat=mine, name=creator.name, token=token)
                pending.append(LobbyJoined(mine, creator.name))
            table = await self.writes.append(locked, pending, snapshots, seat=None, command_id=None)
            if players is not None or (creator is not None and req.seats == 1):
                table = await self._start(locked, table, snapshots)
            locked_row = locked.row
        for slot in seats:  # committed: the tokens are valid now (cached once started only:
            if slot.token is not None and table.status != "open":  # a seat may be removed)
                self.seats.started(slot.token, row.id, slot.seat)
        self.writes.project(table, snapshots)
        started = table.state is not None
        return CreatedGame(
            id=row.id,
            game=rules.id,
            status=table.status,
            version=locked_row.version,
            host_token=host_token,
            invite_code=row.invite_code,
            seats=seats,
            # started at once: who acts, and the game as the host (no seat) sees it
            to_act=table_to_act(table) if started else [],
            view=game_document(table, "spectator").view if started else None,
        )

    async def _open_table(self, locked: LockedGame) -> Table:
        """The locked game's table, which must still be open (a lobby action): else 409."""
        table = await self.tables.at_lock(locked)
        if table.status != "open":
            raise Conflict("lobby.started", "the game has already started")
        return table

    @staticmethod
    def _opening(
        rules: AnyGame, options: Any, position: Any, seats: int, seed: bytes, version: int
    ) -> list[Any]:
        rng = Rng(seed, version)
        if position is not None:
            return rules.start_from_position(position, rng)
        return rules.start(options, seats, rng)

    async def join(self, game_id: str, req: JoinGame, token: str | None = None) -> Joined:
        """Take a seat with the invite code; with a player key (``token``) the seat is bound
        to the player and takes its name (a ``name`` sent must be alike it)."""
        player = None if token is None else await _player_of(self.seats, token)
        row = await self.tables.row(game_id)
        if not hmac.compare_digest(req.invite_code.encode(), row.invite_code.encode()):
            raise Forbidden("lobby.bad_invite", "the invite code does not match this game")
        name = _joiner_name(player, req.name)
        token = new_token(SEAT_PREFIX)
        snapshots: dict[int, bytes] = {}
        async with self.store.lock(game_id) as locked:
            table = await self._open_table(locked)
            _check_invited(table, name)
            free = [i for i, n in enumerate(table.names) if n is None]
            if player is not None and await locked.seat_of_player(player.player_id) is not None:
                raise Conflict("lobby.already_seated", "the player has a seat in this game")
            if any(n is not None and alike(n, name) for n in table.names):
                raise Conflict("lobby.name_taken", f"a player called {name!r} has joined")
            if req.seat is not None:
                if not 0 <= req.seat < table.seats:
                    raise RefusedByRules("lobby.no_such_seat", f"seats are 0 to {table.seats - 1}")
                if req.seat not in free:
                    raise Conflict("lobby.seat_taken", f"seat {req.seat} is taken")
                chosen = req.seat
            elif not free:
                raise Conflict("lobby.full", "every seat is taken")
            else:
                chosen = free[0]
            try:
                await locked.set_seat(
                    chosen,
                    name,
                    token_hash(token),
                    player=None if player is None else player.player_id,
                )
            except SeatTaken:
                raise Conflict("lobby.seat_taken", f"seat {chosen} is taken") from None
            table = await self.writes.append(
                locked, [LobbyJoined(chosen, name)], snapshots, seat=chosen, command_id=None
            )
            if all(n is not None for n in table.names):
                table = await self._start(locked, table, snapshots)
        if table.status != "open":  # committed, and no host can take the seat back any more
            self.seats.started(token, game_id, chosen)
        self.writes.project(table, snapshots)
        return Joined(game=game_id, seat=chosen, token=token, status=table.status)

    async def remove_seat(self, game_id: str, token: str | None, seat: int) -> SeatRemoved:
        """The host takes a joined player's seat back before the start (``lobby.left``): the
        seat reopens and the player's token stops working."""
        await self.seats.require_host(game_id, token)
        snapshots: dict[int, bytes] = {}
        async with self.store.lock(game_id) as locked:
            table = await self._open_table(locked)
            if not 0 <= seat < table.seats:
                raise RefusedByRules("lobby.no_such_seat", f"seats are 0 to {table.seats - 1}")
            name = table.names[seat]
            if name is None:
                raise Conflict("lobby.seat_empty", f"nobody has joined seat {seat}")
            await locked.release_seat(seat)
            table = await self.writes.append(
                locked, [LobbyLeft(seat, name)], snapshots, seat=None, command_id=None
            )
        self.writes.project(table, snapshots)
        return SeatRemoved(id=game_id, seat=seat, status=table.status, version=table.version)

    async def start(self, game_id: str, token: str | None) -> Started:
        await self.seats.require_host(game_id, token)
        snapshots: dict[int, bytes] = {}
        async with self.store.lock(game_id) as locked:
            table = await self._open_table(locked)
            if any(n is None for n in table.names):
                raise Conflict("lobby.not_full", "the game starts once every seat is taken")
            table = await self._start(locked, table, snapshots)
        self.writes.project(table, snapshots)
        return Started(id=game_id, status=table.status, version=table.version)

    async def _start(self, locked: LockedGame, table: Table, snapshots: dict[int, bytes]) -> Table:
        rules = table.rules
        seed = await self.tables.seed(table.game_id)
        created = await locked.read(after=0, limit=1)
        position_raw = created[0].data.get("position")
        position = None if position_raw is None else rules.decode_position(position_raw)
        options = rules.decode_options(table.options)
        events = self._opening(rules, options, position, table.seats, seed, table.version + 1)
        table = await self.writes.append(locked, events, snapshots, seat=None, command_id=None)
        clock = referee.started(table, datetime.now(UTC))  # a turn clock starts with the game
        if clock:
            table = await self.writes.append(locked, clock, snapshots, seat=None, command_id=None)
        return table

    async def list_games(
        self, status: str | None, game: str | None, limit: int, cursor: str | None
    ) -> GameList:
        before = None if cursor is None else _cursor(cursor)
        rows = await self.store.list_games(status=status, game=game, limit=limit, before=before)
        nxt = None
        if len(rows) == limit:
            at, gid = rows[-1].cursor
            # URL-safe as it is ("Z", not "+00:00": a "+" pasted into a query string is a space)
            nxt = f"{at.astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%S.%fZ')}~{gid}"
        games = [
            GameSummary(
                id=r.id,
                game=r.game,
                status=r.status,
                seats=r.seats,
                players=r.players,
                options=r.options,  # the terms (Empire Builder's money to win, ...)
                version=r.version,
                created_at=r.created_at.isoformat(),
            )
            for r in rows
        ]
        return GameList(games=games, next=nxt)


async def _player_of(seats: Seats, token: str) -> KeyHolder | None:
    """The player a lobby request is made by (a player key holding ``play``), if any; other
    tokens are not read here (the lobby takes none)."""
    if not token.startswith(PLAYER_PREFIX):
        return None
    return await seats.player(token, "play")


def _check_creator(creator: KeyHolder | None, req: CreateGame) -> None:
    """A creator with a player key takes a seat in range and names no players; ``seat`` is a
    player key's alone."""
    if creator is None:
        if req.seat is not None:
            raise RefusedByRules("lobby.no_such_seat", "seat names a player key's seat")
        return
    if req.players is not None:
        raise RefusedByRules(
            "lobby.bad_players", "with a player key, name no players: the others join"
        )
    if req.seat is not None and req.seat >= req.seats:
        raise RefusedByRules("lobby.no_such_seat", f"seats are 0 to {req.seats - 1}")


def _joiner_name(player: KeyHolder | None, sent: str | None) -> str:
    """The name a seat is joined under: the player's (a name sent must be alike it), else
    the name sent, which is needed then."""
    if player is not None:
        if sent is not None and not alike(player_name(sent), player.name):
            raise BadRequest("lobby.bad_name", "with a player key, the name is the player's")
        return player.name
    if sent is None:
        raise BadRequest("lobby.bad_name", "send a name (or join with a player key)")
    return player_name(sent)


def _cursor(text: str) -> tuple[datetime, str]:
    """A ``next`` of ours read back: a time with its UTC offset, ``~``, a game id. Anything
    else — no offset, a time that is out of range once moved to UTC (``0001-01-01T00:00+14:00``
    is the year 0), a malformed id — is 400 ``request.bad_cursor``, never a 500 from the
    driver."""
    at_text, sep, gid = text.partition("~")
    try:
        if not sep:
            raise ValueError("no ~")
        at = datetime.fromisoformat(at_text)
        if at.tzinfo is None or at.utcoffset() is None:
            raise ValueError("no UTC offset")
        return at.astimezone(UTC), str(uuid.UUID(gid))
    except (ValueError, OverflowError):
        raise BadRequest("request.bad_cursor", "the cursor is not one we gave out") from None


def _invited(invited: list[str] | None, players: list[str] | None) -> list[str] | None:
    if invited is None:
        return None
    names = [player_name(n) for n in invited]
    if not names or not all_distinct(names):
        raise RefusedByRules("lobby.bad_invited", "invite one or more names, each once")
    if players is not None and any(not any(alike(p, n) for n in names) for p in players):
        raise RefusedByRules("lobby.bad_players", "every player named must be invited")
    return names


def _check_invited(table: Table, name: str) -> None:
    if table.invited is None:
        return
    if not any(alike(name, n) for n in table.invited):
        raise Forbidden("lobby.not_invited", f"{name!r} is not invited to this game")
    if any(alike(name, n) for n in table.names if n is not None):
        raise Conflict("lobby.already_seated", f"{name!r} has a seat already")


def _problem_from(thunk: Any) -> Any:
    try:
        return thunk()
    except RuleError as error:
        raise RefusedByRules(error.code, error.message, **error.details) from None
