"""The game kernel: the protocol every game implements and the mechanics they share."""

from .bots import BotGameStalled, play_random_game
from .copying import copier
from .errors import CommandError, RuleError, UnknownGame
from .folding import Folder
from .game import Game, Outcome, WiredGame, Wiring
from .rng import Rng, seed_commitment
from .table import Record, Table
from .typed import decoder, typed
from .viewers import (
    AUDITOR,
    SPECTATOR,
    AuditorViewer,
    SeatViewer,
    SpectatorViewer,
    Viewer,
    seat,
    seat_of,
    sees_everything,
)

__all__ = [
    "AUDITOR",
    "SPECTATOR",
    "AuditorViewer",
    "BotGameStalled",
    "CommandError",
    "Folder",
    "Game",
    "Outcome",
    "Record",
    "Rng",
    "RuleError",
    "SeatViewer",
    "SpectatorViewer",
    "Table",
    "UnknownGame",
    "Viewer",
    "WiredGame",
    "Wiring",
    "copier",
    "decoder",
    "play_random_game",
    "seat",
    "seat_of",
    "seed_commitment",
    "sees_everything",
    "typed",
]
