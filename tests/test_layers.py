"""The tree states the architecture, and the imports keep to it (issue 11): inside ``service/``,
``http → application → audit → eventstore``, each layer importing only from itself, the layers
after it, the shared modules beside them (settings, problems, observability, lru), ``domain``
and ``projections``; ``projections`` derives views from ``domain`` alone; ``domain`` imports
nothing of ours but itself. Read from the source with :mod:`ast`, lazy imports included."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ["service.http", "service.application", "service.audit", "service.eventstore"]
SHARED = ["service.settings", "service.problems", "service.observability", "service.lru"]
ENTRY = ["service.cli", "service.workers"]


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    package = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            found.add(name)
            found.update(f"{name}.{alias.name}" for alias in node.names)
    return {n for n in found if n.split(".")[0] in ("service", "domain", "projections")}


def _under(name: str, prefixes: list[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _allowed(module: str) -> list[str]:
    if module.startswith("domain"):
        return ["domain"]
    if module.startswith("projections"):
        return ["projections", "domain"]
    if _under(module, SHARED) or module == "service":
        return [*SHARED, "domain"]
    if _under(module, ENTRY):
        return ["service", "domain", "projections"]
    for i, layer in enumerate(LAYERS):
        if _under(module, [layer]):
            return LAYERS[i:] + SHARED + ["domain", "projections"]
    raise AssertionError(f"{module} is in no layer: add it to one (tests/test_layers.py)")


SOURCES = sorted(
    p for top in ("service", "domain", "projections") for p in (ROOT / top).rglob("*.py")
)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_run_one_way(path: Path) -> None:
    module = _module(path)
    allowed = _allowed(module)
    wrong = sorted(
        name
        for name in _imports(path)
        if not _under(name, allowed) and not (name == "service" and "service" in allowed)
    )
    assert not wrong, f"{module} imports {wrong}, outside {allowed}"


def test_an_upward_import_is_caught() -> None:
    """The check above can fail: an application module importing the HTTP edge is refused."""
    assert not _under("service.http.app", _allowed("service.application.gameplay"))
    assert not _under("service.application.play", _allowed("service.eventstore.store"))
    assert not _under("projections.store", _allowed("domain.platform.table"))


def test_every_service_module_sits_in_a_layer() -> None:
    loose = sorted(
        _module(p)
        for p in (ROOT / "service").glob("*.py")
        if _module(p) not in SHARED + ENTRY + ["service"]
    )
    assert not loose, f"modules outside the layers: {loose}"
