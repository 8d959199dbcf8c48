"""The application's typed errors as HTTP answers (``service.http.problemmap``): one status per
kind, the code, detail and extra fields in the problem document, ``Retry-After`` on what is
unavailable, and a refusal answered again exactly as recorded."""

from __future__ import annotations

import inspect

import pytest

from service.application import errors
from service.application.errors import (
    ApplicationError,
    BadRequest,
    Conflict,
    Forbidden,
    NotFound,
    RefusedByRules,
    Repeated,
    Unauthorized,
    Unavailable,
)
from service.http.problemmap import STATUS, document_of, problem_of


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (BadRequest("request.bad_cursor", "no"), 400),
        (Unauthorized("auth.missing_token", "no"), 401),
        (Forbidden("auth.not_host", "no"), 403),
        (NotFound("game.not_found", "no"), 404),
        (Conflict("version.conflict", "no", version=7), 409),
        (RefusedByRules("rule.not_your_turn", "no", rule={"seat": 1}), 422),
        (RefusedByRules("rule.abort_too_late", "no"), 422),
        (RefusedByRules("rule.resigned", "no"), 422),
    ],
)
def test_each_kind_has_its_status_and_keeps_its_fields(
    error: ApplicationError, status: int
) -> None:
    problem = problem_of(error)
    assert (problem.status, problem.code, problem.detail) == (status, error.code, error.detail)
    assert problem.headers == {}
    document = document_of(error)
    assert document["type"] == f"urn:manifest:problem:{error.code}"
    assert document["status"] == status
    assert {k: document[k] for k in error.extra} == error.extra


def test_every_kind_the_application_has_is_mapped() -> None:
    """A new kind of error added without a status here would be answered 500."""
    kinds = {
        cls
        for _, cls in inspect.getmembers(errors, inspect.isclass)
        if issubclass(cls, ApplicationError) and cls not in (ApplicationError, Repeated)
    }
    assert kinds == set(STATUS)


def test_unavailable_says_when_to_come_back() -> None:
    problem = problem_of(Unavailable("service.unavailable", "down", 4, dependency="redis"))
    assert (problem.status, problem.headers) == (503, {"Retry-After": "4"})
    assert problem.extra == {"dependency": "redis"}


def test_a_refusal_is_answered_again_as_recorded() -> None:
    recorded = document_of(Conflict("version.conflict", "at 3, not 2", version=3))
    again = problem_of(Repeated("version.conflict", "at 3, not 2", recorded))
    assert again.document() == recorded
    older = {"code": "rule.x", "detail": "d", "rule": {"a": 1}}  # no status recorded: 422
    assert problem_of(Repeated("rule.x", "d", older)).document()["status"] == 422


def test_a_shortened_detail_keeps_the_kind_and_fields() -> None:
    error = Unavailable("service.unavailable", "x" * 10, 2, dependency="postgres")
    short = error.with_detail("x")
    assert isinstance(short, Unavailable) and short.retry_after == 2
    assert (short.code, short.detail, short.extra) == (error.code, "x", error.extra)
    assert error.detail == "x" * 10


