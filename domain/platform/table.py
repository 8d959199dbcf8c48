"""A game table as the platform sees it: the game's state plus seats, names, status and table
talk, folded from the whole stream. It is a pure function of the stream's events, which is
what lets projections be repaired or rebuilt from PostgreSQL at any time."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Annotated, Any, Generic, Literal, Protocol, TypeVar

import msgspec
from msgspec import Meta

from domain.kernel import AUDITOR, SPECTATOR, Outcome, Viewer, decoder, seat, typed
from domain.kernel.grammar import Rule, legal_answer
from domain.platform.clocks import Clock, ClockSet, ClockTerms, new_clock
from domain.platform.events import (
    Abort,
    Aborted,
    LobbyCreated,
    LobbyJoined,
    LobbyLeft,
    Resign,
    Resigned,
    TableMessage,
    decode_platform,
    is_platform,
    message_visible_to,
)
from domain.registry import AnyGame, get_game


class StreamEvent(Protocol):
    """What a projection needs of a stored event."""

    @property
    def version(self) -> int: ...
    @property
    def type(self) -> str: ...
    @property
    def data(self) -> Any: ...


Status = Literal["open", "active", "finished"]


class Table(msgspec.Struct):
    game_id: str
    game: str
    seats: int
    options: Any
    version: int
    status: Status
    names: list[str | None]
    messages: list[TableMessage]
    #: The game's state (a Struct of the game's state type), None until the game starts.
    state: Any = None
    #: The canonical form of the game's events (``LobbyCreated.canonical``).
    canonical: int = 1
    #: Names that may join (None: anyone with the invite code).
    invited: list[str] | None = None
    #: The rules edition the game was created under (``LobbyCreated.edition``).
    edition: int = 1
    #: Every seat's turn clock (None: the game has none), as the last ``clock.set`` left it.
    clock: Clock | None = None
    #: The seats that resigned, in order (``game.resigned``; docs/api.md "Ending a game").
    resigned: list[int] = []
    #: Why the game ended when not by its rules (``resigned``, ``aborted``), else None.
    ended: str | None = None
    #: The seats that have made a move (what ``abort`` asks: until every seat has moved).
    moved: list[int] = []

    @property
    def rules(self) -> AnyGame:
        """The game's rules in its own edition (``domain.registry``)."""
        return get_game(self.game, self.edition)


def fold_stream(table: Table | None, events: Iterable[StreamEvent], game_id: str) -> Table:
    """Fold stored events (in version order, continuing ``table``) into a table."""
    for event in events:
        if table is None:
            created = decode_platform(event.data)
            if not isinstance(created, LobbyCreated):
                raise ValueError(f"a stream starts with lobby.created, not {event.type}")
            table = Table(
                game_id=game_id,
                game=created.game,
                seats=created.seats,
                # In the game's own field order, not as stored: PostgreSQL's jsonb reorders
                # object keys, and a table folded from the stored events must be byte for byte
                # the one folded at append time (``manifest rebuild`` compares them).
                options=msgspec.to_builtins(get_game(created.game).decode_options(created.options)),
                version=event.version,
                status="open",
                names=[None] * created.seats,
                messages=[],
                canonical=created.canonical,
                invited=created.invited,
                edition=created.edition,
                clock=new_clock(created.clock, created.seats),
            )
            continue
        if event.version != table.version + 1:
            raise ValueError(f"stream gap: version {event.version} after {table.version}")
        table.version = event.version
        if is_platform(event.type):
            platform = decode_platform(event.data)
            if isinstance(platform, LobbyJoined):
                table.names[platform.seat] = platform.name
            elif isinstance(platform, LobbyLeft):
                table.names[platform.seat] = None
            elif isinstance(platform, TableMessage):
                table.messages.append(platform)
            elif isinstance(platform, ClockSet) and table.clock is not None:
                table.clock = Clock(table.clock.terms, list(platform.seats), platform.idle)
            elif isinstance(platform, Resigned):
                table.resigned = [*table.resigned, platform.seat]
                if len(remaining_seats(table.seats, table.resigned)) <= 1:
                    table.ended, table.status = "resigned", "finished"
            elif isinstance(platform, Aborted):
                table.ended, table.status = "aborted", "finished"
            continue
        rules = table.rules
        table.state = rules.evolve(table.state, rules.decode_event(event.data))
        # A move: a game event a command appended (the set-up's have no command).
        mover = getattr(event, "seat", None) if getattr(event, "command_id", None) else None
        if mover is not None and mover not in table.moved:
            table.moved = [*table.moved, mover]
        finished = table.ended is not None or rules.outcome(table.state) is not None
        table.status = "finished" if finished else "active"
    if table is None:
        raise ValueError("an empty stream has no table")
    return table


