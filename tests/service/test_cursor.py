"""The games list's ``cursor`` read back (issue 25): whatever a client sends, the answer is a
time PostgreSQL can take (aware, in UTC, within Python's range) and a canonical game id, or a
400 ``request.bad_cursor`` — never another exception, which would be a 500."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from service.application.errors import ApplicationError
from service.application.lobby import _cursor
from service.http.problemmap import problem_of

FUZZ = settings(max_examples=200, derandomize=True, deadline=None)

_offsets = st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1).map(
    lambda minutes: timezone(timedelta(minutes=minutes))
)


def _read(text: str) -> tuple[datetime, str] | None:
    try:
        at, gid = _cursor(text)
    except ApplicationError as refused:
        assert (problem_of(refused).status, refused.code) == (400, "request.bad_cursor")
        return None
    assert at.tzinfo is not None and at.utcoffset() == timedelta(0)
    assert str(uuid.UUID(gid)) == gid
    return at, gid


@FUZZ
@given(st.datetimes(timezones=_offsets), st.uuids())
def test_any_time_at_any_offset_is_read_or_refused(at: datetime, gid: uuid.UUID) -> None:
    got = _read(f"{at.isoformat()}~{gid}")
    try:
        in_utc = at.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00+14:00 and 9999-12-31T23:59-14:00
        assert got is None
    else:
        assert got == (in_utc, str(gid))


@FUZZ
@given(st.text(max_size=80))
def test_any_text_is_read_or_refused(text: str) -> None:
    _read(text)


@FUZZ
@given(st.text(alphabet="0123456789-:T.+Z~ abcdef", max_size=80))
def test_cursor_like_text_is_read_or_refused(text: str) -> None:
    _read(text)
