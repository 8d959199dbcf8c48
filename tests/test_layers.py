"""The tree states the architecture, and the imports keep to it (issue 11): inside ``service/``,
``http → application → eventstore``, each layer importing only from itself, the layers after it,
the shared modules beside them (settings, problems, observability, collector), ``ledger``,
``domain``, ``projections`` and ``infra``; ``ledger`` (the chain, commitments, Merkle trees,
receipts, the ruling, the export and dispute files: issue 36) is a library as pure as ``domain``
and imports nothing of ours but ``domain``; ``projections`` derives views from ``domain`` alone
(and ``infra``); ``infra`` (deadlines, the bounded pool, the LRU: issue 27) imports none of them;
``domain`` imports nothing of ours but itself. Read from the source with :mod:`ast`, lazy imports
included."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ["service.http", "service.application", "service.eventstore"]
SHARED = [
    "service.settings",
    "service.problems",
    "service.observability",
    "service.collector",
]
ENTRY = [
    "service.cli",
    "service.terminal",
    "service.workers",
    "service.bootstrap",
    "service.settingsdoc",
]
# The composition root (service/bootstrap.py) builds from every layer; of the layers, only the
# HTTP app's lifespan may call it (the application and below never assemble themselves).
ROOT_USERS = ["service.http.app"]
#: Our top-level packages.
TOPS = ("service", "ledger", "domain", "projections", "infra")


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
    if module.startswith("ledger"):
        return ["ledger", "domain"]
    if module.startswith("infra"):
        return ["infra"]
    if module.startswith("projections"):
        return ["projections", "domain", "infra"]
    if _under(module, SHARED) or module == "service":
        return [*SHARED, "domain", "infra"]
    if _under(module, ENTRY):
        return ["service", "ledger", "domain", "projections", "infra"]
    for i, layer in enumerate(LAYERS):
        if _under(module, [layer]):
            root = ["service.bootstrap"] if module in ROOT_USERS else []
            return LAYERS[i:] + SHARED + root + ["ledger", "domain", "projections", "infra"]
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
    assert not _under("service.eventstore.records", _allowed("ledger.chain"))
    assert not _under("projections.replay", _allowed("ledger.ruling"))
    assert not _under("infra.lru", _allowed("ledger.treeheads"))


def test_the_ledger_imports_nothing_of_ours_but_domain() -> None:
    """Issue 36: ``ledger/`` is as pure as ``domain/``; the application, the event store, the
    CLI and the offline verifier use it, and it uses none of them (nor projections, nor infra)."""
    found = {
        _module(p): sorted(n for n in _imports(p) if not _under(n, ["ledger", "domain"]))
        for p in sorted((ROOT / "ledger").rglob("*.py"))
    }
    assert found and all(not wrong for wrong in found.values()), found


def test_the_application_knows_the_event_log_only_by_its_port() -> None:
    """Issue 36: the application depends on :class:`service.eventstore.port.EventLog` (and the
    store's records and typed errors), never on a concrete log — PostgreSQL's or memory's."""
    concrete = ["service.eventstore.store", "service.eventstore.memory"]
    found = {
        _module(p): sorted(n for n in _imports(p) if _under(n, concrete))
        for p in sorted((ROOT / "service" / "application").rglob("*.py"))
    }
    assert all(not wrong for wrong in found.values()), found


#: The one application module that imports ``projections`` (issue 36).
PROJECTION_ADAPTER = "service.application.projection"


def test_only_the_projection_adapter_imports_projections() -> None:
    """The application asks the projections through :mod:`service.application.projection`;
    no other module of it imports :mod:`projections` (lazy imports included)."""
    found = {
        _module(p): sorted(n for n in _imports(p) if _under(n, ["projections"]))
        for p in sorted((ROOT / "service" / "application").rglob("*.py"))
        if _module(p) != PROJECTION_ADAPTER
    }
    assert all(not wrong for wrong in found.values()), found
    adapter = ROOT / "service" / "application" / "projection.py"
    assert any(_under(n, ["projections"]) for n in _imports(adapter))


def test_the_event_store_never_imports_the_application() -> None:
    """Issue 36: the store never calls back into the application (lazy imports included)."""
    found = {
        _module(p): sorted(n for n in _imports(p) if _under(n, ["service.application"]))
        for p in sorted((ROOT / "service" / "eventstore").rglob("*.py"))
    }
    assert all(not wrong for wrong in found.values()), found


def test_every_service_module_sits_in_a_layer() -> None:
    loose = sorted(
        _module(p)
        for p in (ROOT / "service").glob("*.py")
        if _module(p) not in SHARED + ENTRY + ["service"]
    )
    assert not loose, f"modules outside the layers: {loose}"


def test_only_the_http_layer_speaks_http() -> None:
    """litestar is imported by service/http and the entry points only: the application, the
    event store and the ledger are HTTP-free."""
    speaking = sorted(
        _module(p)
        for top in ("service/application", "service/eventstore", "ledger")
        for p in (ROOT / top).rglob("*.py")
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
    """The ``.py`` files docs/layout.md's Layout section lists in its tree of ``top/``."""
    section = (ROOT / "docs" / "layout.md").read_text()
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
    """docs/layout.md's Layout section lists the trees of ``service/`` and ``infra/``: every ``.py``
    file in them, and nothing that is not there (``find service infra -name '*.py'``)."""
    listed = _readme_tree(top)
    actual = {str(p.relative_to(ROOT)) for p in (ROOT / top).rglob("*.py")}
    assert listed == actual, (
        f"docs/layout.md lists but the tree lacks: {sorted(listed - actual)}; "
        f"the tree has but docs/layout.md lacks: {sorted(actual - listed)}"
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
    sorted(
        p
        for top in ("service", "ledger", "projections", "infra")
        for p in (ROOT / top).rglob("*.py")
    ),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_modules_and_classes_stay_small(path: Path) -> None:
    lines, classes = _sizes(path)
    assert lines <= MAX_MODULE_LINES, f"{lines} lines: split it by concern"
    big = [(name, n) for name, n in classes if n > MAX_CLASS_LINES]
    assert not big, f"classes over {MAX_CLASS_LINES} lines: {big}"


#: The layers below the HTTP edge: they say what went wrong with typed errors
#: (``service.application.errors``); only ``service/http`` turns them into statuses and headers.
HTTP_FREE = ("application", "eventstore")


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of a module, its classes and functions."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _http_spoken(source: str, name: str = "<source>") -> list[str]:
    """What in ``source`` speaks HTTP: the problem documents (``service.problems``), a status
    code passed to anything (an integer 400–599 as an argument, ``status=``), the ``http``
    module's statuses, ``HTTP_*`` names, a ``Retry-After`` header. Docstrings may talk of them."""
    tree = ast.parse(source, name)
    docs = _docstrings(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [f"{node.module}.{a.name}" for a in node.names] + [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            names = []
        for imported in names:
            if _under(imported, ["service.problems", "http"]) or imported.endswith(".Problem"):
                found.append(f"line {line}: imports {imported}")
        if isinstance(node, ast.Call):
            values = [*node.args, *(k.value for k in node.keywords)]
            for value in values:
                if (
                    isinstance(value, ast.Constant)
                    and type(value.value) is int
                    and 400 <= value.value <= 599
                ):
                    found.append(f"line {line}: a status code {value.value} passed")
            for keyword in node.keywords:
                if keyword.arg in ("status_code", "headers"):
                    found.append(f"line {line}: {keyword.arg}= given")
        if isinstance(node, ast.Name | ast.Attribute):
            ident = node.id if isinstance(node, ast.Name) else node.attr
            if ident.startswith(("HTTP_", "HTTPStatus")) or ident == "Problem":
                found.append(f"line {line}: {ident}")
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docs
            and "retry-after" in node.value.lower()
        ):
            found.append(f"line {line}: a Retry-After header")
    return found


@pytest.mark.parametrize(
    "path",
    sorted(
        [p for top in HTTP_FREE for p in (ROOT / "service" / top).rglob("*.py")]
        + list((ROOT / "ledger").rglob("*.py"))
    ),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_below_the_edge_no_status_codes(path: Path) -> None:
    """The application, the event store and the ledger raise typed errors
    (:mod:`service.application.errors`) and never choose an HTTP status, a problem document or
    a header: :mod:`service.http.problemmap` maps the errors to HTTP (issue 27)."""
    spoken = _http_spoken(path.read_text(), str(path))
    assert not spoken, f"{_module(path)} speaks HTTP: {spoken}"


def test_a_status_code_below_the_edge_is_caught() -> None:
    """The check above can fail: each way HTTP crept into the application before is found."""
    assert _http_spoken("from service.problems import Problem\nraise Problem(409, 'x', 'y')\n")
    assert _http_spoken("raise Conflict('x', 'y', status=409)\n")
    assert _http_spoken("return Answer(body, headers={'x': '1'})\n")
    assert not _http_spoken("await store.append(events, status='finished')\n")
    assert _http_spoken("code = int(response.get('status', 422))\n")
    assert _http_spoken("problem.headers['Retry-After'] = '1'\n")
    assert _http_spoken("from http import HTTPStatus\n")
    assert _http_spoken("x = starlette.status.HTTP_409_CONFLICT\n")
    assert not _http_spoken('"""A 503 with Retry-After."""\nMAX_DETAIL = 500\n')


# --- the event store's pools (issue 27) ------------------------------------------------------
# Nothing outside service/eventstore touches a pool: the application, the ledger, the HTTP
# edge, the CLI and the benchmarks go through EventStore's methods and the ports it owns
# (refusals, kept documents, deadlines, signing keys). Read from the source with ast:
# - no attribute ``pool`` / ``_pool`` / ``read_pool`` is read or set (on a store or anything
#   else), in service/ and bench/;
# - in service/, no asyncpg statement method (fetch, fetchval, fetchrow, executemany) is
#   called, and asyncpg is named only for its error classes (to classify failures), except
#   that the composition root opens the pools (``asyncpg.create_pool`` in service/bootstrap.py)
#   and hands them to the store unused.
# A pool wrapper (a class defining ``acquire``: infra.pool.BoundedPool) is
# itself the pool and may hold and call the one it wraps. bench/ceiling.py is the baseline with
# no Manifest in it (one raw asyncpg INSERT per request, on purpose); the other benchmarks'
# direct connections (setup and measurement, asyncpg.connect) are outside the store's pools.
POOL_ATTRIBUTES = {"pool", "_pool", "read_pool"}
STATEMENT_METHODS = {"fetch", "fetchval", "fetchrow", "executemany"}
OPENS_POOLS = {"service/bootstrap.py"}


def _pool_wrappers(tree: ast.AST) -> set[ast.AST]:
    """The nodes inside classes that define ``acquire`` (pool wrappers)."""
    inside: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and any(
            isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef) and f.name == "acquire"
            for f in node.body
        ):
            inside.update(ast.walk(node))
    return inside


def _asyncpg_name(node: ast.AST) -> str | None:
    """``asyncpg.x.y`` as ``x.y`` when ``node`` is that attribute chain."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id == "asyncpg" and parts:
        return ".".join(reversed(parts))
    return None


def _allowed_asyncpg(name: str, opens_pools: bool) -> bool:
    last = name.rsplit(".", 1)[-1]
    if name == "exceptions" or name.startswith("exceptions."):
        return True
    if last.endswith(("Error", "Exception")):
        return True
    return opens_pools and name == "create_pool"


def pool_uses(source: str, where: str, *, service: bool) -> list[str]:
    """Where ``source`` (the file ``where``) touches a pool, as ``where:line: what``."""
    tree = ast.parse(source, where)
    wrapped = _pool_wrappers(tree)
    found: list[str] = []
    opens_pools = where in OPENS_POOLS
    for node in ast.walk(tree):
        if node in wrapped:
            continue
        if isinstance(node, ast.Attribute) and node.attr in POOL_ATTRIBUTES:
            found.append(f"{where}:{node.lineno}: .{node.attr}")
        if not service:
            continue
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in STATEMENT_METHODS
        ):
            found.append(f"{where}:{node.lineno}: .{node.func.attr}()")
        name = _asyncpg_name(node)
        if name is not None and not _allowed_asyncpg(name, opens_pools):
            found.append(f"{where}:{node.lineno}: asyncpg.{name}")
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("asyncpg"):
            module = (node.module or "").removeprefix("asyncpg").lstrip(".")
            for alias in node.names:
                name = f"{module}.{alias.name}" if module else alias.name
                if not _allowed_asyncpg(name, opens_pools):
                    found.append(f"{where}:{node.lineno}: from {node.module} import {alias.name}")
    return found


def _outside_the_store() -> list[tuple[Path, bool]]:
    service = [
        (p, True)
        for p in (ROOT / "service").rglob("*.py")
        if not p.is_relative_to(ROOT / "service" / "eventstore")
    ]
    bench = [(p, False) for p in (ROOT / "bench").glob("*.py") if p.name != "ceiling.py"]
    return sorted(service + bench)


def test_nothing_outside_the_event_store_touches_a_pool() -> None:
    found = [
        use
        for path, service in _outside_the_store()
        for use in pool_uses(path.read_text(), str(path.relative_to(ROOT)), service=service)
    ]
    assert not found, f"pools used outside service/eventstore: {found}"


@pytest.mark.parametrize(
    ("source", "where"),
    [
        ("async def f(self):\n    await g(self.store.pool, 1)\n", "service/application/play.py"),
        ("def f(m):\n    return m.store._pool\n", "service/http/routes/audit.py"),
        ("async def f(conn):\n    return await conn.fetchval('SELECT 1')\n", "service/cli.py"),
        (
            "import asyncpg\nasync def f(d):\n    return await asyncpg.connect(d)\n",
            "service/cli.py",
        ),
        ("import asyncpg\nP = asyncpg.create_pool\n", "service/application/games.py"),
        ("from asyncpg import Pool\n", "service/application/history.py"),
        ("from asyncpg.pool import create_pool\n", "service/bootstrap.py"),
        ("async def f(s):\n    await s.read_pool.close()\n", "bench/seek.py"),
    ],
)
def test_a_pool_used_outside_the_store_is_caught(source: str, where: str) -> None:
    assert pool_uses(source, where, service=where.startswith("service/"))


def test_what_the_pool_rule_lets_pass() -> None:
    """Error classes, the composition root opening the pools, and a pool wrapper."""
    allowed = [
        ("import asyncpg\nE = (asyncpg.exceptions.QueryCanceledError, asyncpg.PostgresError)\n"),
        (
            "class Bounded:\n"
            "    async def acquire(self):\n        return await self._pool.acquire()\n"
            "    async def fetchval(self, q):\n        return await self._pool.fetchval(q)\n"
        ),
    ]
    for source in allowed:
        assert pool_uses(source, "service/application/faults.py", service=True) == []
    opening = "import asyncpg\nasync def f(d):\n    return await asyncpg.create_pool(d)\n"
    assert pool_uses(opening, "service/bootstrap.py", service=True) == []
