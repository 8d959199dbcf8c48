"""The tree states the architecture, and the imports keep to it (issue 11): inside ``service/``,
``http → application → audit → eventstore``, each layer importing only from itself, the layers
after it, the shared modules beside them (settings, problems, observability, lru, collector),
``domain``, ``projections`` and ``infra``; ``projections`` derives views from ``domain`` alone (and
``infra``); ``infra`` (deadlines, the bounded pool, the LRU: issue 27) imports none of them;
``domain`` imports nothing of ours but itself. Read from the source with :mod:`ast`, lazy imports
included."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ["service.http", "service.application", "service.audit", "service.eventstore"]
SHARED = [
    "service.settings",
    "service.problems",
    "service.observability",
    "service.collector",
]
ENTRY = ["service.cli", "service.terminal", "service.workers", "service.bootstrap"]
# The composition root (service/bootstrap.py) builds from every layer; of the layers, only the
# HTTP app's lifespan may call it (the application and below never assemble themselves).
ROOT_USERS = ["service.http.app"]
#: Our top-level packages.
TOPS = ("service", "domain", "projections", "infra")


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
    return {n for n in found if n.split(".")[0] in TOPS}


def _under(name: str, prefixes: list[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _allowed(module: str) -> list[str]:
    if module.startswith("domain"):
        return ["domain"]
    if module.startswith("infra"):
        return ["infra"]
    if module.startswith("projections"):
        return ["projections", "domain", "infra"]
    if _under(module, SHARED) or module == "service":
        return [*SHARED, "domain", "infra"]
    if _under(module, ENTRY):
        return ["service", "domain", "projections", "infra"]
    for i, layer in enumerate(LAYERS):
        if _under(module, [layer]):
            root = ["service.bootstrap"] if module in ROOT_USERS else []
            return LAYERS[i:] + SHARED + root + ["domain", "projections", "infra"]
    raise AssertionError(f"{module} is in no layer: add it to one (tests/test_layers.py)")


SOURCES = sorted(p for top in TOPS for p in (ROOT / top).rglob("*.py"))


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
    assert not _under("service.bootstrap", _allowed("service.application.gameplay"))
    assert not _under("service.bootstrap", _allowed("service.http.routes.play"))
    assert not _under("service.settings", _allowed("infra.pool"))
    assert not _under("projections.store", _allowed("infra.deadlines"))
    assert not _under("domain.registry", _allowed("infra.lru"))


def test_every_service_module_sits_in_a_layer() -> None:
    loose = sorted(
        _module(p)
        for p in (ROOT / "service").glob("*.py")
        if _module(p) not in SHARED + ENTRY + ["service"]
    )
    assert not loose, f"modules outside the layers: {loose}"


def test_only_the_http_layer_speaks_http() -> None:
    """litestar is imported by service/http and the entry points only: the application, the
    audit and the event store are HTTP-free."""
    speaking = sorted(
        _module(p)
        for top in ("application", "audit", "eventstore")
        for p in (ROOT / "service" / top).rglob("*.py")
        if any(n == "litestar" or n.startswith("litestar.") for n in _all_imports(p))
    )
    assert not speaking, f"HTTP inside the application layers: {speaking}"


def _all_imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module)
    return names


def _readme_tree(top: str) -> set[str]:
    """The ``.py`` files README's Layout section lists in its tree of ``top/``."""
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Layout") : readme.index("\n## ", readme.index("## Layout"))]
    start = section.index(f"  {top}/\n")
    tree = section[start : section.index("  ```", start)]
    listed: set[str] = set()
    stack: list[tuple[int, str]] = []
    for line in tree.splitlines():
        name = line.strip().split(" ")[0]
        if not name:
            continue
        depth = len(line) - len(line.lstrip())
        while stack and stack[-1][0] >= depth:
            stack.pop()
        path = "/".join([p for _, p in stack] + [name.rstrip("/")])
        if name.endswith("/"):
            stack.append((depth, name.rstrip("/")))
        elif name.endswith(".py"):
            listed.add(path)
    return listed


@pytest.mark.parametrize("top", ["service", "infra"])
def test_the_readme_names_every_module(top: str) -> None:
    """README's Layout section lists the trees of ``service/`` and ``infra/``: every ``.py``
    file in them, and nothing that is not there (``find service infra -name '*.py'``)."""
    listed = _readme_tree(top)
    actual = {str(p.relative_to(ROOT)) for p in (ROOT / top).rglob("*.py")}
    assert listed == actual, (
        f"README lists but the tree lacks: {sorted(listed - actual)}; "
        f"the tree has but README lacks: {sorted(actual - listed)}"
    )


#: Issue 11: "no module over ~400 lines, no class over ~250" in service/ and projections/.
MAX_MODULE_LINES = 400
MAX_CLASS_LINES = 250


def _sizes(path: Path) -> tuple[int, list[tuple[str, int]]]:
    text = path.read_text()
    classes = [
        (node.name, (node.end_lineno or node.lineno) - node.lineno + 1)
        for node in ast.walk(ast.parse(text, str(path)))
        if isinstance(node, ast.ClassDef)
    ]
    return text.count("\n"), classes


@pytest.mark.parametrize(
    "path",
    sorted(p for top in ("service", "projections", "infra") for p in (ROOT / top).rglob("*.py")),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_modules_and_classes_stay_small(path: Path) -> None:
    lines, classes = _sizes(path)
    assert lines <= MAX_MODULE_LINES, f"{lines} lines: split it by concern"
    big = [(name, n) for name, n in classes if n > MAX_CLASS_LINES]
    assert not big, f"classes over {MAX_CLASS_LINES} lines: {big}"
