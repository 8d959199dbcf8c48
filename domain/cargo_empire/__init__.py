"""Cargo Empire: deliver cargo across Europe with Truck, Train and Ship cards, spread your trading
posts, upgrade cities and develop your vehicles.

Game id ``cargo-empire``; 1–5 players. ``docs/rules/cargo-empire.md`` states the rules as
implemented; the components are data in ``data/``.
"""

from .game import CARGO_EMPIRE

__all__ = ["CARGO_EMPIRE"]
