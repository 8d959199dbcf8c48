"""Hypothesis profiles: ``manifest-full`` in a full run (``budget.full_run()``: ``CI`` true or
``MANIFEST_SLOW=1``), ``manifest-local`` otherwise. ``tests/conftest.py`` loads one at import,
before any test module builds its ``settings(...)`` (which inherit from the profile loaded at
that moment). Both derive from Hypothesis's own ``default`` profile, never from whatever was
loaded before (Hypothesis loads its built-in ``ci`` profile by itself when it sees a CI variable).

* ``manifest-full``: ``derandomize=True`` — every property draws the same examples on every run
  (seeded from the test itself), so a red CI is red again on the next run, and on a developer's
  machine with ``MANIFEST_SLOW=1`` (no CI variable needed); no example database (a CI checkout
  has none, and replaying one would make the run depend on history).
* ``manifest-local``: random examples and the local example database, so local runs keep
  exploring new cases and replay the ones that failed before.
* Both: ``print_blob=True`` — a failure prints its ``@reproduce_failure(...)`` line under the
  falsifying example, so the exact case can be pasted onto the test and re-run anywhere.

``pytest --hypothesis-profile NAME`` still chooses explicitly."""

from __future__ import annotations

from hypothesis import settings

from . import budget

FULL = "manifest-full"
LOCAL = "manifest-local"

_BASE = settings.get_profile("default")
settings.register_profile(FULL, _BASE, derandomize=True, database=None, print_blob=True)
settings.register_profile(LOCAL, _BASE, print_blob=True)


def chosen() -> str:
    """The profile this run loads."""
    return FULL if budget.full_run() else LOCAL


def load() -> str:
    name = chosen()
    settings.load_profile(name)
    return name
