"""``start`` and ``decide``: the set-up and every command, checked against the rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from domain import kernel
from domain.kernel import Rng, RuleError

from . import board
from . import commands as cmd
from . import events as ev
from .actions import Grid, perform, ships_in_play
from .board import COLOURS, CORNERS, EDGE, LOADING, Colour, Square
from .evolve import evolve
from .options import CRATES_PER_PLAYER, DEFAULT_COLOURS, Options
from .pieces import colour_of, crew, is_dockhand
from .position import Position, validate
from .state import HeldCrate, State

MIN_SEATS, MAX_SEATS = 2, 4

#: a decision of CARGO in progress (:class:`~domain.kernel.Run`)
Run = kernel.Run[State, ev.E]


# --- set-up ----------------------------------------------------------------------------------
def start(options: Options, seats: int, rng: Rng) -> list[ev.E]:
    if not MIN_SEATS <= seats <= MAX_SEATS:
        raise RuleError("rule.seats", f"CARGO is for {MIN_SEATS} to {MAX_SEATS} players")
    colours = list(options.colours) if options.colours is not None else DEFAULT_COLOURS[seats]
    if len(colours) != seats or len(set(colours)) != seats:
        raise RuleError("options.colours", f"name {seats} different ship colours, one per seat")
    per = CRATES_PER_PLAYER[seats]
    events: list[ev.E] = [ev.GameStarted(seats, options, colours, per)]
    if options.crate_placement == "random":
        squares = rng.shuffled([s for s in board.ALL_SQUARES if s not in CORNERS])
        crates = rng.shuffled([c for c in colours for _ in range(per)])
        events += [
            ev.CratePlaced(None, board.square_name(sq), colour)
            for sq, colour in zip(squares, crates, strict=False)
        ]
        events.append(_roll_off(rng, "ships", list(range(seats))))
    return events


def start_from_position(position: Position, rng: Rng) -> list[ev.E]:
    validate(position)  # raises position.invalid; folding the event checks nothing
    return [ev.PositionLoaded(position)]


def _roll_off(rng: Rng, purpose: str, contenders: list[int]) -> ev.DiceRolled:
    """Everyone rolls a die; the highest wins and ties among the highest roll again."""
    rounds: list[list[ev.DieRoll]] = []
    while True:
        rolls = [ev.DieRoll(seat, rng.die(6)) for seat in contenders]
        rounds.append(rolls)
        top = max(r.value for r in rolls)
        contenders = [r.seat for r in rolls if r.value == top]
        if len(contenders) == 1:
            return ev.DiceRolled(purpose, rounds, contenders[0])


# --- decide ----------------------------------------------------------------------------------
def decide(state: State, seat: int, command: cmd.Command, rng: Rng) -> list[ev.E]:
    """``command`` by ``seat`` (the kernel has checked the seat is the game's, the game is not
    over and the seat is to act, or is the mover told to wait: :func:`out_of_turn`)."""
    handler = _HANDLERS.get(type(command))
    if handler is None:
        raise RuleError("rule.unknown_command", f"CARGO has no command {type(command).__name__}")
    phase, fn = handler
    if phase != state.phase:
        raise RuleError(
            "rule.wrong_phase", f"{_command_name(command)} is not possible while {_doing(state)}"
        )
    return fn(state, seat, command, rng)


def _command_name(command: msgspec.Struct) -> str:
    return str(command.__struct_config__.tag)


def _doing(state: State) -> str:
    return {
        "crates": "the crates are being placed",
        "ships": "ships are being chosen",
        "workers": "workers are being placed",
        "play": "the game is being played",
        "finished": "the game is over",
    }[state.phase]


def setup_seat(state: State) -> int:
    """Whose set-up placement it is (crates, ships and workers go round in ``order``)."""
    return state.order[state.placed % state.seats]


def out_of_turn(state: State, seat: int, command: cmd.Command) -> bool:
    """In play, the player whose turn it is, while another seat places back a crate, is told
    to wait (``rule.waiting_for_placement``), and a seat placing back a crate it does not hold
    is told so (``rule.no_held_crate``), not that it is not their turn."""
    return state.phase == "play" and (
        seat == state.current or isinstance(command, cmd.PlaceHeldCrate)
    )


def _square(text: str) -> Square:
    try:
        return board.parse_square(text)
    except ValueError as e:
        raise RuleError("rule.no_such_square", str(e)) from None


def _place_crate(state: State, seat: int, c: cmd.PlaceCrate, rng: Rng) -> list[ev.E]:
    square = _square(c.square)
    if square in CORNERS:
        raise RuleError("rule.corner", "crates may not be placed on the four corner squares")
    if c.square in state.crates:
        raise RuleError("rule.square_occupied", f"{c.square} already holds a crate")
    # The crates were mixed face down: the one placed is any of those left, unseen.
    run = Run(evolve, state)
    run.emit(ev.CratePlaced(seat, c.square, rng.choice(_crates_left(state))))
    if not _crates_left(run.state):
        run.emit(_roll_off(rng, "ships", list(range(state.seats))))
    return run.events


def _crates_left(state: State) -> list[Colour]:
    """The colours of the crates still to be placed, one entry a crate."""
    return [
        colour
        for colour in state.colours
        for _ in range(state.crates_per_player - state.crates_on_dock(colour))
    ]


def _choose_ship(state: State, seat: int, c: cmd.ChooseShip, rng: Rng) -> list[ev.E]:
    if c.colour not in state.colours:
        raise RuleError("rule.ship_not_in_play", f"the {c.colour} ship is not in this game")
    taken = {p.colour for p in state.players}
    if c.colour in taken:
        raise RuleError("rule.ship_taken", f"the {c.colour} ship is already taken")
    run = Run(evolve, state)
    run.emit(ev.ShipChosen(seat, c.colour))
    taken = {p.colour for p in run.state.players}
    left = [colour for colour in state.colours if colour not in taken]
    if len(left) == 1:  # the last ship goes to the last seat
        run.emit(ev.ShipChosen(state.order[-1], left[0], automatic=True))
    if len(left) <= 1:
        run.emit(ev.CratesTurnedUp(dict(sorted(run.state.crates.items()))))
    return run.events


def _place_worker(state: State, seat: int, c: cmd.PlaceWorker, rng: Rng) -> list[ev.E]:
    colour = state.colour_of_seat(seat)
    if c.worker not in crew(colour):
        raise RuleError("rule.not_your_worker", f"{c.worker} is not one of your workers")
    if c.worker in state.workers:
        raise RuleError("rule.worker_placed", f"{c.worker} is already on the dock")
    square = _square(c.square)
    if not Grid.of(state).enterable(square, is_dockhand(c.worker)):
        raise RuleError(
            "rule.square_occupied",
            f"{c.square} is taken (only Dockhands share a square, and never with a crate)",
        )
    run = Run(evolve, state)
    run.emit(ev.WorkerPlaced(seat, c.worker, c.square))
    if run.state.placed == 7 * state.seats:  # every worker is on the dock
        first = _roll_off(rng, "first_move", list(range(state.seats)))
        run.emit(first)
        run.emit(ev.TurnBegan(first.winner, 1, 1))
    return run.events


# --- play ------------------------------------------------------------------------------------
def opening_moves(turn: int) -> int:
    """The first player moves 1 worker on the first turn, the second 2, then everyone 3."""
    return min(turn, 3)


def waiting_to_place(state: State) -> list[int]:
    """Seats (other than the mover) who must place a held crate before play goes on."""
    seats = {h.seat for h in state.held if h.seat != state.current}
    return sorted(seats)


def returnable_from_water(state: State, seat: int) -> list[str]:
    """Water workers of ``seat`` that have a loading square to come back to."""
    colour = state.players[seat].colour
    if colour is None:
        return []
    mine = [w for w in state.water if colour_of(w) == colour]
    if not mine:
        return []  # the usual case: no grid to build
    grid = Grid.of(state)
    return [w for w in mine if any(grid.enterable(sq, is_dockhand(w)) for sq in LOADING[colour])]


def recovered(state: State, seat: int) -> list[str]:
    """Dockhands of ``seat`` at the Doctor who may come back this turn."""
    colour = state.players[seat].colour
    turns = state.players[seat].turns
    return [w for w, ready in state.doctor.items() if colour_of(w) == colour and turns >= ready]


def _in_turn(state: State, seat: int) -> None:
    waiting = waiting_to_place(state)
    if waiting:
        raise RuleError(
            "rule.waiting_for_placement",
            f"seat {waiting[0]} must first place back the crate that reached their ship",
        )
    state.mover()  # rule.wrong_phase when nobody is to move
    if state.moves_left == 0:
        raise RuleError(
            "rule.turn_over", "you have stopped moving: place back your held crates to end the turn"
        )


def _return_worker(state: State, seat: int, c: cmd.ReturnWorker, rng: Rng) -> list[ev.E]:
    _in_turn(state, seat)
    if state.acted:
        raise RuleError(
            "rule.returns_closed", "workers come back at the start of a turn, before any action"
        )
    colour = state.colour_of_seat(seat)
    square = _square(c.square)
    if c.worker in state.water:
        source = "water"
        if colour_of(c.worker) != colour:
            raise RuleError("rule.not_your_worker", f"{c.worker} is not one of your workers")
        if square not in LOADING[colour]:
            raise RuleError(
                "rule.not_a_loading_square",
                f"a worker rescued from the water comes back onto one of your loading squares "
                f"({', '.join(board.square_name(s) for s in LOADING[colour])})",
            )
    elif c.worker in state.doctor:
        source = "doctor"
        if colour_of(c.worker) != colour:
            raise RuleError("rule.not_your_worker", f"{c.worker} is not one of your workers")
        if c.worker not in recovered(state, seat):
            raise RuleError(
                "rule.still_at_doctor",
                f"{c.worker} misses your next turn at the Doctor; it may return from turn "
                f"{state.doctor[c.worker]} of yours",
            )
        if square not in EDGE:
            raise RuleError(
                "rule.not_an_edge_square",
                "a Dockhand comes back from the Doctor onto an edge square",
            )
    else:
        raise RuleError(
            "rule.not_off_dock", f"{c.worker} is neither in the water nor at the Doctor"
        )
    if not Grid.of(state).enterable(square, is_dockhand(c.worker)):
        raise RuleError("rule.square_occupied", f"{c.square} is taken")
    return [ev.WorkerReturned(seat, c.worker, c.square, source)]


def _check_returns_done(state: State, seat: int) -> None:
    """At the start of a turn, workers rescued from the water come back before anything else
    (one that falls in during its owner's own turn waits for the owner's next turn)."""
    pending = [] if state.acted else returnable_from_water(state, seat)
    if pending:
        raise RuleError(
            "rule.return_workers_first",
            f"first bring {pending[0]} back from the water onto one of your loading squares",
        )


def _move(state: State, seat: int, c: cmd.Move, rng: Rng) -> list[ev.E]:
    _in_turn(state, seat)
    _check_returns_done(state, seat)
    actors = _actors(state, seat, c.workers)
    grid = Grid.of(state)
    ops = perform(grid, actors, list(c.steps), ships_in_play(state))
    event = ev.WorkersMoved(seat, list(c.workers), list(c.steps), ops, _points(state, seat, ops))
    return _then(state, event)


def _actors(state: State, seat: int, workers: list[str]) -> list[str]:
    colour = state.players[seat].colour
    if not workers:
        raise RuleError("rule.no_worker", "name the worker (or Dockhands) to move")
    if len(set(workers)) != len(workers):
        raise RuleError("rule.worker_twice", "a worker is named twice")
    for w in workers:
        if w not in state.workers:
            if w in state.water or w in state.doctor or w in state.removed:
                raise RuleError("rule.worker_not_on_dock", f"{w} is not on the dock")
            if not any(w in crew(col) for col in COLOURS):
                raise RuleError("rule.no_such_worker", f"there is no worker {w!r}")
        if colour_of(w) != colour:
            raise RuleError("rule.not_your_worker", f"{w} is not one of your workers")
        if w not in state.workers:
            raise RuleError("rule.worker_not_on_dock", f"{w} is not on the dock")
        if w in state.used:
            raise RuleError("rule.worker_already_moved", f"{w} has already moved this turn")
    # What the command names is checked before how many moves are left: a stack that is not a
    # stack is wrong whatever the count.
    if len(workers) > 1:
        if not all(is_dockhand(w) for w in workers):
            raise RuleError(
                "rule.only_dockhands_stack",
                "only a stack of Dockhands moves several workers at once",
            )
        if len({state.workers[w] for w in workers}) != 1:
            raise RuleError(
                "rule.stack_not_together", "Dockhands move together only from the same square"
            )
    if len(workers) > state.moves_left:
        raise RuleError(
            "rule.no_moves_left",
            f"you may move {state.moves_left} more worker(s) this turn, not {len(workers)}",
        )
    return list(workers)


def _points(state: State, seat: int, ops: list[ev.StepOp]) -> list[int]:
    """+3 to a crate's owner when loaded; ±1 to the mover for crates sunk and Dockhands
    squished (+1 an opponent's, −1 one's own)."""
    points = [0] * state.seats
    mine = state.players[seat].colour
    for op in ops:
        if isinstance(op, ev.Load):
            points[op.seat] += 3
        elif isinstance(op, ev.CrateShift) and op.to is None:
            points[seat] += -1 if op.colour == mine else 1
        elif isinstance(op, ev.Squish):
            points[seat] += -1 if colour_of(op.worker) == mine else 1
    return points


def _place_held_crate(state: State, seat: int, c: cmd.PlaceHeldCrate, rng: Rng) -> list[ev.E]:
    if HeldCrate(seat, c.colour) not in state.held:
        raise RuleError("rule.no_held_crate", f"you hold no {c.colour} crate to place back")
    if seat == state.current:
        others = waiting_to_place(state)
        if others:
            raise RuleError(
                "rule.waiting_for_placement", f"seat {others[0]} places their held crate first"
            )
        if state.moves_left > 0:
            raise RuleError(
                "rule.place_at_end_of_turn",
                "you place crates back at the end of your turn: end the turn first",
            )
    square = _square(c.square)
    if square in ships_in_play(state):
        raise RuleError(
            "rule.loading_square", "a crate is placed back on the dock, not on a loading area"
        )
    if not Grid.of(state).is_empty(square):
        raise RuleError("rule.square_occupied", f"{c.square} is not empty")
    return _then(state, ev.HeldCratePlaced(seat, c.colour, c.square))


def _end_turn(state: State, seat: int, c: cmd.EndTurn, rng: Rng) -> list[ev.E]:
    _in_turn(state, seat)
    _check_returns_done(state, seat)
    return _then(state, ev.StoppedMoving(seat))


def _then(state: State, event: ev.E) -> list[ev.E]:
    """``event``, and what follows by itself: the end of the turn once the mover has no moves
    left and every held crate is back, then the end of the game or the next player's turn."""
    run = Run(evolve, state)
    run.emit(event)
    after = run.state
    if after.moves_left > 0 or after.held:
        return run.events
    mover = after.mover()
    run.emit(ev.TurnEnded(mover))
    emptied = [s for s, p in enumerate(after.players) if after.crates_on_dock(p.colour or "") == 0]
    if emptied:
        scores = [p.score for p in after.players]
        collected = [p.collected for p in after.players]
        run.emit(ev.GameEnded(scores, collected, winners(scores, collected), emptied))
    else:
        nxt = (mover + 1) % after.seats
        run.emit(ev.TurnBegan(nxt, after.turn + 1, opening_moves(after.turn + 1)))
    return run.events


def winners(scores: list[int], collected: list[int]) -> list[int]:
    """Most points; a tie goes to most crates collected (loaded plus captured), then is shared."""
    best = max(scores)
    tied = [s for s, points in enumerate(scores) if points == best]
    most = max(collected[s] for s in tied)
    return [s for s in tied if collected[s] == most]


_HANDLERS: dict[type[Any], tuple[str, Callable[[State, int, Any, Rng], list[ev.E]]]] = {
    cmd.PlaceCrate: ("crates", _place_crate),
    cmd.ChooseShip: ("ships", _choose_ship),
    cmd.PlaceWorker: ("workers", _place_worker),
    cmd.ReturnWorker: ("play", _return_worker),
    cmd.Move: ("play", _move),
    cmd.PlaceHeldCrate: ("play", _place_held_crate),
    cmd.EndTurn: ("play", _end_turn),
}
