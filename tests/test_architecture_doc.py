"""docs/architecture.md and docs/layout.md's Layout section match the code (issue 27).

- Every name the architecture page puts in backticks that starts with one of our packages
  (``service.application.play.Play.command``) is imported and looked up attribute by attribute;
  every path in backticks (``service/application/freshness.py``, ``domain/<game>/game.py`` for
  each registered game) exists. A function renamed, moved or removed without the page fails here.
- A command's path and a read's path are lists of hops, each naming a function; the read's
  tiers are as many as :mod:`service.application.freshness` has, plus folding from PostgreSQL;
  the page states the layers in the order ``tests/test_layers.py`` enforces.
- docs/layout.md names every package of the tree and every module of ``projections/``,
  ``domain/kernel/``, ``domain/platform/`` and of the games (``tests/test_layers.py`` checks
  ``service/`` and ``infra/``), says truly which modules each game lacks of CARGO's shape, and
  links the architecture page.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import re
from pathlib import Path

import pytest

from domain.registry import GAMES
from service.application import freshness
from tests.test_layers import LAYERS, _readme_tree

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
TOPS = ("service", "ledger", "domain", "projections", "infra")
_TICKED = re.compile(r"`([^`\s]+)`")
_DOTTED = re.compile(r"^[a-z_]+(\.[A-Za-z_][A-Za-z0-9_]*)+$")


def _game_dirs() -> list[str]:
    return sorted(game_id.replace("-", "_") for game_id in GAMES)


def references(text: str) -> tuple[list[str], list[str]]:
    """(dotted names, paths) that ``text`` puts in backticks: a dotted name starts with one of
    our packages; a path has a ``/`` and is a ``.py`` file or a directory (``x/``)."""
    dotted: list[str] = []
    paths: list[str] = []
    for token in _TICKED.findall(text):
        if _DOTTED.match(token) and token.split(".")[0] in TOPS:
            dotted.append(token)
        elif "/" in token and (token.endswith((".py", "/"))) and "{" not in token:
            paths.append(token)
    return dotted, paths


def unresolved_name(name: str) -> str | None:
    """Why ``name`` (``package.module.attr.attr``) names nothing; None when it does."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            target: object = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name is not None and not module_name.startswith(error.name):
                return f"{name}: importing {module_name} fails: {error}"
            continue
        for i, attribute in enumerate(parts[cut:]):
            if not hasattr(target, attribute):
                where = ".".join(parts[: cut + i])
                return f"{name}: {where} has no {attribute}"
            target = getattr(target, attribute)
        return None
    return f"{name}: no such module"


def unresolved_path(path: str) -> str | None:
    """Why ``path`` (``<game>`` standing for every registered game) is not in the tree."""
    expanded = [path.replace("<game>", g) for g in _game_dirs()] if "<game>" in path else [path]
    missing = [p for p in expanded if not (ROOT / p).exists()]
    return f"{path}: missing {missing}" if missing else None


def problems(text: str) -> list[str]:
    dotted, paths = references(text)
    found = [unresolved_name(n) for n in dotted] + [unresolved_path(p) for p in paths]
    return [p for p in found if p is not None]


def _section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _hops(section: str, indent: str = "") -> list[str]:
    """The numbered items of ``section`` at ``indent``, each with its continuation lines."""
    items: list[str] = []
    item = re.compile(rf"^{indent}\d+\. ")
    for line in section.splitlines():
        if item.match(line):
            items.append(line)
        elif items and line.startswith(indent + " ") and line.strip():
            items[-1] += "\n" + line
        elif items and not line.strip():
            items.append("")
    return [i for i in items if i]


# --- the architecture page --------------------------------------------------------------------
def test_every_name_and_path_on_the_page_exists() -> None:
    text = DOC.read_text()
    dotted, paths = references(text)
    assert len(dotted) >= 60 and len(paths) >= 10, "the page names too little to be checked"
    assert not problems(text), problems(text)


def test_a_renamed_function_or_moved_file_is_caught() -> None:
    """The check can fail: a function that is not there, a module that is not there, a path
    that is not there, and a game whose package lacks a module named for every game."""
    assert unresolved_name("service.application.play.Play.command") is None
    assert unresolved_name("service.application.play.Play.no_such_step")
    assert unresolved_name("service.application.no_such_module.run")
    assert unresolved_name("domain.kernel.folding.Run.emit") is None
    assert unresolved_name("domain.kernel.folding.Run.apply_later")
    assert unresolved_path("service/application/freshness.py") is None
    assert unresolved_path("service/lru.py")
    assert unresolved_path("domain/<game>/game.py") is None
    assert unresolved_path("domain/<game>/lines.py")  # Curious Cargo's alone
    assert problems("hop: `service.eventstore.store.EventStore.append_commands`")
    assert not problems("hop: `service.eventstore.store.EventStore.append_command`")


