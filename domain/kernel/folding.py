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
from contextvars import ContextVar
from typing import Any, Generic, TypeVar

from .errors import RuleError

S = TypeVar("S")
E = TypeVar("E")

#: The most events a decision may emit on a :class:`Run` (None: no cap), set by whoever runs
#: the decision (:func:`events_at_most`): the service caps a command's cost with its setting
#: ``MANIFEST_MAX_EVENTS_PER_COMMAND``. Read once when a run starts.
_MOST: ContextVar[int | None] = ContextVar("most_events", default=None)


class TooManyEvents(RuleError):
    """A decision that would emit more events than the cap allows (``command.too_many_events``):
    stopped at the first event past it, so its cost is bounded too; nothing is appended."""

    def __init__(self, most: int) -> None:
        super().__init__(
            "command.too_many_events",
            f"this command would cause more than {most} events, the most one command may",
            most=most,
        )


class events_at_most:  # named as the function it is used as: ``with events_at_most(200):``
    """Within the block, a :class:`Run` that emits more than ``most`` events raises
    :class:`TooManyEvents` at the first event past it (None: no cap). A class, not a
    ``contextmanager`` generator: entered on every command, and ten times cheaper so."""

    __slots__ = ("_most", "_token")

    def __init__(self, most: int | None) -> None:
        self._most = most

    def __enter__(self) -> None:
        self._token = _MOST.set(self._most)

    def __exit__(self, *_: object) -> None:
        _MOST.reset(self._token)


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
        self._most = _MOST.get()

    @classmethod
    def opening(cls, folder: Folder[S], event: E) -> Run[S, E]:
        """A run that starts a game with its opening ``event`` (already emitted)."""
        run: Run[S, E] = cls.__new__(cls)
        run._openings = folder._openings
        run._apply = folder._apply
        run.state = folder(None, event)
        run.events = [event]
        run._most = _MOST.get()
        return run

    def emit(self, event: E) -> None:
        """Emit ``event``: apply it to the working state and add it to the decision's events."""
        if type(event) in self._openings:
            raise ValueError(f"{type(event).__name__} opens a game; a run starts with it")
        if self._most is not None and len(self.events) >= self._most:
            raise TooManyEvents(self._most)
        self._apply(event, self.state)
        self.events.append(event)
