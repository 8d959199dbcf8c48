"""A scripted greedy player for Curious Cargo, for bot games that reach the real endings.

Construction: it grows lines out of the machine ports towards the docks (on any player board;
in the 3-colour variant a purple splitter continues a line of either colour, so it is tried
wherever a line ends). Every placement of a
tile (or a splitter) that extends a port's line is scored on the board it leaves: active docks
first (shipping docks of both colours most), then how close the open line ends come to the
docks still idle, less the scaffolds it costs. It plays the best placement that improves the
board, else draws a tile, else ends its turn; a construction token buys two more actions when a
placement is still worth playing.
Trucking: every legal command is tried on a copy (``rules.decide``) and the one leaving the best
standing is sent: goods shipped (both colours up to the two each that eligibility needs),
goods received and stars, trucks waiting at its docks, cards in hand; a game that would end is
scored by who wins it.

Pure: no I/O, no global random. Ties are broken by the ``rng`` it is given; the trial draws of a
simulated command use a fixed generator of the bot's own, so they guess, never peek at the
game's next draw. It reads the whole state (the opponent's hidden cards never enter a score).
Use one :class:`GreedyBot` per seat and game; ``choose(state, seat)`` returns a command the rules
accept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from domain.kernel import Rng, RuleError

from . import commands as cmd
from .components import (
    DOCKS,
    PURPLE,
    STACKS,
    TRUCKS,
    Board,
    Cell,
    Colour,
    Piece,
    board_of,
    piece,
    square_at,
    turn_offset,
    turned_cell,
    xy,
)
from .evolve import apply
from .lines import Layout, layout, trace
from .rules import check_placement, decide, tile_source, winners
from .state import Placed, Player, State, clone, stars

T = TypeVar("T")

#: Shipping docks are worth more than receiving ones: shipping is how a seat becomes eligible.
_DOCK_WEIGHT = {"shipping": 14.0, "receiving": 10.0}
#: The 3-colour variant: purple goods leave only through the dock the purple splitter faces, and
#: eligibility needs two of them shipped.
_PURPLE_SHIPPING = 20.0
_PURPLE_RECEIVING = 8.0
#: A hand this large is enough: more tiles only fill the storage stacks.
_HAND_LIMIT = 6
_WIN = 10_000.0


def _best(rng: Rng, items: Sequence[T], key: Callable[[T], float]) -> tuple[T, float]:
    """The item with the highest key, ties broken by ``rng``."""
    scored = [(key(x), x) for x in items]
    top = max(v for v, _ in scored)
    tied = [x for v, x in scored if v >= top - 1e-9]
    return tied[rng.below(len(tied))], top


# --- reading a board ----------------------------------------------------------------------
def _distance(a: str, b: str) -> int:
    ax, ay = xy(a) or (0, 0)
    bx, by = xy(b) or (0, 0)
    return abs(ax - bx) + abs(ay - by)


def board_value(board: Board, top: dict[str, Cell]) -> float:
    """How far a board is towards many active docks, shipping docks of every colour first."""
    docks, ends = trace(board, top)
    value = 0.0
    shipping_colours: set[str] = set()
    for dock in DOCKS:
        colour = docks.get(dock.id)
        if colour is not None:
            value += _DOCK_WEIGHT[dock.kind]
            if dock.kind == "shipping":
                shipping_colours.add(colour)
            elif colour == PURPLE:  # a seat's one purple splitter is wanted where purple ships
                value -= _PURPLE_RECEIVING
            continue
        # An idle dock: the nearest open line end, counted down with its distance.
        near = min((_distance(sq, dock.inward) for sq, _, _ in ends), default=None)
        if near is not None:
            value += _DOCK_WEIGHT[dock.kind] * 0.4 / (1 + near)
    return value + 8.0 * len(shipping_colours) + _PURPLE_SHIPPING * (PURPLE in shipping_colours)


# --- construction ---------------------------------------------------------------------------
def _extensions(
    lay: Layout, ends: list[tuple[str, Colour, str]], pid: str
) -> list[tuple[str, int]]:
    """The anchors and rotations at which ``pid`` continues an open end's line."""
    pc = piece(pid)
    if pc is None:
        return []
    out: set[tuple[str, int]] = set()
    for square, colour, edge in ends:
        at_xy = xy(square)
        if at_xy is None:
            continue
        for rot in (0, 90, 180, 270):
            for k, cell in enumerate(pc.cells):
                segments = turned_cell(cell, rot)
                if not any(s.colour in (colour, PURPLE) and edge in s.edges for s in segments):
                    continue
                anchor = _anchor(pc, k, square, rot)
                if anchor is not None:
                    out.add((anchor, rot))
    return sorted(out)


def _anchor(pc: Piece, k: int, square: str, rot: int) -> str | None:
    """The anchor that puts cell ``k`` of ``pc`` turned by ``rot`` on ``square``."""
    sx, sy = xy(square) or (-99, -99)
    ox, oy = turn_offset(*pc.offsets[k], rot)
    return square_at(sx - ox, sy - oy)


class _Option:
    __slots__ = ("command", "gain")

    def __init__(self, command: cmd.Command, gain: float) -> None:
        self.command = command
        self.gain = gain


