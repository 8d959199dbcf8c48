"""The freshness rules (:mod:`service.application.freshness`): each tier answers a read only at
the stored state or newer — never older than an acknowledged version — and folding from
PostgreSQL is what remains."""

from __future__ import annotations

import pytest

from domain.platform.table import Table
from projections.store import tag_view
from service.application import freshness
from service.application.freshness import (
    Stored,
    Tier,
    built_answers,
    projected_table_answers,
    projected_view,
    projection_current,
    table_answers,
)

HEAD = b"\x01" * 32
OTHER = b"\x02" * 32


def _table(version: int) -> Table:
    return Table(
        game_id="g", game="jolly-cargo", seats=2, options={}, version=version,
        status="active", names=["a", "b"], messages=[],
    )  # fmt: skip


def test_a_built_view_answers_only_at_the_stored_version_and_head() -> None:
    assert built_answers(Stored(7, HEAD), 7, HEAD)
    assert not built_answers(Stored(8, HEAD), 7, HEAD)  # a move landed since
    assert not built_answers(Stored(7, OTHER), 7, HEAD)  # version 7 of another history
    assert not built_answers(None, 7, HEAD)  # no such game


def test_a_projected_view_answers_at_its_own_version_or_newer() -> None:
    assert projected_view(tag_view(7, b"{}"), Stored(7, HEAD)) == b"{}"
    assert projected_view(tag_view(9, b"{}"), Stored(7, HEAD)) == b"{}"  # newer is fresh
    assert projected_view(tag_view(6, b"{}"), Stored(7, HEAD)) is None
    assert projected_view(b"{}", Stored(7, HEAD)) is None  # untagged: never served
    assert projected_view(None, Stored(7, HEAD)) is None


def test_the_process_table_answers_only_as_the_stored_state() -> None:
    assert table_answers((HEAD, _table(7)), Stored(7, HEAD)) == _table(7)
    assert table_answers((HEAD, _table(6)), Stored(7, HEAD)) is None
    assert table_answers((OTHER, _table(7)), Stored(7, HEAD)) is None
    assert table_answers(None, Stored(7, HEAD)) is None


def test_the_projection_table_answers_when_its_record_is_current() -> None:
    assert projection_current(b"7", Stored(7, HEAD))
    assert projection_current(b"8", Stored(7, HEAD))
    assert not projection_current(b"6", Stored(7, HEAD))
    assert not projection_current(None, Stored(7, HEAD))  # missing, or Redis failed
    assert projected_table_answers(_table(8), Stored(7, HEAD))
    assert not projected_table_answers(_table(6), Stored(7, HEAD))
    assert not projected_table_answers(None, Stored(7, HEAD))


@pytest.mark.parametrize("tier", list(Tier))
def test_a_tier_left_out_never_answers(tier: Tier, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the A/B of docs/scaling.md changes: each tier out in turn, the others unchanged."""
    monkeypatch.setattr(freshness, "TIERS", frozenset(Tier) - {tier})
    stored = Stored(7, HEAD)
    answers = {
        Tier.BUILT: built_answers(stored, 7, HEAD),
        Tier.PROJECTED: projected_view(tag_view(7, b"{}"), stored) is not None,
        Tier.TABLES: table_answers((HEAD, _table(7)), stored) is not None,
        Tier.PROJECTED_TABLE: projected_table_answers(_table(7), stored),
    }
    assert [t for t, yes in answers.items() if not yes] == [tier]
