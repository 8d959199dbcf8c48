"""A game played in memory, without the service (``LocalGame``): seed, event log and state,
advanced one command at a time.

This is the kernel's reference of how a command becomes events — the service does the same
against its event store. The generator for a command is ``Rng(seed, n)`` where ``n`` is the
number the command's first event will get (events are numbered from 1).
"""

from __future__ import annotations

from typing import Any, Generic

import msgspec

from .game import C, E, Game, O, P, S
from .rng import Rng


class Record(msgspec.Struct, frozen=True):
    """One event in the log, with the seat whose command caused it (None for set-up)."""

    number: int
    seat: int | None
    event: Any


class LocalGame(Generic[S, C, E, O, P]):
    def __init__(self, game: Game[S, C, E, O, P], seed: bytes, records: list[Record], state: S):
        self.game = game
        self.seed = seed
        self.records = records
        self.state = state

    @classmethod
    def new(
        cls, game: Game[S, C, E, O, P], seed: bytes, seats: int, options: O | None = None
    ) -> LocalGame[S, C, E, O, P]:
        opts = options if options is not None else game.decode_options(None)
        events = game.start(opts, seats, Rng(seed, 1))
        return cls._opened(game, seed, events)

    @classmethod
    def from_position(
        cls, game: Game[S, C, E, O, P], seed: bytes, position: P
    ) -> LocalGame[S, C, E, O, P]:
        events = game.start_from_position(position, Rng(seed, 1))
        return cls._opened(game, seed, events)

    @classmethod
    def _opened(
        cls, game: Game[S, C, E, O, P], seed: bytes, events: list[E]
    ) -> LocalGame[S, C, E, O, P]:
        records = [Record(i + 1, None, e) for i, e in enumerate(events)]
        return cls(game, seed, records, game.fold(events))

    @property
    def version(self) -> int:
        return len(self.records)

    @property
    def events(self) -> list[E]:
        return [r.event for r in self.records]

    def rng(self) -> Rng:
        return Rng(self.seed, self.version + 1)

    def submit(self, seat: int, command: C) -> list[E]:
        """Decide and apply a command; raises RuleError (and changes nothing) if illegal."""
        events = self.game.decide(self.state, seat, command, self.rng())
        state = self.state
        for event in events:
            state = self.game.evolve(state, event)
            self.records.append(Record(len(self.records) + 1, seat, event))
        self.state = state
        return events
