"""The games are found through ``domain/registry.py`` only: it is the one module that imports
every game. The kernel and the platform import none (``domain/platform/timeouts.py`` once
imported every game's ``timeout.py``, which imported it back: an import circle and a second
registry); a game imports no other game; the service, the projections and the benches import
at most one game each (a bench of that game)."""

from __future__ import annotations

import ast
from pathlib import Path

from domain.registry import all_games

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {game.id.replace("-", "_") for game in all_games()}


def games_imported(path: Path, package: tuple[str, ...] = ()) -> set[str]:
    """The game packages the module at ``path`` (in ``package``) imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            module = [*base, *(node.module or "").split(".")]
            names = [".".join(p for p in module if p)]
            if not node.module:  # from . import x
                names = [f"{names[0]}.{alias.name}" for alias in node.names]
        for name in names:
            parts = name.split(".")
            if len(parts) > 1 and parts[0] == "domain" and parts[1] in PACKAGES:
                found.add(parts[1])
    return found


def sources() -> list[Path]:
    return [
        path
        for top in ("domain", "service", "projections", "bench", "infra")
        for path in sorted((ROOT / top).rglob("*.py"))
    ]


def test_only_the_registry_imports_every_game() -> None:
    wrong = {}
    for path in sources():
        relative = path.relative_to(ROOT)
        imported = games_imported(path, relative.parent.parts)
        if relative == Path("domain/registry.py"):
            assert imported == PACKAGES
            continue
        own = relative.parts[1] if relative.parts[0] == "domain" else None
        if own in ("kernel", "platform", "__init__.py"):
            allowed: set[str] = set()  # the kernel and the platform: no game
        elif own in PACKAGES:
            allowed = {own}  # a game: itself
        else:
            allowed = imported if len(imported) <= 1 else set()  # a bench of one game
        if imported - allowed:
            wrong[str(relative)] = imported
    assert wrong == {}


def test_the_check_sees_an_import_of_a_game(tmp_path: Path) -> None:
    """The attack: a platform module importing games' timeouts, inside a function as the old
    second registry did, or relatively, is what the test finds."""
    bad = tmp_path / "timeouts.py"
    bad.write_text(
        "def _registry():\n"
        "    from domain.jolly_cargo import timeout\n"
        "    import domain.cargo_empire.timeout\n"
        "    from ..curious_cargo import timeout as cc\n"
        "    from .. import empire_builder\n"
    )
    assert games_imported(bad, ("domain", "platform")) == PACKAGES


def test_the_records_have_the_member_counts_the_architecture_page_gives() -> None:
    """docs/architecture.md gives the decider's and the presentation's member counts: a member
    added to either record without the page saying so fails here."""
    import dataclasses

    from domain.kernel import Decider, Presentation

    page = (ROOT / "docs" / "architecture.md").read_text()
    decider, presentation = len(dataclasses.fields(Decider)), len(dataclasses.fields(Presentation))
    assert decider <= 8
    assert f"`domain.kernel.game.Decider`, **{decider} members**" in page
    assert f"`domain.kernel.game.Presentation`, **{presentation} members**" in page
