"""Folding events into a state, written once: the shape every game's ``evolve`` shares
(:class:`Folder`), and deciding by applying each event as it is emitted (:class:`Run`).

An opening event (``game_started``, ``position_loaded``) builds a state from nothing; any other
event is applied to a copy of the state, never to the state itself. Folding checks nothing:
``decide`` and position import check, and a recorded event always folds.

    evolve = Folder(
        openings={ev.GameStarted: _started, ev.PositionLoaded: _loaded},
        apply=_apply,                    # e.g. a functools.singledispatch function
        copy=State.copy,
    )

A decision of several steps works on a :class:`Run`, in every game: a working copy of the state
to which each event is applied the moment it is emitted, so a later step of the decision sees
what the earlier ones did (a card drawn is gone from the deck, a reshuffle has refilled it)
through the state itself, and folding the emitted events gives exactly the state the decision
saw. A rule is therefore written once, in ``evolve``; ``decide`` only chooses which events to
emit. (A decision whose events all follow from the state it was given — a single ``track_built``,
a placement and its die roll — returns them as a list: there is nothing to fold, and no copy to
pay for.)::

    def decide(state, seat, command, rng):
        run = Run(evolve, state)
        run.emit(ev.Delivered(...))
        if not run.state.deck and run.state.discard:    # the delivery's discards count here
            run.emit(ev.DiscardRecycled())
        ...
        return run.events
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

S = TypeVar("S")
E = TypeVar("E")


class Folder(Generic[S]):
    """``evolve(state, event)`` for a game: openings build, everything else applies to a copy."""

    __slots__ = ("_apply", "_copy", "_openings")

    def __init__(
        self,
        openings: Mapping[type[Any], Callable[[Any], S]],
        apply: Callable[[Any, S], None],
        copy: Callable[[S], S],
    ) -> None:
        self._openings = dict(openings)
        self._apply = apply
        self._copy = copy

    def __call__(self, state: S | None, event: Any) -> S:
        opening = self._openings.get(type(event))
        if opening is not None:
            return opening(event)
        if state is None:
            raise ValueError(f"a stream starts with the game's opening, not {type(event).__name__}")
        new = self._copy(state)
        self._apply(event, new)
        return new



class Run(Generic[S, E]):
    """A decision in progress: ``state`` is a working copy of the state the decision started
    from with every event of ``events`` (those emitted so far, in order) applied to it.

    The copy is made once, when the run starts, and each :meth:`emit` applies its event to it
    in place: a reference to ``run.state`` (or a part of it) taken before an emit sees the
    emitted event too. The state the run started from is never changed.
    """

    def __init__(self, folder: Folder[S], state: S) -> None:
        self._openings = folder._openings
        self._apply = folder._apply
        self.state: S = folder._copy(state)
        self.events: list[E] = []

    @classmethod
    def opening(cls, folder: Folder[S], event: E) -> Run[S, E]:
        """A run that starts a game with its opening ``event`` (already emitted)."""
        run: Run[S, E] = cls.__new__(cls)
        run._openings = folder._openings
        run._apply = folder._apply
        run.state = folder(None, event)
        run.events = [event]
        return run

    def emit(self, event: E) -> None:
        """Emit ``event``: apply it to the working state and add it to the decision's events."""
        if type(event) in self._openings:
            raise ValueError(f"{type(event).__name__} opens a game; a run starts with it")
        self._apply(event, self.state)
        self.events.append(event)