def _placements(board: Board, p: Player, splitters: bool) -> list[_Option]:
    """Every tile (hand, stack tops) or splitter placement that extends a line, with its gain."""
    lay = layout(p.board)
    base = board_value(board, lay.top)
    _, ends = trace(board, lay.top)
    out: list[_Option] = []
    pieces: list[tuple[str, str]] = []  # (piece id, what to send)
    if splitters:
        pieces += [(f"splitter-{c}", c) for c, n in p.splitters.items() if n > 0]
    else:
        held = [*p.hand, *(stack[-1] for stack in p.storage if stack)]
        pieces += [(t, t) for t in held if tile_source(p, t) is not None]
    tried: dict[tuple[object, str, int], float] = {}
    for pid, name in pieces:
        pc = piece(pid)
        if pc is None:
            continue
        for at, rot in _extensions(lay, ends, pid):
            key = (pc.cells, at, rot)
            if key not in tried:
                try:
                    where = check_placement(board, lay, pid, at, rot, p.scaffolds)
                except RuleError:
                    tried[key] = -1e9
                else:
                    after = lay.copy()
                    after.put(Placed(pid, at, rot))
                    scaffolds = 1.5 * sum(where.scaffolds.values())
                    tried[key] = board_value(board, after.top) - base - scaffolds
                    if name == PURPLE and PURPLE not in trace(board, after.top)[0].values():
                        tried[key] = -1e9  # the one purple splitter goes where it makes purple
            gain = tried[key]
            if gain <= 0.05:
                continue
            if splitters:
                command: cmd.Command = cmd.PlaceSplitter(name, at, rot)  # type: ignore[arg-type]
            else:
                command = cmd.PlayTile(name, at, rot)
            out.append(_Option(command, gain))
    return out


# --- trucking -------------------------------------------------------------------------------
def _standing(p: Player) -> float:
    shipped = sum(p.shipped.values())
    eligible = sum(min(n, 2) for n in p.shipped.values())
    received = sum(p.received.values())
    waiting = 0
    for truck in p.shipping_lane:
        lay = TRUCKS[truck.card].layout
        waiting += sum(1 for i, x in enumerate(lay) if x == "." and i not in truck.goods)
    incoming = sum(len(t.goods) for t in p.receiving_lane)
    tiles = len(p.hand) + sum(len(s) for s in p.storage)
    return (
        10.0 * shipped
        + 12.0 * eligible
        + 6.0 * received
        + 40.0 * stars(p)
        + 0.8 * waiting
        + 1.0 * incoming
        + 5.0 * len(p.cards)
        + 0.6 * tiles
        + 1.0 * (p.construction + p.trucking)
    )


def _value(s: State, seat: int) -> float:
    me, other = s.players[seat], s.players[1 - seat]
    value = _standing(me) - 0.6 * _standing(other)
    if s.step == "finished":
        won = winners(s, list(s.scores))
        value += _WIN if won == [seat] else -_WIN if won else -_WIN / 4
    return value


class GreedyBot:
    """One seat's greedy player (see the module)."""

    def __init__(self, rng: Rng) -> None:
        self.rng = rng
        self._trial = Rng(b"curious-cargo/greedy/trial".ljust(32, b"."), 0)

    def choose(self, state: State, seat: int) -> cmd.Command:
        p = state.players[seat]
        if state.step == "draft":
            card, _ = _best(self.rng, sorted(p.dealt), _card_value)
            return cmd.KeepCard(card)
        if state.pending:
            return self._by_trial(state, seat, _load_choices(state, seat))
        if state.step == "cleanup":
            return _store(p)
        if state.phase == "construction":
            return self._construct(state, seat)
        return self._truck(state, seat)

    def _construct(self, s: State, seat: int) -> cmd.Command:
        p = s.players[seat]
        board = board_of(s.options)
        options = _placements(board, p, splitters=False) if s.actions_left > 0 else []
        if not s.token_used and p.construction > 0:
            split = _placements(board, p, splitters=True)
            if split and (not options or max(o.gain for o in split) > max(o.gain for o in options)):
                return _best(self.rng, split, lambda o: o.gain)[0].command
        if options:
            return _best(self.rng, options, lambda o: o.gain)[0].command
        if s.actions_left > 0 and s.bag and len(p.hand) < _HAND_LIMIT:
            return cmd.DrawTile()
        # Two more actions are worth a token only if a held tile would then be played.
        if (
            s.actions_left == 0
            and not s.token_used
            and p.construction > 0
            and _placements(board, p, splitters=False)
        ):
            return cmd.UseConstructionToken()
        return cmd.EndTurn()

    def _truck(self, s: State, seat: int) -> cmd.Command:
        from .legal import legal

        return self._by_trial(s, seat, legal(s, seat))

    def _by_trial(self, s: State, seat: int, commands: list[cmd.Command]) -> cmd.Command:
        def value(c: cmd.Command) -> float:
            try:
                events = decide(s, seat, c, self._trial)
            except RuleError:
                return -1e12
            after = clone(s)
            for e in events:
                apply(after, e)
            return _value(after, seat)

        return _best(self.rng, commands, value)[0]


def _card_value(card: str) -> float:
    truck = TRUCKS[card]
    return truck.layout.count(".") / truck.ap


def _load_choices(s: State, seat: int) -> list[cmd.Command]:
    from .rules import load_options

    return [cmd.ChooseLoads([x.dock for x in o]) for o in load_options(s, seat)]


def _store(p: Player) -> cmd.Store:
    """Every tile in hand, each onto the lowest stack, so that more tiles stay on top."""
    heights = [len(stack) for stack in p.storage]
    out = []
    for tile in p.hand:
        stack = min(range(STACKS), key=lambda i: heights[i])
        heights[stack] += 1
        out.append(cmd.Stored(tile, stack))
    return cmd.Store(out)
