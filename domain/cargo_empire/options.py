"""Options a host chooses when creating a game of Cargo Empire."""

from __future__ import annotations

from typing import Literal

import msgspec

StartingPosts = Literal["choose", "random"]


class Options(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    #: ``choose``: the players place their 2 starting posts one at a time, in snake order
    #: (seat 0 … last, then last … seat 0); ``random``: the server places them at random.
    starting_posts: StartingPosts = "choose"