#: Every refusal code the application (and the audit) raises, with the HTTP status it was
#: answered with before the typed errors (commit a1ea113, where each raise named its status).
#: ``lobby.name_taken`` has two: a create naming one player twice is a bad request (400), a
#: join under a name already seated a conflict (409).
STATUS_BEFORE_TYPED_ERRORS: dict[str, set[int]] = {
    "game.not_found": {404},
    "replay.no_such_event": {404},
    "audit.no_such_event": {404},
    "service.unavailable": {503},
    "version.contention": {503},
    "auth.invalid_token": {401},
    "auth.missing_token": {401},
    "auth.wrong_game": {403},
    "auth.not_host": {403},
    "lobby.bad_name": {400},
    "request.bad_cursor": {400},
    "lobby.name_taken": {400, 409},
    "lobby.bad_players": {422},
    "lobby.unknown_game": {422},
    "lobby.bad_seats": {422},
    "lobby.bad_invited": {422},
    "lobby.no_such_seat": {422},
    "position.invalid": {422},
    "lobby.bad_invite": {403},
    "lobby.not_invited": {403},
    "lobby.started": {409},
    "lobby.seat_taken": {409},
    "lobby.full": {409},
    "lobby.seat_empty": {409},
    "lobby.not_full": {409},
    "lobby.already_seated": {409},
    "version.conflict": {409},
    "game.not_started": {409},
    "game.finished": {409},
    "idempotency.key_reused": {422},
    "message.bad_text": {422},
    "message.bad_recipients": {422},
    # added with the turn clocks (issue 31; docs/api.md "Clocks")
    "clock.expired": {409},  # a move after its seat's deadline
    "clock.invalid": {422},  # terms out of range at creation
    "clock.none": {409},  # /presence on a game without a clock
    # issue 35 (docs/api.md "Authentication")
    "auth.not_seat": {403},  # this game's host token where only a seat's may act
    "auth.malformed": {401},  # an Authorization header that is not Bearer <token>
    # added with the bounds on hostile positions and decisions (issue 35; docs/api.md codes),
    # raised by the games (RuleError) and answered as RefusedByRules
    "position.out_of_range": {422},  # a number of a position outside its documented range
    "command.too_many_events": {422},  # past MANIFEST_MAX_EVENTS_PER_COMMAND, nothing appended
    "command.unencodable": {422},  # the game after it could not be encoded, nothing appended
    # issue 39 (docs/api.md "Players")
    "player.key_revoked": {401},  # a revoked player key, on any instance at once
    "player.scope_missing": {403},  # a player key without the scope this needs
    "player.not_seated": {403},  # a player key in a game where its player has no seat
    "player.not_your_key": {403},  # revoking a key of another player
    "player.no_such_key": {404},
    "player.bad_scopes": {422},  # no scope, an unknown one, or one twice
    "player.too_many_keys": {409},  # past MANIFEST_PLAYER_KEYS_MAX live keys
}


def _raised_codes() -> dict[str, set[int]]:
    """Each literal code constructed with an error kind in service/application and
    service/audit, with the status that kind is answered with."""
    import ast
    from pathlib import Path

    kinds = {cls.__name__: status for cls, status in STATUS.items()}
    root = Path(__file__).resolve().parents[2] / "service"
    found: dict[str, set[int]] = {}
    for path in [*(root / "application").glob("*.py"), *(root / "audit").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            status = kinds.get(node.func.id)
            if status is None or not node.args:
                continue
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.setdefault(first.value, set()).add(status)
    return found


def test_every_refusal_code_keeps_the_status_it_had_before_the_typed_errors() -> None:
    """Clients branch on (status, code): moving a raise to another kind of error would change
    its status silently (400 vs 422, 401 vs 403, 409 vs 422). A new code is added here on
    purpose, with its status."""
    raised = _raised_codes()
    assert raised, "no typed error found: the scan is broken"
    changed = {
        code: (statuses, STATUS_BEFORE_TYPED_ERRORS.get(code))
        for code, statuses in raised.items()
        if statuses != STATUS_BEFORE_TYPED_ERRORS.get(code)
    }
    assert not changed, changed


def test_the_codes_the_games_raise_for_bounds_are_documented_as_422() -> None:
    """``position.out_of_range``, ``command.too_many_events`` and ``command.unencodable`` are
    raised as RuleErrors (by the kernel and the ruling, not by a typed error here, so the scan
    above cannot see them): the application answers every RuleError as RefusedByRules, 422,
    and docs/api.md lists them in its 422 row."""
    from pathlib import Path

    api = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()
    row = next(line for line in api.splitlines() if line.startswith("| 422 |"))
    for code in ("position.out_of_range", "command.too_many_events", "command.unencodable"):
        assert STATUS_BEFORE_TYPED_ERRORS[code] == {422}
        assert f"`{code}`" in row, code
        assert problem_of(RefusedByRules(code, "no")).status == 422
