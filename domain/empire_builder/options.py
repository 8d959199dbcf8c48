"""Options (the manual's terms) a game's creator chooses."""

from __future__ import annotations

from typing import Annotated

import msgspec

from domain.kernel.bounds import between

from .board import MAP

#: The most money ($M, also debt) a position or the terms may name: 4,000 times the default
#: target, thousands of deliveries (docs/rules/empire-builder.md, "Position form").
MONEY_MAX = 1_000_000
#: The most turns of one player a position or a turn limit may name.
TURNS_MAX = 100_000


class Options(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    #: Cash ($M) a player needs at the end of a turn to win.
    money_to_win: Annotated[int, between(1, MONEY_MAX)] = 250
    #: Major cities the winner's own continuous network must join.
    majors_to_win: Annotated[int, between(1, len(MAP.majors))] = 5
    #: 0: no limit. Otherwise the game ends after this many turns of every player, won by the
    #: richest (ties share); a safety net for bot games, not part of the published rules.
    turn_limit: Annotated[int, between(0, TURNS_MAX)] = 0
    #: The manual's term "whether borrowing will be allowed" (allowed unless the creator says no).
    borrowing: bool = True
