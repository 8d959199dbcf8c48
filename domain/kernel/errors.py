"""Errors a game raises when a command cannot be accepted."""

from __future__ import annotations

from typing import Any


class RuleError(Exception):
    """A command the rules forbid.

    ``code`` is stable and machine-readable (``rule.not_your_turn``); ``message`` says, for a
    human, *why* the command is illegal; ``details`` carries structured context (which step,
    which square) that clients may show.
    """

    def __init__(self, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    def __repr__(self) -> str:
        return f"RuleError({self.code!r}, {self.message!r})"


class CommandError(RuleError):
    """A command that is not well formed for the game (unknown type, wrong field types)."""


def invalid_position(why: str) -> CommandError:
    """The error of a position that could not occur (``position.invalid``), saying why: cut
    to 1,000 characters (a why names the sender's own values, which may be 100 KB long)."""
    return CommandError("position.invalid", why if len(why) <= 1_000 else why[:1_000] + "…")


class UnknownGame(KeyError):
    """No game is registered under that id."""
