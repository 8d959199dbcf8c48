"""Events the platform itself appends to a game's stream, beside the game's own events.

A game's stream holds, in one dense sequence of versions: ``lobby.created`` (version 1, with the
commitment to the game's secret seed), ``lobby.joined`` for each seat taken (``lobby.left``
when the host takes one back before the start), then the game's own set-up and play events,
with ``table.message`` events (table talk) anywhere after creation, and ``seed.revealed``
appended with the events that finish the game. A game with a turn clock also holds the clock
events (``clock.*``, :mod:`domain.platform.clocks`), and a game ended other than by its rules
``game.resigned`` / ``game.aborted`` (:func:`domain.platform.referee.decide`).
Platform event types contain a dot; a game's own event types never do, so folding a game skips
platform events by type alone.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec

from domain.kernel import Secret, typed
from domain.platform.clocks import ClockEvent, ClockTerms
from domain.registry import get_game


class LobbyCreated(
    msgspec.Struct, frozen=True, tag="lobby.created", tag_field="type", omit_defaults=True
):
    game: str
    seats: int
    options: Any
    #: Hex SHA-256 of the game's secret seed (revealed when the game ends).
    seed_commitment: str
    position: Any = None
    #: The canonical form of the game's events (``ledger.chain``): 1 (absent) = hidden
    #: values
    #: hashed in the clear, as games created before version 2 were; 2 = salted commitments.
    canonical: int = 1
    #: Names that may join (None: anyone with the invite code).
    invited: list[str] | None = None
    #: The game's rules edition (``domain.registry.EDITIONS``; docs/api.md "Rules editions"):
    #: 1 (absent) = the rules before editions were recorded.
    edition: int = 1
    #: The game's turn clock (None: no clock; ``domain.platform.clocks``).
    clock: ClockTerms | None = None


class LobbyJoined(msgspec.Struct, frozen=True, tag="lobby.joined", tag_field="type"):
    seat: int
    name: str


class LobbyLeft(msgspec.Struct, frozen=True, tag="lobby.left", tag_field="type"):
    """The host removed ``name`` from ``seat`` before the start; the seat is open again."""

    seat: int
    name: str


class TableMessage(msgspec.Struct, frozen=True, tag="table.message", tag_field="type"):
    #: Where its hidden values are (``domain.kernel.hidden.HIDDEN_PATHS``).
    hidden_paths: ClassVar[tuple[str, ...]] = ("text",)

    seat: int
    #: Seats addressed, or ``"all"``.
    to: list[int] | str
    text: str


class Resign(
    msgspec.Struct, frozen=True, tag="resign", tag_field="type", forbid_unknown_fields=True
):
    """A platform command (docs/api.md "Ending a game"): a seat gives the game up."""


class Abort(
    msgspec.Struct, frozen=True, tag="abort", tag_field="type", forbid_unknown_fields=True
):
    """A platform command: a seat calls the game off before every seat has moved."""


#: The platform's commands ending a game, sent like a game's commands
#: (``domain.platform.referee.decide``).
Ending = Resign | Abort
ENDING_COMMANDS = frozenset({"resign", "abort"})


class Resigned(msgspec.Struct, frozen=True, tag="game.resigned", tag_field="type"):
    """``seat`` resigned: ranked last, never asked again; with one seat left the game ends."""

    seat: int


class Aborted(msgspec.Struct, frozen=True, tag="game.aborted", tag_field="type"):
    """``seat`` called the game off before every seat had moved: it ends with no result."""

    seat: int


class SeedRevealed(msgspec.Struct, frozen=True, tag="seed.revealed", tag_field="type"):
    """Appended with the events that end the game: the secret seed, in hex, so anyone can
    check it against ``lobby.created.seed_commitment`` and re-run every shuffle and roll."""

    seed: str


PlatformEvent = (
    LobbyCreated
    | LobbyJoined
    | LobbyLeft
    | TableMessage
    | SeedRevealed
    | ClockEvent
    | Resigned
    | Aborted
)


def is_platform(event_type: str) -> bool:
    return "." in event_type


def decode_platform(data: Any) -> PlatformEvent:
    event: PlatformEvent = typed(data, PlatformEvent)
    return event


def message_visible_to(message: TableMessage, seat: int | None) -> bool:
    """Table talk is shown to its sender and addressees (everyone if sent to ``all``) — at any
    time: a private message stays private after the game ends."""
    if message.to == "all":
        return True
    return seat is not None and (seat == message.seat or seat in message.to)


def created_secrets(created: LobbyCreated) -> list[Secret]:
    """A game started from a position carries it in ``lobby.created``: its hidden values (the
    game's ``hidden_position``) are committed like an event's."""
    if created.position is None:
        return []
    rules = get_game(created.game)
    position = rules.decode_position(created.position)
    return [Secret(("position", *s.path), s.seats) for s in rules.hidden_position(position)]


def message_secrets(message: TableMessage) -> list[Secret]:
    """A private message's text is hidden, readable by its sender and addressees only, and
    committed to under the game's message key (never revealed), not its seed."""
    if message.to == "all":
        return []
    return [Secret(("text",), tuple(sorted({message.seat, *message.to})))]


def event_view(event: PlatformEvent, seat: int | None) -> dict[str, Any]:
    """A platform event as ``seat`` (None: a spectator or an auditor) may read it, as JSON: a
    private message's text only to its sender and addressees (ever), a game's starting position
    (it may hold hidden values) to no one. What a platform event's sentence is built from
    (:mod:`domain.kernel.messages`)."""
    data: dict[str, Any] = msgspec.to_builtins(event)
    if isinstance(event, TableMessage) and not message_visible_to(event, seat):
        data["text"] = None
    if isinstance(event, LobbyCreated):
        data.pop("position", None)
    return data
