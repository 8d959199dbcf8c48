"""Options a host chooses when creating a game of Curious Cargo.

``board`` and ``colours`` came later than the first two: absent (``UNSET``) they are not written
into ``game_started`` at all, so the set-up events of a game created before they existed are
the same bytes when the audit re-runs ``start`` (docs/rules/curious-cargo.md, "Rules
editions")."""

from __future__ import annotations

from typing import Literal

import msgspec


class Options(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    #: The starting player (D2: "who last rode in a truck" is not computable); None = at random.
    first_player: Literal[0, 1] | None = None
    #: The card draft of set-up step 10: keep 1 of the 3 dealt, pass 2 (False: the first-game
    #: rule, everyone keeps all three).
    draft: bool = True
    #: The player board both seats use (§3.1 "a matching Player Board"), 1–6; absent: board 1,
    #: the beginners' board (D1).
    board: Literal[1, 2, 3, 4, 5, 6] | msgspec.UnsetType = msgspec.UNSET
    #: 2: the two-colour game; 3: the 3-colour variant (purple splitters and goods, the
    #: shipping board's three-colour side). Absent: 2.
    colours: Literal[2, 3] | msgspec.UnsetType = msgspec.UNSET

    def board_number(self) -> int:
        return 1 if isinstance(self.board, msgspec.UnsetType) else self.board

    def colour_count(self) -> int:
        return 2 if isinstance(self.colours, msgspec.UnsetType) else self.colours
