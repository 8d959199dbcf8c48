"""Curious Cargo: wire machine ports to numbered docks with coloured conveyors, then play trucks
that carry your goods out and your opponent's in. Rules: docs/rules/curious-cargo.md."""

from .game import CURIOUS_CARGO, EDITIONS

__all__ = ["CURIOUS_CARGO", "EDITIONS"]
