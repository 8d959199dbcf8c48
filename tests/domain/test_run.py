"""The kernel's one emit discipline (``domain.kernel.Run``): a decision works on a copy of the
state to which each event is applied the moment it is emitted."""

from __future__ import annotations

import msgspec
import pytest

from domain.kernel import Folder, Run


class Opened(msgspec.Struct, frozen=True, tag=True):
    start: int


class Added(msgspec.Struct, frozen=True, tag=True):
    amount: int


class Tally(msgspec.Struct):
    total: int
    seen: list[int]

    def copy(self) -> Tally:
        return Tally(self.total, list(self.seen))


def _apply(event: Added, s: Tally) -> None:
    s.total += event.amount
    s.seen.append(event.amount)


evolve: Folder[Tally] = Folder({Opened: lambda e: Tally(e.start, [])}, _apply, Tally.copy)


def test_each_emitted_event_is_seen_at_once_and_the_given_state_never_changes() -> None:
    given = Tally(10, [1])
    run: Run[Tally, Opened | Added] = Run(evolve, given)
    held = run.state
    run.emit(Added(5))
    assert run.state.total == 15 and held.total == 15  # one working copy, changed in place
    run.emit(Added(run.state.total))  # a later step decides on what the earlier ones did
    assert run.state == Tally(30, [1, 5, 15])
    assert run.events == [Added(5), Added(15)]
    assert given == Tally(10, [1])
    assert evolve(evolve(given, run.events[0]), run.events[1]) == run.state


def test_a_run_can_start_a_game_with_its_opening() -> None:
    run: Run[Tally, Opened | Added] = Run.opening(evolve, Opened(3))
    run.emit(Added(2))
    assert run.events == [Opened(3), Added(2)] and run.state == Tally(5, [2])


def test_an_opening_emitted_in_the_middle_of_a_decision_is_refused() -> None:
    run: Run[Tally, Opened | Added] = Run(evolve, Tally(0, []))
    with pytest.raises(ValueError, match="opens a game"):
        run.emit(Opened(1))
    assert run.events == [] and run.state == Tally(0, [])