def copy_table(table: Table) -> Table:
    """A shallow copy whose lists may be appended to without touching the original (game
    states are never mutated: ``evolve`` returns new ones)."""
    return msgspec.structs.replace(table, names=list(table.names), messages=list(table.messages))


def encode_table(table: Table) -> bytes:
    return msgspec.json.encode(table)


#: A replay snapshot (the encoded table) is kept after every event whose version is a multiple.
SNAPSHOT_EVERY = 100


def fold_collecting(
    table: Table | None, events: Sequence[StreamEvent], game_id: str, every: int = SNAPSHOT_EVERY
) -> tuple[Table, dict[int, bytes]]:
    """Fold ``events`` onto ``table`` (not mutated); also return the encoded snapshots of every
    multiple of ``every`` passed on the way."""
    snapshots: dict[int, bytes] = {}
    current = None if table is None else copy_table(table)
    start = 0
    for i, event in enumerate(events):
        if event.version % every == 0:
            current = fold_stream(current, events[start : i + 1], game_id)
            snapshots[event.version] = encode_table(current)
            current = copy_table(current)
            start = i + 1
    current = fold_stream(current, events[start:], game_id) if start < len(events) else current
    if current is None:
        raise ValueError("nothing to fold")
    return current, snapshots


def decode_table(raw: bytes) -> Table:
    table: Table = decoder(Table).decode(raw)
    if table.state is not None:
        table.state = typed(table.state, table.rules.state_type)
    return table


# --- what each viewer reads ------------------------------------------------------------------
def viewer_keys(table: Table) -> list[str]:
    return ["spectator", *(f"seat:{i}" for i in range(table.seats))]


def viewer_of(key: str, table: Table, everything: bool | None = None) -> Viewer:
    """The viewer a document key stands for; everyone sees everything once the game is over
    (``everything`` overrides, for replays of a finished game)."""
    if everything if everything is not None else table.status == "finished":
        return AUDITOR
    if key.startswith("seat:"):
        return seat(int(key[5:]))
    return SPECTATOR


class SeatName(msgspec.Struct, frozen=True, kw_only=True):
    """A seat of the table and the name of the player in it (None: the seat is open)."""

    seat: int
    name: str | None


V = TypeVar("V")


class SeatClockDocument(msgspec.Struct, frozen=True, kw_only=True):
    """One seat's clock in a game document (docs/api.md, "Clocks")."""

    seat: int
    running: Annotated[bool, Meta(description="The seat is asked for a command; its clock runs")]
    since: Annotated[datetime | None, Meta(description="When the running clock started")]
    deadline: Annotated[datetime | None, Meta(description="When the running clock runs out")]
    bank_ms: Annotated[
        int, Meta(description="fischer: the bank when the clock started (or now, if stopped)")
    ]
    expiries: Annotated[int, Meta(description="Expiries in a row")]
    sitting_in: Annotated[bool, Meta(description="The greedy bot plays for the seat")]


class ClockDocument(msgspec.Struct, frozen=True, kw_only=True):
    """The ``clock`` part of a game document: the game's terms and every seat's clock."""

    terms: ClockTerms
    seats: list[SeatClockDocument]
    idle: Annotated[
        int, Meta(description="Expiries in a row with no player's move between them")
    ] = 0
    resting: Annotated[
        bool,
        Meta(
            description="The game has come to rest: idle reached the terms' rest_after, every "
            "clock is stopped until a player moves or comes back"
        ),
    ] = False


class GameDocument(msgspec.Struct, Generic[V], frozen=True, kw_only=True, omit_defaults=True):
    """The body of ``GET /v1/games/{id}`` for one viewer: the table and, once the game has
    started, the game's typed view (``GameDocument[JollyCargoView]`` and so on: the game's
    ``view_type``). Later fields are added at the end, with defaults."""

    id: str
    game: Annotated[str, Meta(description="The game's id (the rules it is played by)")]
    status: Annotated[Status, Meta(description="open (in the lobby), active or finished")]
    version: Annotated[int, Meta(description="The number of the game's last event")]
    seats: list[SeatName]
    to_act: Annotated[list[int], Meta(description="The seats the game is waiting for")]
    view: Annotated[
        V | None,
        Meta(description="What this viewer may see of the game (its view type); null while open"),
    ]
    result: Annotated[Outcome | None, Meta(description="Scores and winners once finished")]
    messages: Annotated[list[TableMessage], Meta(description="The table talk this viewer may read")]
    clock: Annotated[
        ClockDocument | None,
        Meta(description="The turn clock (absent in a game without one; docs/api.md Clocks)"),
    ] = None