@pytest.mark.parametrize("title", ["A command's path", "A read's path"])
def test_each_hop_names_code(title: str) -> None:
    """One line per hop, and every hop names a module's function (or class, or constant)."""
    hops = _hops(_section(DOC.read_text(), title))
    assert len(hops) >= 3, f"{title}: no list of hops"
    bare = [h.splitlines()[0] for h in hops if not references(h)[0]]
    assert not bare, f"{title}: hops that name no code: {bare}"


def test_a_command_goes_through_every_stage() -> None:
    """The command's path names each stage the issue asks for, by the function that does it."""
    section = _section(DOC.read_text(), "A command's path")
    for stage in (
        "service.http.routes.play.post_command",
        "service.application.seats.Seats.require_seat",
        "service.eventstore.commandlog.CommandLog.find_command",
        "service.application.tables.Tables.current",
        "ledger.ruling.rule",
        "service.eventstore.store.EventStore.append_command",
        "ledger.answers.CommandAnswer",
        "projections.projector.Projector.schedule",
        "service.application.changes.LiveChanges.changes",
    ):
        assert f"`{stage}`" in section, f"the command's path does not name {stage}"


def test_the_paths_are_short() -> None:
    """Issue 36: a command's path in at most 8 hops, a read's in at most 5."""
    text = DOC.read_text()
    assert len(_hops(_section(text, "A command's path"))) <= 8
    assert len(_hops(_section(text, "A read's path"))) <= 5


def test_the_read_tiers_are_freshness_tiers() -> None:
    """As many tiers as :class:`service.application.freshness.Tier` has, then folding."""
    section = _section(DOC.read_text(), "A read's path")
    tiers = _hops(section, indent="   ")
    assert len(tiers) == len(freshness.Tier) + 1, [t.splitlines()[0] for t in tiers]
    assert "folded from PostgreSQL" in tiers[-1]


def test_the_page_states_the_enforced_layers() -> None:
    order = " → ".join(layer.rsplit(".", 1)[-1] for layer in LAYERS)
    assert order in DOC.read_text(), f"docs/architecture.md does not state {order}"


# --- docs/layout.md -----------------------------------------------------------------------------
def _layout() -> str:
    return (ROOT / "docs" / "layout.md").read_text()


def _packages() -> list[str]:
    found = {
        str(init.parent.relative_to(ROOT))
        for top in (*TOPS, "bench", "examples", "migrations")
        for init in (ROOT / top).rglob("__init__.py")
    }
    return sorted(found)


def test_the_readme_names_every_package() -> None:
    layout = _layout()
    trees = _readme_tree("service") | _readme_tree("infra")
    unnamed = [
        package
        for package in _packages()
        if f"`{package}/`" not in layout and not any(f.startswith(package + "/") for f in trees)
    ]
    assert not unnamed, f"docs/layout.md's Layout names no {unnamed}"


@pytest.mark.parametrize("package", ["projections", "domain/kernel", "domain/platform"])
def test_the_readme_names_every_module_of(package: str) -> None:
    layout = _layout()
    modules = sorted(p.name for p in (ROOT / package).glob("*.py") if p.name != "__init__.py")
    unnamed = [m for m in modules if f"`{m}`" not in layout and f"`{package}/{m}`" not in layout]
    assert not unnamed, f"docs/layout.md's Layout names none of {package}/{unnamed}"


def test_the_readme_names_every_module_of_the_games() -> None:
    """Each game's modules, by stem (``rules``) or file (``rules.py``), somewhere in the domain
    part of the Layout ("the same shape" covers the modules all games share)."""
    layout = _layout()
    domain = layout[: layout.index("- `service/`")]
    stems = sorted(
        {p.stem for g in _game_dirs() for p in (ROOT / "domain" / g).glob("*.py")} - {"__init__"}
    )
    unnamed = [s for s in stems if f"`{s}`" not in domain and f"`{s}.py`" not in domain]
    assert not unnamed, f"docs/layout.md's Layout names no game module {unnamed}"


def _stems(game: str) -> set[str]:
    return {p.stem for p in (ROOT / "domain" / game).glob("*.py")} - {"__init__"}


def test_the_readme_says_which_modules_each_game_lacks() -> None:
    """docs/layout.md lists CARGO's modules one by one and says of each other game "the same
    shape (no ...)": what it says a game lacks is not there, and the rest of the shape is."""
    layout = _layout()
    shape = _stems("jolly_cargo")
    for game in _game_dirs():
        if game == "jolly_cargo":
            continue
        said = re.search(rf"- `domain/{game}/` — the same shape \(no ([^)]*)\)", layout)
        assert said is not None, f"docs/layout.md's Layout does not say what domain/{game}/ lacks"
        lacking = set(re.findall(r"`(\w+)`", said.group(1)))
        have = _stems(game)
        assert not lacking & have, f"domain/{game}/ has {sorted(lacking & have)}: README says no"
        assert shape - lacking <= have, f"domain/{game}/ lacks {sorted(shape - lacking - have)}"


