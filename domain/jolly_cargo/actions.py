"""Worker actions: moving, pushing and pulling on the dock, step by step.

:func:`perform` plays one worker action (or a Dockhand stack's) on a :class:`Grid` and returns
what happened as a list of ops, or raises :class:`RuleError` naming the step that is illegal and
why. ``decide`` and ``legal`` both use it, so validation and generation cannot disagree.

The push line (rules text, "picture examples"): walking from the pushed crate in the push
direction, crates count against the pusher's strength; Burly Workers and Mules are shoved along
without counting; an Elephant cannot be shoved, so the push is illegal. Dockhands in the line move
on into an empty square or onto other Dockhands, and the line ends there; if the square after
them holds a crate or a Mule, Burly Worker or Elephant they are squished — sent to the Doctor —
and the push stops: what lies beyond them does not move. Anything shoved off the dock falls in
the water.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from domain.kernel import RuleError

from . import board
from .board import NEIGHBOUR, OPPOSITE, Colour, Square, square_name
from .commands import Step
from .events import CrateShift, Hold, Load, Squish, StepOp, WorkerShift
from .pieces import PULLS, PUSH, STEPS, is_dockhand, kind
from .state import State

_GONE = -1  # the Mule's crate has left the dock


class Grid:
    """A mutable working copy of the dock, indexed by square number.

    Worker stacks are tuples, so a copy of the grid only copies three flat dicts.
    """

    __slots__ = ("crates", "occ", "where")

    def __init__(
        self,
        crates: dict[Square, Colour],
        occ: dict[Square, tuple[str, ...]],
        where: dict[str, int],
    ) -> None:
        self.crates = crates
        self.occ = occ
        self.where = where

    @classmethod
    def of(cls, state: State) -> Grid:
        index = board.INDEX
        where = {w: index[sq] for w, sq in state.workers.items()}
        occ: dict[Square, tuple[str, ...]] = {}
        for w, sq in where.items():
            occ[sq] = (*occ.get(sq, ()), w)
        return cls({index[sq]: c for sq, c in state.crates.items()}, occ, where)

    def copy(self) -> Grid:
        return Grid(dict(self.crates), dict(self.occ), dict(self.where))

    def enterable(self, square: Square, dockhand: bool) -> bool:
        """May a worker (a Dockhand if ``dockhand``) stand on ``square``?"""
        if square in self.crates:
            return False
        others = self.occ.get(square)
        return not others or (dockhand and is_dockhand(others[0]))

    def is_empty(self, square: Square) -> bool:
        return square not in self.crates and not self.occ.get(square)

    def remove(self, worker: str) -> None:
        square = self.where.pop(worker)
        stack = self.occ[square]
        if len(stack) == 1:
            del self.occ[square]
        else:
            at = stack.index(worker)
            self.occ[square] = stack[:at] + stack[at + 1 :]

    def relocate(self, worker: str, square: Square | None) -> None:
        """Move a worker to ``square``, or off the dock when None."""
        self.remove(worker)
        if square is not None:
            self.where[worker] = square
            self.occ[square] = (*self.occ.get(square, ()), worker)


def a(what: str) -> str:
    """The worker kind with its indefinite article: "a mule", "an elephant"."""
    return f"{'an' if what[:1] in 'aeiou' else 'a'} {what}"


def _illegal(code: str, index: int, why: str) -> RuleError:
    return RuleError(code, f"step {index + 1}: {why}", step=index)


def perform(
    grid: Grid,
    actors: list[str],
    steps: list[Step],
    ships: Mapping[Square, tuple[int, Colour]],
) -> list[StepOp]:
    """Play the action on ``grid`` (mutating it) and return its ops.

    ``actors`` are one worker, or several Dockhands of one owner on one square (already checked
    by the caller). ``ships`` maps each loading square of a ship in play to (seat, colour).
    """
    if not steps:
        raise RuleError("rule.no_steps", "an action needs at least one step")
    run = ActionRun(grid, actors, ships, record=True)
    if len(steps) > run.allowed:
        raise RuleError(
            "rule.too_many_steps",
            f"{a(run.what)} moves at most {run.allowed} step(s); this action has {len(steps)}",
        )
    for step in steps:
        run.step(step)
    return run.ops


class _Checked(msgspec.Struct, frozen=True):
    """What a legal step moves (:meth:`ActionRun.check`): the actors onto ``ahead``, and for a
    pull the crate on ``pulled``; for a push the ``line`` it shoves, squishing the Dockhands on
    ``squished``."""

    ahead: Square
    pulled: Square | None = None
    line: list[Square] | None = None
    squished: Square | None = None


class ActionRun:
    """One worker action in progress: the grid, the steps taken so far and what they did
    (``ops``, kept only when ``record``: ``legal`` needs to know whether a step is legal, not
    what it did).

    ``legal`` clones a run after each step to explore every continuation without replaying
    the prefix.
    """

    __slots__ = (
        "actors",
        "allowed",
        "grid",
        "one_crate",
        "ops",
        "record",
        "ships",
        "strength",
        "taken",
        "touched",
        "what",
    )

    def __init__(
        self,
        grid: Grid,
        actors: list[str],
        ships: Mapping[Square, tuple[int, Colour]],
        *,
        record: bool,
    ) -> None:
        self.grid = grid
        self.actors = actors
        self.ships = ships
        self.what = kind(actors[0])
        self.allowed = STEPS[self.what]
        self.strength = len(actors) if self.what == "dockhand" else PUSH[self.what]
        self.one_crate = self.what == "mule"
        self.touched: Square | None = None  # square of the one crate a Mule has handled
        self.ops: list[StepOp] = []
        self.record = record
        self.taken = 0

    def clone(self) -> ActionRun:
        other = ActionRun.__new__(ActionRun)
        other.grid = self.grid.copy()
        other.actors = self.actors
        other.ships = self.ships
        other.what = self.what
        other.allowed = self.allowed
        other.strength = self.strength
        other.one_crate = self.one_crate
        other.touched = self.touched
        other.ops = list(self.ops) if self.record else self.ops
        other.record = self.record
        other.taken = self.taken
        return other

    def check(self, step: Step) -> _Checked:
        """Raise RuleError unless ``step`` may be taken now, else say what it would move;
        changes nothing (``legal`` asks this of an action's last step instead of taking it on a
        copy)."""
        i = self.taken
        grid, what = self.grid, self.what
        here = grid.where[self.actors[0]]
        ahead = NEIGHBOUR[step.dir][here]
        if ahead is None:
            raise _illegal("rule.off_dock", i, "workers may never move off the dock themselves")
        if step.kind == "move":
            if ahead in grid.crates:
                raise _illegal(
                    "rule.square_occupied",
                    i,
                    f"{square_name(ahead)} holds a crate: a step into it is a push",
                )
            if not grid.enterable(ahead, what == "dockhand"):
                raise _illegal(
                    "rule.square_occupied",
                    i,
                    f"{square_name(ahead)} holds a worker; only Dockhands may share a square "
                    "with Dockhands",
                )
            return _Checked(ahead)
        if step.kind == "push":
            if ahead not in grid.crates:
                if grid.occ.get(ahead):
                    raise _illegal(
                        "rule.cannot_push_worker",
                        i,
                        f"workers cannot push workers: {square_name(ahead)} holds a worker, and a"
                        " push needs a crate",
                    )
                raise _illegal(
                    "rule.nothing_to_push", i, f"there is no crate on {square_name(ahead)} to push"
                )
            if self.one_crate and self.touched is not None and self.touched != ahead:
                raise _illegal("rule.mule_one_crate", i, "a Mule moves only one crate per action")
            line, squished = _push_line(grid, step.dir, ahead, self.strength, what, i)
            return _Checked(ahead, line=line, squished=squished)
        # a pull
        if not PULLS[what]:
            raise _illegal("rule.cannot_pull", i, f"{a(what)} cannot pull, only push")
        behind = NEIGHBOUR[OPPOSITE[step.dir]][here]
        if behind is None or behind not in grid.crates:
            raise _illegal(
                "rule.nothing_to_pull",
                i,
                f"a pull needs a crate right behind the worker (opposite to {step.dir})",
            )
        if not grid.is_empty(ahead):
            raise _illegal(
                "rule.square_occupied", i, f"{square_name(ahead)} is not empty to step into"
            )
        if self.one_crate and self.touched is not None and self.touched != behind:
            raise _illegal("rule.mule_one_crate", i, "a Mule moves only one crate per action")
        return _Checked(ahead, pulled=behind)

    def step(self, step: Step) -> None:
        """Take one more step, or raise RuleError (and change nothing): :meth:`check`, then
        the step."""
        checked = self.check(step)
        grid = self.grid
        ops = self.ops if self.record else None
        ahead, behind = checked.ahead, checked.pulled
        arrived: list[Square] = []
        if checked.line is not None:
            arrived = _shove(grid, step.dir, checked.line, checked.squished, ops)
            if self.one_crate:
                beyond = NEIGHBOUR[step.dir][ahead]
                self.touched = _GONE if beyond is None else beyond
        elif behind is not None:
            here = grid.where[self.actors[0]]
            colour = grid.crates.pop(behind)
            grid.crates[here] = colour
            if ops is not None:
                ops.append(CrateShift(square_name(behind), square_name(here), colour))
            arrived = [here]
            self.touched = here
        for worker in self.actors:
            grid.relocate(worker, ahead)
            if ops is not None:
                ops.append(WorkerShift(worker, square_name(ahead)))
        for square in arrived:
            if _arrive(grid, square, self.ships, ops) and self.touched == square:
                self.touched = _GONE
        self.taken += 1


def _push_line(
    grid: Grid, d: str, first: Square, strength: int, what: str, index: int
) -> tuple[list[Square], Square | None]:
    """What a push into the crate on ``first`` shoves (the squares of the line, in order) and
    the square of the Dockhands it squishes, if any; RuleError if the push is illegal (too
    heavy, an Elephant in the line). Changes nothing."""
    nxt = NEIGHBOUR[d]
    line: list[Square] = []
    crates = 0
    square: Square | None = first
    while square is not None:
        if square in grid.crates:
            crates += 1
            if crates > strength:
                raise _illegal(
                    "rule.too_heavy",
                    index,
                    f"{a(what)} pushing here can move at most {strength} crate(s); "
                    f"the line holds more",
                )
            line.append(square)
            square = nxt[square]
            continue
        stack = grid.occ.get(square)
        if not stack:
            break
        if is_dockhand(stack[0]):
            beyond = nxt[square]
            if beyond is not None and (
                beyond in grid.crates or (grid.occ.get(beyond) and not grid.enterable(beyond, True))
            ):
                return line, square
            line.append(square)
            break
        if kind(stack[0]) == "elephant":
            raise _illegal(
                "rule.elephant_immovable",
                index,
                f"the Elephant on {square_name(square)} is too heavy to be pushed",
            )
        line.append(square)  # Burly Worker or Mule: shoved along, not counted
        square = nxt[square]
    return line, None


def _shove(
    grid: Grid, d: str, line: list[Square], squished: Square | None, ops: list[StepOp] | None
) -> list[Square]:
    """Shove ``line`` (from :func:`_push_line`) one square towards ``d``, squishing the Dockhands
    on ``squished``; return squares crates moved to (what moved is added to ``ops`` unless it is
    None)."""
    nxt = NEIGHBOUR[d]
    if squished is not None:
        for worker in grid.occ[squished]:
            grid.remove(worker)
            if ops is not None:
                ops.append(Squish(worker))
    arrived: list[Square] = []
    for square in reversed(line):
        to = nxt[square]
        if square in grid.crates:
            colour = grid.crates.pop(square)
            if ops is not None:
                ops.append(
                    CrateShift(square_name(square), None if to is None else square_name(to), colour)
                )
            if to is not None:
                grid.crates[to] = colour
                arrived.append(to)
        else:
            for worker in grid.occ[square]:
                grid.relocate(worker, to)
                if ops is not None:
                    ops.append(WorkerShift(worker, None if to is None else square_name(to)))
    return arrived


def _arrive(
    grid: Grid,
    square: Square,
    ships: Mapping[Square, tuple[int, Colour]],
    ops: list[StepOp] | None,
) -> bool:
    """A crate arrived on ``square``: if it is a loading square of a ship in play, take it off."""
    ship = ships.get(square)
    if ship is None:
        return False
    seat, ship_colour = ship
    colour = grid.crates.pop(square)
    if ops is not None:
        op = Load if colour == ship_colour else Hold
        ops.append(op(square_name(square), colour, seat))
    return True


def ships_in_play(state: State) -> dict[Square, tuple[int, Colour]]:
    """Loading square → (seat, colour) for the ships that players own."""
    out: dict[Square, tuple[int, Colour]] = {}
    for seat, player in enumerate(state.players):
        if player.colour is not None:
            for square in board.LOADING[player.colour]:
                out[square] = (seat, player.colour)
    return out
