"""Options (the manual's terms) a game's creator chooses."""

from __future__ import annotations

import msgspec


class Options(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    #: Cash ($M) a player needs at the end of a turn to win.
    money_to_win: int = 250
    #: Major cities the winner's own continuous network must join.
    majors_to_win: int = 5
    #: 0: no limit. Otherwise the game ends after this many turns of every player, won by the
    #: richest (ties share); a safety net for bot games, not part of the published rules.
    turn_limit: int = 0
    #: The manual's term "whether borrowing will be allowed" (allowed unless the creator says no).
    borrowing: bool = True
