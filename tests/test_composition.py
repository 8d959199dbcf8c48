"""The application's services are composed, not mixed (issue 27): lobby, play, talk, documents
and queries are objects over explicit collaborators (``service.bootstrap.compose``), not mixins
of one class sharing private caches; no module of the application reaches for another's private
names. Read from the source with :mod:`ast`."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

APPLICATION = sorted((ROOT / "service" / "application").glob("*.py"))


def _composition_faults(source: str, name: str = "<source>") -> list[str]:
    """A private name imported from another module, or a class that extends a class of another
    application module (the typed errors excepted: they are a hierarchy on purpose)."""
    tree = ast.parse(source, name)
    found: list[str] = []
    borrowed: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                if alias.name.startswith("_"):
                    found.append(f"imports the private {node.module}.{alias.name}")
                if node.module.startswith("service.application.") and not node.module.endswith(
                    ".errors"
                ):
                    borrowed.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                if isinstance(base, ast.Name) and base.id in borrowed:
                    found.append(f"class {node.name} extends {base.id}")
    return found


@pytest.mark.parametrize("path", APPLICATION, ids=lambda p: str(p.relative_to(ROOT)))
def test_application_services_are_composed_not_mixed(path: Path) -> None:
    """Issue 27: lobby, play, talk, documents and queries are objects over explicit
    collaborators (``service.bootstrap.compose``), not mixins of one class sharing private
    caches; no module reaches for another's private names."""
    faults = _composition_faults(path.read_text(), str(path))
    assert not faults, f"{path.relative_to(ROOT)}: {faults}"


def test_a_mixin_or_a_borrowed_private_name_is_caught() -> None:
    assert _composition_faults("from service.application.games import _RETRIES, Games\n")
    mixin = "from service.application.games import Games\nclass Play(Games):\n    pass\n"
    assert _composition_faults(mixin) == ["class Play extends Games"]
    errors = "from service.application.errors import NotFound\nclass Gone(NotFound):\n    pass\n"
    assert not _composition_faults(errors)


def test_the_services_share_one_table_cache_one_seat_cache_and_one_write_path() -> None:
    """The caches the mixins shared by inheritance are now collaborators handed to each service:
    they must be the *same* objects. Two ``Tables`` would let play's cached table (or a
    lobby's keys) go unseen by documents and queries (stale or refolded reads); two ``Seats``
    would make a token issued by the lobby unknown to play's quotas; two ``Writes`` two
    admission limits per game."""
    from typing import Any, cast

    from service.application.history import History
    from service.bootstrap import compose

    class _Projector:
        store = object()

    store, signer = cast(Any, object()), cast(Any, object())
    manifest = compose(store, cast(Any, _Projector()), signer)
    services: list[Any] = [manifest.lobby, manifest.play, manifest.talk, manifest.documents]
    services.append(manifest.queries)
    for service in services:
        assert service.tables is manifest.tables, type(service).__name__
        assert service.seats is manifest.seats, type(service).__name__
        assert service.store is store, type(service).__name__
    writers = [manifest.lobby.writes, manifest.play.writes, manifest.talk.writes]
    assert all(w is writers[0] for w in writers)
    assert writers[0].tables is manifest.tables
    assert writers[0].faults is manifest.faults
    assert manifest.seats.store is store and manifest.tables.store is store
    history = History.of(manifest)
    assert history.tables is manifest.tables and history.seats is manifest.seats
    assert history.documents is manifest.documents
