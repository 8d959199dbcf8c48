"""The shape every game's ``evolve`` shares, written once.

An opening event (``game_started``, ``position_loaded``) builds a state from nothing; any other
event is applied to a copy of the state, never to the state itself. Folding checks nothing:
``decide`` and position import check, and a recorded event always folds.

    evolve = Folder(
        openings={ev.GameStarted: _started, ev.PositionLoaded: _loaded},
        apply=_apply,                    # e.g. a functools.singledispatch function
        copy=State.copy,
    )
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

S = TypeVar("S")


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
            raise ValueError(
                f"a stream starts with the game's opening, not {type(event).__name__}"
            )
        new = self._copy(state)
        self._apply(event, new)
        return new
