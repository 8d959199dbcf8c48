"""``domain/`` is pure: it never reads a clock, draws from the global random generator or does
I/O. Times enter as values (a turn clock's events carry the times they use, docs/api.md
"Clocks"), so ``datetime`` appears in domain/ as a value type and for arithmetic only; reading
the time (``datetime.now()``, ``time.time()``...) is what this test refuses."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

DOMAIN = Path(__file__).resolve().parent.parent / "domain"
#: ``ledger/`` (issue 36) is held to the same rule: the chain, commitments, receipts over a signer
#: handed in, the ruling and the audit are functions of their arguments.
LEDGER = DOMAIN.parent / "ledger"

#: Modules whose import alone means I/O, a clock or global state.
FORBIDDEN_MODULES = {
    "time", "os", "socket", "subprocess", "asyncio", "threading", "urllib", "http",
    "sqlite3", "secrets", "uuid", "service", "projections", "infra",
}  # fmt: skip
#: Calls that read the clock or the global random generator, whatever they are called on.
CLOCK_READS = {"now", "utcnow", "today", "time", "monotonic", "perf_counter"}
GLOBAL_RANDOM = {"random", "randint", "choice", "shuffle", "sample", "uniform", "randrange"}
#: Calls that draw fresh randomness from the system: a new key, id or salt.
SYSTEM_DRAWS = {"uuid1", "uuid4", "urandom", "token_bytes", "token_hex", "generate"}
#: The ledger parses UUIDs (``uuid.UUID``) but never makes one; it reads no file.
LEDGER_FORBIDDEN = (FORBIDDEN_MODULES - {"uuid"}) | {"pathlib", "shutil", "io", "domain.registry"}


def impurities(
    source: str, name: str = "<source>", forbidden: set[str] = FORBIDDEN_MODULES
) -> list[str]:
    found: list[str] = []
    random_names: set[str] = set()
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top in forbidden:
                    found.append(f"{name}:{node.lineno}: import {alias.name}")
                if top == "random":
                    random_names.add(alias.asname or "random")
        elif isinstance(node, ast.ImportFrom) and node.module:
            top = node.module.split(".")[0]
            if top in forbidden:
                found.append(f"{name}:{node.lineno}: from {node.module} import ...")
            if top == "random":
                found += [
                    f"{name}:{node.lineno}: from random import {a.name}"
                    for a in node.names
                    if a.name in GLOBAL_RANDOM
                ]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr, owner = node.func.attr, node.func.value
            if attr in CLOCK_READS and not (isinstance(owner, ast.Name) and owner.id == "self"):
                found.append(f"{name}:{node.lineno}: .{attr}() reads a clock")
            if attr in SYSTEM_DRAWS:
                found.append(f"{name}:{node.lineno}: .{attr}() draws system randomness")
            if attr in GLOBAL_RANDOM and isinstance(owner, ast.Name) and owner.id in random_names:
                found.append(f"{name}:{node.lineno}: random.{attr}() is the global generator")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"open", "input", "print"}
        ):
            found.append(f"{name}:{node.lineno}: {node.func.id}() is I/O")
    return found


def _modules(top: Path = DOMAIN) -> list[Path]:
    return sorted(p for p in top.rglob("*.py") if "__pycache__" not in p.parts)


def test_domain_reads_no_clock_draws_no_global_random_and_does_no_io() -> None:
    found = [f for p in _modules() for f in impurities(p.read_text(), str(p.relative_to(DOMAIN)))]
    tools = ("empire_builder/mapgen.py", "empire_builder/decks.py", "empire_builder/render.py")
    # generators of the data files and the renderer's command line, run by hand: their
    # ``main`` writes a file and says so; nothing the rules call
    allowed = {f for f in found if f.startswith(tools) and "print()" in f}
    assert not set(found) - allowed, sorted(set(found) - allowed)


@pytest.mark.parametrize(
    "source",
    [
        "from datetime import datetime\nx = datetime.now()",
        "import datetime\nx = datetime.datetime.utcnow()",
        "import time\nx = 1",
        "import random\nx = random.choice([1, 2])",
        "from random import shuffle",
        "data = open('x').read()",
        "from service.settings import Settings",
    ],
)
def test_an_impure_domain_module_is_caught(source: str) -> None:
    assert impurities(source)


def test_times_as_values_pass() -> None:
    """What the clocks do: datetimes received as values, compared and added to."""
    source = (
        "from datetime import UTC, datetime, timedelta\n"
        "def due(at: datetime, seconds: int) -> datetime:\n"
        "    return at.astimezone(UTC) + timedelta(seconds=seconds)\n"
        "import random\n"
        "rng = random.Random(7)\n"
        "x = rng.choice([1, 2])\n"
    )
    assert impurities(source) == []


def test_the_ledger_is_as_pure_as_the_domain() -> None:
    """Issue 36: no clock, no global or system randomness, no file, no I/O in ``ledger/``
    (a signer is handed in; a key is made and read by ``service.eventstore.keys``)."""
    found = [
        f
        for p in _modules(LEDGER)
        for f in impurities(p.read_text(), str(p.relative_to(LEDGER)), LEDGER_FORBIDDEN)
    ]
    assert _modules(LEDGER) and not found, found


@pytest.mark.parametrize(
    "source",
    [
        "from pathlib import Path\nkey = Path('k.pem').read_bytes()",
        "from cryptography.hazmat.primitives.asymmetric import ed25519\n"
        "k = ed25519.Ed25519PrivateKey.generate()",
        "import uuid\nx = uuid.uuid4()",
        "from datetime import UTC, datetime\nat = datetime.now(UTC)",
        "from infra.lru import LRU",
        "from service.eventstore.records import StoredEvent",
    ],
)
def test_an_impure_ledger_module_is_caught(source: str) -> None:
    assert impurities(source, forbidden=LEDGER_FORBIDDEN)
