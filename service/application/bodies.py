"""The request bodies of the lobby, play and table talk (decoded strictly: an unknown field is a
400), and their limits."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from domain.platform.clocks import ClockTerms

MAX_MESSAGE = 2000

#: Most names one game may invite (an Empire Builder table is 6; room for substitutes).
MAX_INVITED = 64


class CreateGame(msgspec.Struct, forbid_unknown_fields=True):
    game: str
    seats: Annotated[int, msgspec.Meta(ge=1)]
    options: dict[str, Any] | None = None
    players: list[str] | None = None
    position: dict[str, Any] | None = None
    #: Only these names may join (see ``join``); None: anyone with the invite code.
    invited: Annotated[list[str], msgspec.Meta(max_length=MAX_INVITED)] | None = None
    #: The turn clock's terms (None: no clock; docs/api.md, "Clocks").
    clock: ClockTerms | None = None
    #: The seat a creator with a player key takes (None: the first; docs/api.md, "Players").
    seat: Annotated[int, msgspec.Meta(ge=0)] | None = None


class JoinGame(msgspec.Struct, forbid_unknown_fields=True):
    invite_code: str
    #: The player's name (not needed with a player key: the seat takes the player's own).
    name: str | None = None
    seat: Annotated[int, msgspec.Meta(ge=0)] | None = None


class CommandBody(msgspec.Struct, forbid_unknown_fields=True):
    command: dict[str, Any]
    #: A strict non-negative integer ("28", 28.0, true: 400; see service.http.hardening).
    expected_version: Annotated[int, msgspec.Meta(ge=0)] | None = None


class MessageBody(msgspec.Struct, forbid_unknown_fields=True):
    to: list[int] | str
    text: str
