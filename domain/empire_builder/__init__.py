"""Empire Builder: build a rail network across North America and deliver loads to demands."""

from .game import EMPIRE_BUILDER

__all__ = ["EMPIRE_BUILDER"]