class LegalDocument(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The body of ``GET /v1/games/{id}/legal`` for one seat (docs/api.md, "legal")."""

    version: int
    commands: Annotated[list[Any], Meta(description="Commands the seat may send now")]
    complete: Annotated[bool, Meta(description="True: the list is every accepted command")]
    grammar: Annotated[
        list[Rule], Meta(description="Rules deriving the accepted commands not listed")
    ]
    endings: Annotated[
        list[Any],
        Meta(
            description="The platform's commands ending the game the seat may send now "
            "(resign, abort; docs/api.md 'Ending a game'), on its turn or not; absent: none"
        ),
    ] = []


def game_document(table: Table, key: str, everything: bool | None = None) -> GameDocument[Any]:
    """The body of ``GET /v1/games/{id}`` for one viewer (``everything``: see ``viewer_of``)."""
    rules = table.rules
    viewer = viewer_of(key, table, everything)
    state = table.state
    outcome = table_result(table)
    seat_no = int(key[5:]) if key.startswith("seat:") else None
    return GameDocument(
        id=table.game_id,
        game=table.game,
        status=table.status,
        version=table.version,
        seats=[SeatName(seat=i, name=n) for i, n in enumerate(table.names)],
        to_act=table_to_act(table),
        view=rules.view(state, viewer) if state is not None else None,
        result=outcome,
        messages=[m for m in table.messages if message_visible_to(m, seat_no)],
        clock=None if table.clock is None else clock_document(table.clock),
    )


def clock_document(clock: Clock) -> ClockDocument:
    """The ``clock`` part of a game document: the terms and every seat's clock (a running
    clock's ``deadline``; a Fischer bank as it was when the clock started, or now if stopped)."""
    return ClockDocument(
        terms=clock.terms,
        seats=[
            SeatClockDocument(
                seat=i,
                running=c.since is not None,
                since=c.since,
                deadline=c.deadline,
                bank_ms=c.bank_ms,
                expiries=c.expiries,
                sitting_in=c.sitting_in,
            )
            for i, c in enumerate(clock.seats)
        ],
        idle=clock.idle,
        resting=clock.resting,
    )


def legal_document(table: Table, seat_no: int) -> LegalDocument:
    """The body of ``GET /v1/games/{id}/legal`` for one seat. The commands stay Structs
    (msgspec encodes them as it would their builtins, without building the builtins)."""
    commands: list[Any] = []
    grammar: list[Rule] = []
    if table.state is not None and table.status == "active" and seat_no not in table.resigned:
        commands = table.rules.legal(table.state, seat_no)
        grammar = table.rules.grammar(table.state, seat_no, commands)
    return LegalDocument(
        version=table.version,
        **legal_answer(commands, grammar),
        endings=ending_commands(table, seat_no),
    )


# --- a game ended other than by its rules (docs/api.md "Ending a game") -----------------------
def remaining_seats(seats: int, resigned: list[int]) -> list[int]:
    return [s for s in range(seats) if s not in resigned]


def live(table: Table) -> bool:
    return table.state is not None and table.status == "active"


def abortable(table: Table) -> bool:
    """Whether the game may still be called off: live, and some seat has not moved yet."""
    return live(table) and len(set(table.moved)) < table.seats


def ending_commands(table: Table, seat_no: int) -> list[Any]:
    """The ending commands ``seat_no`` may send now (``/legal``'s ``endings``)."""
    if not live(table) or not 0 <= seat_no < table.seats or seat_no in table.resigned:
        return []
    return [Resign(), Abort()] if abortable(table) else [Resign()]


def table_result(table: Table) -> Outcome | None:
    """The table's result: the platform's ending (``reason``), or the game's own with the
    resigned seats ranked last."""
    if table.ended == "aborted":
        return Outcome(scores=[], winners=[], details={}, reason="aborted")
    if table.ended == "resigned":
        left = remaining_seats(table.seats, table.resigned)
        return Outcome(
            scores=[1 if s in left else 0 for s in range(table.seats)],
            winners=left,
            details={"resigned": list(table.resigned)},
            reason="resigned",
        )
    if table.state is None:
        return None
    result: Outcome | None = table.rules.outcome(table.state)
    if result is None or not table.resigned:
        return result
    return ranked_last(result, table.resigned)


def ranked_last(result: Outcome, resigned: list[int]) -> Outcome:
    """A game's own result with the resigned seats ranked last: never winners (the best of the
    others by score win instead, if every winner had resigned)."""
    winners = [s for s in result.winners if s not in resigned]
    if not winners:
        others = [s for s in range(len(result.scores)) if s not in resigned]
        best = max((result.scores[s] for s in others), default=None)
        winners = [s for s in others if result.scores[s] == best]
    return msgspec.structs.replace(
        result, winners=winners, details={**result.details, "resigned": list(resigned)}
    )


def table_to_act(table: Table) -> list[int]:
    """The seats the table waits for: the game's, never a resigned seat, none once ended."""
    if table.state is None or table.ended is not None:
        return []
    waiting: list[int] = table.rules.to_act(table.state)
    return [s for s in waiting if s not in table.resigned]
