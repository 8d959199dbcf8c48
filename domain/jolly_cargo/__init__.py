"""Tom Jolly's CARGO: push your crates onto your ship's loading area, shove the others into the sea.

Game id ``jolly-cargo``; 2–4 players. ``docs/rules/jolly-cargo.md`` states the rules as implemented.
"""

from .game import JOLLY_CARGO

__all__ = ["JOLLY_CARGO"]
