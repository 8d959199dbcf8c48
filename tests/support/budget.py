"""How much a test run does: everything in CI, a quicker share locally.

A *full* run is one with ``CI`` true (CI sets ``CI=true``) or ``MANIFEST_SLOW=1``. It runs the
tests marked ``slow`` (``tests/conftest.py``) and every hypothesis property at its full number of
examples; a local run gives each property a quarter of them (at least 5)."""

from __future__ import annotations

import os


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def full_run() -> bool:
    return _truthy("CI") or _truthy("MANIFEST_SLOW")


def examples(full: int) -> int:
    """A property's number of hypothesis examples in this run."""
    return full if full_run() else max(5, full // 4)
