"""A scripted greedy player for CARGO (Tom Jolly's), for bot games that end like a player's.

In play, every legal command of the turn (each worker's whole action, a rescue, a Doctor's
return, a place-back, ``end_turn``) is tried on the state with the bot's own generator
(``kernel.best_by_trial``) and the one leaving the best standing is sent, one action after the
other; ``end_turn`` wins when no action improves the standing. The standing: points against the
best opponent's, then the position — own crates near own loading squares, own workers near the
squares from which they push those crates closer, opponents' crates near the water and away from
their ships. So it loads its crates, shoves the others' into the sea, and ends the game by
emptying its side of the dock.

Set-up: crates are placed face down and ships chosen before the crates are turned up, so those
choices are the ``rng``'s (the colours are hidden from a player; the bot does not read them);
workers are placed by trial like actions.

Pure: no I/O, no global random; ties are broken by the ``rng`` it is given. Use one
:class:`GreedyBot` per seat and game.
"""

from __future__ import annotations

from domain.kernel import Rng, best_by_trial

from . import commands as cmd
from .board import INDEX, LOADING, SIZE, Colour, Square
from .legal import legal
from .state import State

_WIN = 100.0


def _dist(a: Square, b: Square) -> int:
    return abs(a % SIZE - b % SIZE) + abs(a // SIZE - b // SIZE)


def _to_water(a: Square) -> int:
    x, y = a % SIZE, a // SIZE
    return min(x, SIZE - 1 - x, y, SIZE - 1 - y)


def _push_from(crate: Square, target: Square) -> list[Square]:
    """The squares from which a push moves ``crate`` one square closer to ``target``."""
    x, y = crate % SIZE, crate // SIZE
    tx, ty = target % SIZE, target // SIZE
    out = []
    for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        if (dx and (tx - x) * dx > 0) or (dy and (ty - y) * dy > 0):
            bx, by = x - dx, y - dy
            if 0 <= bx < SIZE and 0 <= by < SIZE:
                out.append(by * SIZE + bx)
    return out


def standing(s: State, seat: int) -> float:
    """How well ``seat`` stands: points against the best opponent's, then the position."""
    me = s.players[seat]
    others = [p.score for i, p in enumerate(s.players) if i != seat]
    value = 10.0 * (me.score - max(others, default=0))
    if s.phase == "finished":
        if seat in s.winners:
            value += _WIN / len(s.winners)
        return value
    colour = me.colour
    if colour is None or s.crates_face_down:
        return value
    workers = [INDEX[sq] for w, sq in s.workers.items() if w.startswith(f"{colour}-")]
    ships: dict[str, tuple[Square, ...]] = {
        p.colour: LOADING[p.colour] for p in s.players if p.colour is not None
    }
    for name, crate_colour in s.crates.items():
        crate = INDEX[name]
        if crate_colour == colour:
            target = min(LOADING[colour], key=lambda sq: _dist(crate, sq))
            value -= 1.0 * _dist(crate, target)
            spots = _push_from(crate, target)
            if spots and workers:
                value -= 0.25 * min(_dist(w, sp) for w in workers for sp in spots)
        else:
            value -= 0.3 * _to_water(crate)
            loading: tuple[Square, ...] | None = ships.get(_colour(crate_colour))
            if loading is not None:
                value += 0.3 * min(_dist(crate, sq) for sq in loading)
    return value


def _colour(text: str) -> Colour:
    return text  # type: ignore[return-value]


class GreedyBot:
    """One seat's greedy player (see the module)."""

    def __init__(self, rng: Rng) -> None:
        self.rng = rng
        self._trial = Rng(b"jolly-cargo/greedy/trial".ljust(32, b"."), 0)

    def choose(self, state: State, seat: int) -> cmd.Command:
        from .game import JOLLY_CARGO  # the record names this bot (its ``timeout``)

        commands = legal(state, seat)
        if state.phase in ("crates", "ships"):
            return self.rng.choice(commands)
        return best_by_trial(
            JOLLY_CARGO,
            state,
            seat,
            commands,
            lambda after: standing(after, seat),
            self.rng,
            self._trial,
        )
