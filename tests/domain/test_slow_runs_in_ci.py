"""The slow marathons are left out of a local run and kept in a CI run (``tests/conftest.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests import conftest
from tests.support import budget


class _Item:
    def __init__(self, name: str, slow: bool, folder: str = "domain") -> None:
        self.name, self.slow = name, slow
        self.path = Path("tests", folder, f"test_{name}.py")

    def get_closest_marker(self, name: str) -> object | None:
        return object() if name == "slow" and self.slow else None


class _Config:
    def __init__(self, markexpr: str) -> None:
        self.markexpr = markexpr
        self.deselected: list[Any] = []
        self.hook = self

    def getoption(self, name: str) -> str:
        assert name == "markexpr"
        return self.markexpr

    def pytest_deselected(self, items: list[Any]) -> None:
        self.deselected += items


def _run(monkeypatch: pytest.MonkeyPatch, markexpr: str = "", **env: str) -> list[str]:
    for name in ("CI", "MANIFEST_SLOW"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    items: list[Any] = [_Item("quick", False), _Item("marathon", True)]
    config: Any = _Config(markexpr)
    conftest.pytest_collection_modifyitems(config, items)
    assert [i.name for i in config.deselected] == ([] if len(items) == 2 else ["marathon"])
    return [i.name for i in items]


def test_a_local_run_leaves_the_slow_tests_out(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _run(monkeypatch) == ["quick"]
    assert _run(monkeypatch, CI="false") == ["quick"]


def test_ci_and_explicit_requests_run_every_test(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _run(monkeypatch, CI="true") == ["quick", "marathon"]
    assert _run(monkeypatch, MANIFEST_SLOW="1") == ["quick", "marathon"]
    # With -m the caller chooses (the marker expression then filters as usual).
    assert _run(monkeypatch, markexpr="slow") == ["quick", "marathon"]


def test_properties_run_every_example_in_ci_and_a_quarter_locally(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("CI", "MANIFEST_SLOW"):
        monkeypatch.delenv(name, raising=False)
    assert budget.examples(40) == 10 and budget.examples(8) == 5
    monkeypatch.setenv("CI", "true")
    assert budget.examples(40) == 40 and budget.examples(300) == 300


def test_long_folders_run_first_in_a_stable_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Integration and fault files first, so the short domain files fill in at the end of a
    run spread over processes (a long file started last would run alone)."""
    monkeypatch.setenv("CI", "true")
    items: list[Any] = [
        _Item("a", False),
        _Item("b", False, "integration"),
        _Item("c", False, "service"),
        _Item("d", False, "faults"),
        _Item("e", False, "integration"),
    ]
    conftest.pytest_collection_modifyitems(_Config(""), items)  # type: ignore[arg-type]
    assert [i.name for i in items] == ["b", "d", "e", "a", "c"]
