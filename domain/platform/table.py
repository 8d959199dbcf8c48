"""A game table as the platform sees it: the game's state plus seats, names, status and table
talk, folded from the whole stream. It is a pure function of the stream's events, which is
what lets projections be repaired or rebuilt from PostgreSQL at any time."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

import msgspec

from domain.kernel import AUDITOR, SPECTATOR, Viewer, decoder, seat, typed
from domain.kernel.grammar import Rule, legal_answer
from domain.platform.clocks import Clock, ClockSet, new_clock
from domain.platform.events import (
    LobbyCreated,
    LobbyJoined,
    LobbyLeft,
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


class Table(msgspec.Struct):
    game_id: str
    game: str
    seats: int
    options: Any
    version: int
    status: str  # open | active | finished
    names: list[str | None]
    messages: list[TableMessage]
    #: The game's state (a Struct of the game's state type), None until the game starts.
    state: Any = None
    #: The canonical form of the game's events (``LobbyCreated.canonical``).
    canonical: int = 1
    #: Names that may join (None: anyone with the invite code).
    invited: list[str] | None = None
    #: Every seat's turn clock (None: the game has none), as the last ``clock.set`` left it.
    clock: Clock | None = None

    @property
    def rules(self) -> AnyGame:
        return get_game(self.game)


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
                table.clock = Clock(table.clock.terms, list(platform.seats))
            continue
        rules = table.rules
        table.state = rules.evolve(table.state, rules.decode_event(event.data))
        table.status = "finished" if rules.outcome(table.state) is not None else "active"
    if table is None:
        raise ValueError("an empty stream has no table")
    return table


def copy_table(table: Table) -> Table:
    """A shallow copy whose lists may be appended to without touching the original (game
    states are never mutated: ``evolve`` returns new ones)."""
    return msgspec.structs.replace(table, names=list(table.names), messages=list(table.messages))


def encode_table(table: Table) -> bytes:
    return msgspec.json.encode(table)


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


def game_document(table: Table, key: str, everything: bool | None = None) -> dict[str, Any]:
    """The body of ``GET /v1/games/{id}`` for one viewer (``everything``: see ``viewer_of``)."""
    rules = table.rules
    viewer = viewer_of(key, table, everything)
    state = table.state
    outcome = rules.outcome(state) if state is not None else None
    seat_no = int(key[5:]) if key.startswith("seat:") else None
    document = {
        "id": table.game_id,
        "game": table.game,
        "status": table.status,
        "version": table.version,
        "seats": [{"seat": i, "name": n} for i, n in enumerate(table.names)],
        "to_act": rules.to_act(state) if state is not None else [],
        "view": rules.view(state, viewer) if state is not None else None,
        "result": None if outcome is None else msgspec.to_builtins(outcome),
        "messages": [
            msgspec.to_builtins(m)
            for m in table.messages
            if message_visible_to(m, seat_no)
        ],
    }
    if table.clock is not None:  # the part a game without a clock never shows
        document["clock"] = clock_document(table.clock)
    return document


def clock_document(clock: Clock) -> dict[str, Any]:
    """The ``clock`` part of a game document: the terms and every seat's clock (a running
    clock's ``deadline``; a Fischer bank as it was when the clock started, or now if stopped)."""
    return {
        "terms": msgspec.to_builtins(clock.terms),
        "seats": [
            {
                "seat": i,
                "running": c.since is not None,
                "since": None if c.since is None else msgspec.to_builtins(c.since),
                "deadline": None if c.deadline is None else msgspec.to_builtins(c.deadline),
                "bank_ms": c.bank_ms,
                "expiries": c.expiries,
                "sitting_in": c.sitting_in,
            }
            for i, c in enumerate(clock.seats)
        ],
    }


def legal_document(table: Table, seat_no: int) -> dict[str, Any]:
    """The body of ``GET /v1/games/{id}/legal`` for one seat. The commands stay Structs
    (msgspec encodes them as it would their builtins, without building the builtins)."""
    commands: list[Any] = []
    grammar: list[Rule] = []
    if table.state is not None and table.status == "active":
        commands = table.rules.legal(table.state, seat_no)
        grammar = table.rules.grammar(table.state, seat_no, commands)
    return {"version": table.version, **legal_answer(commands, grammar)}
