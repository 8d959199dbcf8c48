"""What the application refuses, as typed errors: the only exceptions it raises on purpose.

Each carries the stable ``code`` clients branch on (``docs/api.md``, "Errors"), a ``detail``
for people, and the extra fields its answer has (``version`` of a conflict, ``rule`` of a rule
refusal, ``dependency`` of an unavailable one). The application says *what* went wrong; how
that is answered — status, headers, the problem document — is the HTTP edge's business
(:mod:`service.http.problemmap`), and the CLI maps the same errors to its exit statuses. The
kinds:

- :class:`BadRequest`: a value the edge could not check (a cursor, a player's name);
- :class:`Unauthorized`: no token, or one that is no token of ours;
- :class:`Forbidden`: a token that may not do this (another game's, not the host's, a wrong
  invite code);
- :class:`NotFound`: no such game, event or seat;
- :class:`Conflict`: the game is not in a state for this (started, full, a stale
  ``expected_version``);
- :class:`RefusedByRules`: a well-formed request the rules refuse (a game's rules, a malformed
  command, a reused Idempotency-Key);
- :class:`Unavailable`: a dependency failed or the game kept changing; try again after
  ``retry_after`` seconds;
- :class:`Repeated`: a refused command sent again with its Idempotency-Key, answered with the
  answer recorded the first time (the recorded document, as it was).
"""

from __future__ import annotations

from typing import Any


class ApplicationError(Exception):
    """A refusal of the application, with its stable ``code``, ``detail`` and extra fields."""

    def __init__(self, code: str, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.extra = extra

    def with_detail(self, detail: str) -> ApplicationError:
        """The same refusal with another ``detail`` (a shortened one: a refusal's record)."""
        if detail == self.detail:
            return self
        twin = type(self).__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin.detail = detail
        twin.args = (detail,)
        return twin


class BadRequest(ApplicationError):
    """A value sent that no decoder could check (a cursor, a player's name)."""


class Unauthorized(ApplicationError):
    """No token where one is needed, or a token that is none of ours."""


class Forbidden(ApplicationError):
    """A token (or invite code) that may not do this."""


class NotFound(ApplicationError):
    """No such game, event, seat or thing asked for."""


class Conflict(ApplicationError):
    """The game is not in a state for this request (started, full, moved on)."""


class RefusedByRules(ApplicationError):
    """A well-formed request refused: by the game's rules (``rule``: the details), or as
    a command or request that cannot be carried out (a malformed command, a reused key)."""


class Unavailable(ApplicationError):
    """A dependency failed (or the game kept changing): nothing to fix in the request, try
    again after ``retry_after`` seconds."""

    def __init__(self, code: str, detail: str, retry_after: int, **extra: Any) -> None:
        super().__init__(code, detail, **extra)
        self.retry_after = retry_after


class Repeated(ApplicationError):
    """A refused command sent again with its Idempotency-Key: answered as recorded the first
    time. ``recorded`` is that answer's document, whole."""

    def __init__(self, code: str, detail: str, recorded: dict[str, Any]) -> None:
        super().__init__(code, detail)
        self.recorded = recorded
