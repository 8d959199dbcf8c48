"""A serving process collects its young generation every ``MANIFEST_GC_THRESHOLD`` allocations
(:mod:`service.collector`): each worker sets it when it builds its app."""

from __future__ import annotations

import gc

from service.http.app import create_app
from service.settings import Settings


def test_each_app_sets_the_collector_threshold_and_0_keeps_the_default() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        create_app(Settings(gc_threshold=12_345))
        assert gc.get_threshold() == (12_345, 10, 10)
        gc.set_threshold(700, 10, 10)
        create_app(Settings(gc_threshold=0))
        assert gc.get_threshold() == (700, 10, 10)
        assert Settings().gc_threshold == 20_000
    finally:
        gc.set_threshold(*before)
