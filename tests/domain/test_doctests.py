"""The examples in the domain's docstrings run as tests (square notation and the like): every
module under ``domain/`` is imported and its doctests are run, so an example that goes stale
fails here."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from types import ModuleType

import pytest

import domain


def _modules() -> list[ModuleType]:
    names = [m.name for m in pkgutil.walk_packages(domain.__path__, "domain.")]
    return [importlib.import_module(name) for name in sorted(names)]


MODULES = _modules()


@pytest.mark.parametrize("module", MODULES, ids=[m.__name__ for m in MODULES])
def test_the_module_s_examples_hold(module: ModuleType) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, report=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed"


@pytest.mark.parametrize(
    "module",
    [
        "domain.jolly_cargo.board",
        "domain.cargo_empire.board",
        "domain.empire_builder.board",
        "domain.curious_cargo.components",
    ],
)
def test_each_game_s_square_notation_has_examples(module: str) -> None:
    found = doctest.DocTestFinder().find(importlib.import_module(module))
    assert sum(len(t.examples) for t in found) >= 3
