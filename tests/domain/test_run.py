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


@pytest.mark.parametrize(
    "game_id", ["jolly-cargo", "cargo-empire", "empire-builder", "curious-cargo"]
)
def test_an_emitted_event_is_not_changed_by_what_its_decision_does_after_it(
    game_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Applying as you emit puts a hazard in every game: an event that holds a list or dict of
    the working state (``MarketFilled(run.state.market)``), or an opening whose state keeps the
    event's own lists, would be changed by the events emitted after it — and recorded changed.
    Every event of the set-up, of positions and of a whole bot game is the same when the
    decision ends as when it was emitted."""
    import contextlib
    import hashlib

    from domain.kernel import CommandError, LocalGame, Rng
    from domain.registry import get_game

    emitted: list[tuple[object, bytes]] = []
    emit, opening = Run.emit, Run.opening.__func__  # type: ignore[attr-defined]

    def recording_emit(self: Run[object, object], event: object) -> None:
        emitted.append((event, msgspec.json.encode(event)))
        emit(self, event)

    def recording_opening(cls: type[Run[object, object]], folder: object, event: object) -> object:
        emitted.append((event, msgspec.json.encode(event)))
        return opening(cls, folder, event)

    monkeypatch.setattr(Run, "emit", recording_emit)
    monkeypatch.setattr(Run, "opening", classmethod(recording_opening))
    game = get_game(game_id)
    for seats in sorted({game.min_seats, game.max_seats}):
        seed = hashlib.sha256(f"{game_id}/{seats}".encode()).digest()
        table = LocalGame.new(game, seed, seats, game.decode_options(game.bot_options))
        chooser = Rng(seed, 0)
        for _ in range(200):
            if game.outcome(table.state) is not None:
                break
            seat = chooser.choice(game.to_act(table.state))
            table.submit(seat, chooser.choice(game.legal(table.state, seat)))
            with contextlib.suppress(CommandError):  # not every state has a position
                LocalGame.from_position(game, seed, game.export_position(table.state))
    assert emitted, "no decision ran on a Run"
    changed = [type(e).__name__ for e, was in emitted if msgspec.json.encode(e) != was]
    assert not changed, changed
