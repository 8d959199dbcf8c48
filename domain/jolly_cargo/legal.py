"""Every legal command for a seat: each complete worker action (every step sequence), every
set-up placement, every return and every place-back square."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import combinations

from domain.kernel import RuleError

from . import board
from . import commands as cmd
from .actions import ActionRun, Grid, ships_in_play
from .board import (
    CORNERS,
    DIRECTIONS,
    EDGE,
    LOADING,
    NEIGHBOUR,
    OPPOSITE,
    Colour,
    Square,
    square_name,
)
from .pieces import PULLS, Kind, crew, is_dockhand
from .rules import recovered, returnable_from_water, setup_seat, waiting_to_place
from .state import State

_KINDS: tuple[cmd.StepKind, ...] = ("move", "push", "pull")
#: One (frozen, shareable) Step per direction and kind.
_STEP: dict[tuple[str, str], cmd.Step] = {
    (d, k): cmd.Step(d, k) for d in DIRECTIONS for k in _KINDS
}


def legal(state: State, seat: int) -> list[cmd.Command]:
    phase = state.phase
    if phase == "crates":
        if seat != setup_seat(state):
            return []
        return [
            cmd.PlaceCrate(square_name(s))
            for s in board.ALL_SQUARES
            if s not in CORNERS and square_name(s) not in state.crates
        ]
    if phase == "ships":
        if seat != setup_seat(state):
            return []
        taken = {p.colour for p in state.players}
        return [cmd.ChooseShip(c) for c in state.colours if c not in taken]
    if phase == "workers":
        return _worker_placements(state, seat)
    if phase == "play":
        return _play(state, seat)
    return []


def _worker_placements(state: State, seat: int) -> list[cmd.Command]:
    if seat != setup_seat(state):
        return []
    colour = state.players[seat].colour
    if colour is None:
        return []
    grid = Grid.of(state)
    out: list[cmd.Command] = []
    for worker in crew(colour):
        if worker in state.workers:
            continue
        dockhand = is_dockhand(worker)
        out += [
            cmd.PlaceWorker(worker, square_name(s))
            for s in board.ALL_SQUARES
            if grid.enterable(s, dockhand)
        ]
    return out


def _play(state: State, seat: int) -> list[cmd.Command]:
    waiting = waiting_to_place(state)
    if waiting or state.moves_left == 0:
        if seat in waiting or (not waiting and seat == state.current):
            return _place_backs(state, seat)
        return []
    if seat != state.current:
        return []
    out: list[cmd.Command] = []
    grid = Grid.of(state)
    colour = state.players[seat].colour
    if colour is None:
        return []
    if not state.acted:
        for worker in returnable_from_water(state, seat):
            out += [
                cmd.ReturnWorker(worker, square_name(s))
                for s in LOADING[colour]
                if grid.enterable(s, is_dockhand(worker))
            ]
        if out:
            return out  # rescued workers come back before anything else happens
        for worker in recovered(state, seat):
            out += [
                cmd.ReturnWorker(worker, square_name(s))
                for s in sorted(EDGE)
                if grid.enterable(s, True)
            ]
    out += worker_actions(state, seat, grid)
    out.append(cmd.EndTurn())
    return out


def _place_backs(state: State, seat: int) -> list[cmd.Command]:
    colours = sorted({h.colour for h in state.held if h.seat == seat})
    if not colours:
        return []
    grid = Grid.of(state)
    loading = ships_in_play(state)
    squares = [square_name(s) for s in board.ALL_SQUARES if s not in loading and grid.is_empty(s)]
    return [cmd.PlaceHeldCrate(c, sq) for c in colours for sq in squares]


def worker_actions(state: State, seat: int, grid: Grid | None = None) -> list[cmd.Command]:
    """Every complete action of every worker (and Dockhand stack) ``seat`` may move now."""
    grid = grid or Grid.of(state)
    colour = state.players[seat].colour
    if colour is None:
        return []
    ships = ships_in_play(state)
    free = [w for w in crew(colour) if w in state.workers and w not in state.used]
    groups: list[list[str]] = []
    dockhands_by_square: dict[str, list[str]] = {}
    for w in free:
        if is_dockhand(w):
            dockhands_by_square.setdefault(state.workers[w], []).append(w)
        else:
            groups.append([w])
    for stack in dockhands_by_square.values():
        for size in range(1, min(len(stack), state.moves_left) + 1):
            groups += [list(c) for c in combinations(stack, size)]
    out: list[cmd.Command] = []
    for actors in groups:
        for steps in _sequences(grid, actors, ships):
            out.append(cmd.Move(actors, steps))
    return out


def _sequences(
    grid: Grid, actors: list[str], ships: Mapping[Square, tuple[int, Colour]]
) -> list[list[cmd.Step]]:
    """All legal step sequences (1 up to the worker's movement) for ``actors`` on ``grid``,
    each sequence followed by its continuations."""
    found: list[list[cmd.Step]] = []
    # leaves ``grid`` as it found it
    _extend(ActionRun(grid, actors, ships, record=False), [], found)
    return found


def _extend(run: ActionRun, prefix: list[cmd.Step], found: list[list[cmd.Step]]) -> None:
    """Add every legal continuation of ``prefix`` (already taken on ``run``) to ``found``.

    Plain moves — most steps — are always legal once ``_candidates`` offers them, and only
    relocate the actors: they are taken on ``run`` itself and undone afterwards. Pushes and
    pulls are asked of ``ActionRun.check`` when they end the action, else tried on a clone by
    ``ActionRun.step``: the checks ``decide`` makes, either way.
    """
    grid = run.grid
    here = grid.where[run.actors[0]]
    more = run.taken + 1 < run.allowed
    for step in _candidates(grid, run.actors[0], run.what):
        steps = [*prefix, step]
        if step.kind == "move":
            found.append(steps)
            ahead = NEIGHBOUR[step.dir][here]
            if more and ahead is not None:  # a move step always has a square ahead
                undo = _shift(grid, run.actors, here, ahead)
                run.taken += 1
                _extend(run, steps, found)
                run.taken -= 1
                undo()
            continue
        if not more:  # the action's last step: is it legal? (nothing to continue from)
            try:
                run.check(step)
            except RuleError:
                continue
            found.append(steps)
            continue
        trial = run.clone()
        try:
            trial.step(step)
        except RuleError:
            continue
        found.append(steps)
        _extend(trial, steps, found)


def _shift(grid: Grid, actors: list[str], here: int, ahead: int) -> Callable[[], None]:
    """Move ``actors`` from ``here`` to ``ahead``; returns what puts the grid back exactly."""
    before_here, before_ahead = grid.occ.get(here), grid.occ.get(ahead)
    for worker in actors:
        grid.relocate(worker, ahead)

    def undo() -> None:
        for square, stack in ((here, before_here), (ahead, before_ahead)):
            if stack:
                grid.occ[square] = stack
            else:
                grid.occ.pop(square, None)
        for worker in actors:
            grid.where[worker] = here

    return undo


#: For each square, (direction, square ahead, square behind) for every direction that does not
#: lead straight into the water.
_AROUND: tuple[tuple[tuple[str, Square, Square | None], ...], ...] = tuple(
    tuple(
        (d, ahead, NEIGHBOUR[OPPOSITE[d]][square])
        for d in DIRECTIONS
        if (ahead := NEIGHBOUR[d][square]) is not None
    )
    for square in board.ALL_SQUARES
)


def _candidates(grid: Grid, actor: str, what: Kind) -> list[cmd.Step]:
    """Steps worth trying from where ``actor`` stands (cheap pre-filter of the rules: a move
    into a square the actor may enter, a push into a crate, a pull away from a crate behind it
    into an empty square)."""
    crates, occ = grid.crates, grid.occ
    dockhand, pulls = what == "dockhand", PULLS[what]
    out: list[cmd.Step] = []
    for d, ahead, behind in _AROUND[grid.where[actor]]:
        if ahead in crates:
            out.append(_STEP[d, "push"])
            continue
        others = occ.get(ahead)
        if others and not (dockhand and is_dockhand(others[0])):
            continue
        out.append(_STEP[d, "move"])
        if pulls and not others and behind is not None and behind in crates:
            out.append(_STEP[d, "pull"])
    return out
