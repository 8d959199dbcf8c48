"""What ``manifest`` (:mod:`service.cli`) tells a person: an exit status per kind of failure,
the one-line failure itself, the progress bar of a long command, a check's report, and a game
read aloud (docs/operations.md, "The command line")."""

from __future__ import annotations

import sys
from typing import Any

import msgspec

#: Exit statuses, one per kind of failure (docs/operations.md "The command line").
EXIT_CHECK_FAILED = 1  # audit / verify / verify-dispute: a check failed (the report says which)
EXIT_USAGE = 2  # bad arguments, a bad setting, no signing key, nothing to do (rebuild w/o Redis)
EXIT_STARTUP = 3  # the server's application failed to start (uvicorn's own status)
EXIT_NO_GAME = 4  # no game with that id
EXIT_FILE = 5  # a file cannot be read or written
EXIT_BAD_FILE = 6  # a file is not JSON, or not a Manifest export / dispute file / keys answer
EXIT_PORT = 7  # the address cannot be listened on (in use, not ours)
EXIT_UNAVAILABLE = 8  # PostgreSQL or Redis does not answer
EXIT_INTERRUPTED = 130  # Ctrl-C
EXIT_CODES = {
    EXIT_CHECK_FAILED: "a check failed",
    EXIT_USAGE: "usage or setting",
    EXIT_STARTUP: "the server failed to start",
    EXIT_NO_GAME: "no such game",
    EXIT_FILE: "a file cannot be read or written",
    EXIT_BAD_FILE: "a file is not what the command reads",
    EXIT_PORT: "cannot listen on the address",
    EXIT_UNAVAILABLE: "PostgreSQL or Redis does not answer",
    EXIT_INTERRUPTED: "interrupted",
}


class Failure(Exception):
    """A mistake or an outage the user can act on: one line and an exit status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Bar:
    """A progress bar (rich) on standard error while it is a terminal; nothing otherwise, so
    that logs and pipes get only the result. Call it with (done, total)."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.progress: Any = None
        self.task: Any = None

    def __enter__(self) -> Bar:
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self.progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
            )
            self.progress.start()
            self.task = self.progress.add_task(self.what, total=None)
        return self

    def __call__(self, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress.update(self.task, completed=done, total=total)

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()


def report(checked: dict[str, Any]) -> None:
    """A check's report (audit, verify), as JSON; exit status 1 when it failed."""
    sys.stdout.buffer.write(msgspec.json.format(msgspec.json.encode(checked), indent=2) + b"\n")
    if not checked["ok"]:
        sys.exit(EXIT_CHECK_FAILED)


async def read_aloud(settings: Any, game_id: str, lang: str) -> int:
    """``manifest replay ID --lang fr``: the stored game told one sentence a line
    (``version. sentence``), as a spectator reads ``GET /replay?lang=`` (everything, once the
    game is over; docs/api.md "Sentences"); the number of events told."""
    from domain.kernel.messages import language
    from service.application.history import History
    from service.bootstrap import build_manifest

    manifest, store, projections = await build_manifest(settings)
    try:
        history = History.of(manifest)
        plan = await history.replay_plan(game_id, None, language(lang))
        told = 0
        async for raw in history.replay_lines(plan):
            event = msgspec.json.decode(raw)["event"]
            print(f"{event['version']}. {event['sentence']['text']}")
            told += 1
        return told
    finally:
        await projections.close()
        await store.close()
