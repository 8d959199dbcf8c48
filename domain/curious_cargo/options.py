"""Options a host chooses when creating a game of Curious Cargo."""

from __future__ import annotations

from typing import Literal

import msgspec


class Options(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    #: The starting player (D2: "who last rode in a truck" is not computable); None = at random.
    first_player: Literal[0, 1] | None = None
    #: The card draft of set-up step 10: keep 1 of the 3 dealt, pass 2 (False: the first-game
    #: rule, everyone keeps all three).
    draft: bool = True
