"""The game kernel: the records every game builds (:class:`Game`, with its :class:`Decider` and
:class:`Presentation`) and the mechanics they share.

How a game declares hidden fields: pass ``hidden=`` to its :class:`Decider`, a function
returning a :class:`Secret` for each hidden value in an event — its path in the event's JSON data
and the seats that may read it while the game is live (none: nobody) — and, if a position can
hold hidden values, ``hidden=`` to its :class:`PositionForm` alike; and name the places on the
types, in a ``hidden_paths`` class attribute of each event (and position) Struct that has any
(``("cards.*",)``: :data:`domain.kernel.hidden.HIDDEN_PATHS`), so the OpenAPI document says
where a caller may read a commitment instead of a value. Nothing else: the service commits to
those values in the hash chain, redacts and opens them for each caller on every endpoint, and
the audit checks them after the end (:mod:`domain.kernel.hidden` has the rules and an example;
``tests/domain/test_hidden.py`` checks every registered game hides at least what its
``event_view`` redacts, and declares every path its ``hidden`` returns).
"""

from .bots import BotGameStalled, best_by_trial, play_bot_game, play_random_game
from .copying import copier
from .errors import CommandError, RuleError, UnknownGame, invalid_position
from .folding import Folder, Run
from .game import Decider, Game, Outcome, PositionForm, Presentation
from .hidden import Secret
from .localgame import LocalGame, Record
from .rng import Rng, seed_commitment
from .timeouts import Bot, Timeout
from .typed import decoder, typed
from .viewers import (
    AUDITOR,
    SPECTATOR,
    AuditorViewer,
    SeatViewer,
    SpectatorViewer,
    Viewer,
    redact_others,
    seat,
    seat_of,
    sees_everything,
)

__all__ = [
    "AUDITOR",
    "SPECTATOR",
    "AuditorViewer",
    "Bot",
    "BotGameStalled",
    "CommandError",
    "Decider",
    "Folder",
    "Game",
    "LocalGame",
    "Outcome",
    "PositionForm",
    "Presentation",
    "Record",
    "Rng",
    "RuleError",
    "Run",
    "SeatViewer",
    "Secret",
    "SpectatorViewer",
    "Timeout",
    "UnknownGame",
    "Viewer",
    "best_by_trial",
    "copier",
    "decoder",
    "invalid_position",
    "play_bot_game",
    "play_random_game",
    "redact_others",
    "seat",
    "seat_of",
    "seed_commitment",
    "sees_everything",
    "typed",
]
