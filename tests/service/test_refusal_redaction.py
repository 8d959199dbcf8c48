"""A refused command is its seat's alone while the game is live — whatever ``type`` it names
(review of issue 25)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from ledger.records import CommandRecord
from service.application.redaction import redacted_command
from service.eventstore.rejections import canonical_body


def refused(body: dict[str, object]) -> CommandRecord:
    return CommandRecord(
        id="c1",
        game_id="g",
        seat=0,
        idempotency_key=None,
        type=str(body["command"]["type"]),  # type: ignore[index]
        body=body,
        received_at=datetime(2026, 11, 27, tzinfo=UTC),
        outcome="rejected",
        error_code="command.invalid",
        error_detail="no such command",
        first_version=None,
        last_version=None,
        response={"status": 422},
        body_sha256=hashlib.sha256(canonical_body(body)).hexdigest(),
        body_size=len(canonical_body(body)),
    )


def test_a_refused_command_typed_as_a_message_is_hidden_with_its_hash() -> None:
    """A seat may send ``/commands`` a body whose ``type`` is ``table.message`` (refused:
    no game has it). The private-message branch of the redaction took it for a message and
    showed its body (every field but ``text``) and the SHA-256 of the whole to the other seats
    while the game was live: a refusal's body, or the hash that names a guess, is its seat's."""
    body = {"command": {"type": "table.message", "to": [1], "guess": "ace"}, "expected_version": 3}
    for caller in (1, None):
        shown = redacted_command(refused(body), caller, False, {}, set())
        assert shown.body is None
        assert shown.body_sha256 is None and shown.body_size is None
        assert shown.error_detail is None and shown.response is None
        assert shown.error_code is None  # a code may describe a hand too (issue 35)
    assert redacted_command(refused(body), 0, False, {}, set()).body == body
    assert redacted_command(refused(body), 0, False, {}, set()).error_code == "command.invalid"


def test_a_refusal_is_shown_whole_once_the_game_is_over() -> None:
    body = {"command": {"type": "guess", "card": "ace"}, "expected_version": 3}
    for caller in (1, None):
        shown = redacted_command(refused(body), caller, True, {}, set())
        assert shown.body == body and shown.body_sha256 is not None
        assert (shown.error_code, shown.error_detail) == ("command.invalid", "no such command")
