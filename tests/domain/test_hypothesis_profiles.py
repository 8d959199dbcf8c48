"""Hypothesis is reproducible where it must be (``tests/support/hypothesis_profiles.py``): a full
run (CI) draws the same examples every time, and every failure prints its reproduction blob."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import budget, hypothesis_profiles


def test_this_run_loads_the_profile_its_budget_names(request: pytest.FixtureRequest) -> None:
    chosen = request.config.getoption("hypothesis_profile", None)
    if chosen:  # a profile named on the command line wins, as Hypothesis documents
        assert settings.default == settings.get_profile(chosen)
        return
    assert settings.default.print_blob is True
    assert settings.default.derandomize is budget.full_run()
    # Loaded before the test modules were imported: their settings inherit it.
    from tests.domain.curious_cargo.test_properties import PROPERTY

    assert PROPERTY.print_blob is True and PROPERTY.derandomize is budget.full_run()


def _draws(profile: str) -> list[int]:
    seen: list[int] = []

    @settings(settings.get_profile(profile), max_examples=20, database=None)
    @given(st.integers())
    def prop(x: int) -> None:
        seen.append(x)

    prop()
    return seen


def test_the_full_run_profile_draws_the_same_examples_on_every_run() -> None:
    assert _draws(hypothesis_profiles.FULL) == _draws(hypothesis_profiles.FULL)
    assert settings.get_profile(hypothesis_profiles.FULL).database is None
    # The local profile keeps exploring new examples and replays its own failures.
    local = settings.get_profile(hypothesis_profiles.LOCAL)
    assert local.derandomize is False and local.database is not None


@pytest.mark.parametrize("profile", [hypothesis_profiles.FULL, hypothesis_profiles.LOCAL])
def test_a_failure_prints_its_example_and_reproduction_blob(profile: str) -> None:
    @settings(settings.get_profile(profile), max_examples=200, database=None)
    @given(st.integers())
    def prop(x: int) -> None:
        assert x < 1000

    with pytest.raises(AssertionError) as info:
        prop()
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "Failing test case: prop(" in notes and "@reproduce_failure(" in notes
