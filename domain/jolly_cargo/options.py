"""Options a host chooses when creating a game of CARGO."""

from __future__ import annotations

from typing import Literal

import msgspec

from .board import Colour

CratePlacement = Literal["players", "random"]

#: Crates per player by player count (rules: 10 with 2, 7 with 3, 5 with 4).
CRATES_PER_PLAYER: dict[int, int] = {2: 10, 3: 7, 4: 5}

#: The ship colours in play when the options name none. With two players the ships face each
#: other across the dock, so neither starts nearer the other's loading area.
DEFAULT_COLOURS: dict[int, list[Colour]] = {
    2: ["red", "green"],
    3: ["red", "blue", "green"],
    4: ["red", "blue", "green", "yellow"],
}


class Options(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    #: ``players``: the players place the face-down crates one at a time, in seat order;
    #: ``random``: the server scatters them at random.
    crate_placement: CratePlacement = "players"
    #: The faster (four-player) game: squished and drowned workers are out for good.
    fast_variant: bool = False
    #: Which ships (and crate colours) are in play; one per seat. Default by player count.
    colours: list[Colour] | None = None
