"""The game kernel: the protocol every game implements and the mechanics they share."""

from .bots import BotGameStalled, play_random_game
from .errors import CommandError, RuleError, UnknownGame
from .game import Game, Outcome
from .hidden import Secret
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
    "Game",
    "Outcome",
    "Record",
    "Rng",
    "RuleError",
    "SeatViewer",
    "Secret",
    "SpectatorViewer",
    "Table",
    "UnknownGame",
    "Viewer",
    "decoder",
    "play_random_game",
    "seat",
    "seat_of",
    "seed_commitment",
    "sees_everything",
    "typed",
]