def test_the_readme_links_the_architecture_page() -> None:
    assert "(docs/architecture.md)" in (ROOT / "README.md").read_text()


# --- every page: README.md and docs/ (issue 38) ----------------------------------------------
_FILE = re.compile(r"\.(py|md|sql|json|yaml|yml|sh|js|html|css|svg|png|toml|txt|pem)$")
_MODULE_RUN = re.compile(r"python3? -m ([a-z_][a-z0-9_.]*)")
_SCRIPT = re.compile(r"(?<![\w/.])(scripts/[a-z][\w-]*(?:\.sh)?|\.ci/run)\b")
_CLI = re.compile(r"(?<![\w-])manifest ([a-z][a-z-]+)")
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
_CODE = re.compile(r"```.*?```|`[^`\n]+`", re.S)
#: dotted words that start as our packages do but are not code: a problem code, a /readyz field
_NOT_CODE = {"service.unavailable", "projections.poisoned_games"}
#: where a page's relative path may start: the repository root, or the page's own folder
_PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _subcommands() -> set[str]:
    """``manifest``'s subcommands, as its ``--help`` lists them (``{serve,migrate,...}``)."""
    from service import cli

    shown = io.StringIO()
    with contextlib.redirect_stdout(shown), contextlib.suppress(SystemExit):
        cli.main(["--help"])
    listed = re.search(r"\{([a-z,-]+)\}", shown.getvalue())
    assert listed is not None, shown.getvalue()
    return set(listed.group(1).split(","))


def page_problems(page: Path, text: str | None = None) -> list[str]:
    """What ``page`` (or ``text`` as if it were that page) names that is not there: dotted
    names of our packages, paths in backticks (files by their extension, folders by a trailing
    ``/``), ``python -m`` modules, scripts, and ``manifest`` subcommands (in code)."""
    import importlib.util

    text = page.read_text() if text is None else text
    found: list[str | None] = []
    for token in _TICKED.findall(text):
        if token in _NOT_CODE:
            continue
        if _DOTTED.match(token) and token.split(".")[0] in TOPS and not _FILE.search(token):
            found.append(unresolved_name(token))
        elif "/" in token and (token.endswith("/") or _FILE.search(token)):
            if any(c in token for c in "{}*<>$…:") or token.startswith(("/", "http", ".venv")):
                continue  # a pattern, a URL path, or a file made at run time
            if token.startswith((".manifest", "test-output")):
                continue  # made at run time
            # from the root, the page's folder, or a game's package (its `data/map.json`)
            bases = [ROOT, page.parent, *(ROOT / "domain" / g for g in _game_dirs())]
            if not any((base / token).exists() for base in bases):
                found.append(f"{token}: no such file or folder")
    for link in _LINK.findall(text):
        away = link.startswith(("http:", "https:", "mailto:"))
        if not away and not (page.parent / link).exists():
            found.append(f"link {link}: no such file")
    for module in _MODULE_RUN.findall(text):
        ours = module.split(".")[0] in (*TOPS, "bench", "examples", "tests")
        if ours and importlib.util.find_spec(module) is None:
            found.append(f"python -m {module}: no such module")
    for script in _SCRIPT.findall(text):
        if not (ROOT / script).is_file():
            found.append(f"{script}: no such script")
    commands = _subcommands()
    for sub in _CLI.findall(" ".join(_CODE.findall(text))):
        if sub not in commands and sub not in ("command", "listening"):
            found.append(f"manifest {sub}: no such subcommand")
    return [f"{page.relative_to(ROOT)}: {p}" for p in found if p is not None]


@pytest.mark.parametrize("page", _PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_path_module_and_command_a_page_names_exists(page: Path) -> None:
    assert not page_problems(page), "\n".join(page_problems(page))


def test_a_page_naming_what_is_not_there_fails() -> None:
    text = (
        "`service/http/seats.py`, `shared/rules/x.txt`, `python -m bench.nothing`,"
        " `scripts/nothing`, `manifest frobnicate`, `service.http.app.no_such_thing`;"
        " `service.http.app.create_app`, `docs/api.md`, `python -m bench.seek`, `scripts/serve`,"
        " `manifest verify-dispute`; [a](nowhere.md), [b](architecture.md), [c](#errors)"
    )
    problems = page_problems(ROOT / "docs" / "api.md", text)
    assert len(problems) == 7, problems
