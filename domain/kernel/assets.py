"""A game's static data files as assets (``Game.assets``): the bytes of ``data/<name>.json`` in
the game's package, served as they are at ``GET /v1/rules/{game}/assets/{name}``."""

from __future__ import annotations

from importlib import resources


def data_assets(package: str, *names: str) -> dict[str, bytes]:
    """``{name: bytes of <package>/data/<name>.json}`` for each name."""
    folder = resources.files(package).joinpath("data")
    return {name: folder.joinpath(f"{name}.json").read_bytes() for name in names}
