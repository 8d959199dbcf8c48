"""Every command a seat may send now. Placements are every piece × anchor square × rotation that
``decide`` accepts; the squares a shape may take depend only on the board's heights and the
scaffolds left, so they are computed once per shape and reused for every tile of that shape."""

from __future__ import annotations

from functools import cache
from itertools import product

from . import commands as cmd
from .components import (
    BOARDS,
    ROTATIONS,
    SQUARES,
    STACKS,
    TRUCKS,
    Piece,
    board_of,
    footprint,
    piece,
)
from .lines import Layout, layout
from .rules import load_options, tile_source
from .state import State


@cache
def _open(
    number: int, offsets: tuple[tuple[int, int], ...]
) -> list[tuple[str, int, tuple[str, ...]]]:
    """Every anchor and rotation of a shape that lies on the grid and on no blocked square of
    board ``number``."""
    blocked = BOARDS[number].blocked
    shape = Piece("shape", "shape", offsets, tuple(() for _ in offsets))
    out = []
    for at, rot in product(SQUARES, ROTATIONS):
        squares = footprint(shape, at, rot)
        if all(sq is not None and sq not in blocked for sq in squares):
            out.append((at, rot, tuple(sq for sq in squares if sq is not None)))
    return out


def _spots(number: int, lay: Layout, pid: str, scaffolds: int) -> list[tuple[str, int]]:
    """Where ``pid`` may go: ``check_placement``'s rules, with the static part precomputed."""
    pc = piece(pid)
    if pc is None:
        return []
    heights = lay.heights
    out = []
    for at, rot, squares in _open(number, pc.offsets):
        hs = [heights.get(sq, 0) for sq in squares]
        high = max(hs)
        if sum(high - h for h in hs) <= scaffolds:
            out.append((at, rot))
    return out


def legal(s: State, seat: int) -> list[cmd.Command]:
    if seat not in s.to_act():
        return []
    p = s.players[seat]
    if s.step == "draft":
        return [cmd.KeepCard(c) for c in p.dealt]
    if s.pending:
        return [cmd.ChooseLoads([x.dock for x in o]) for o in load_options(s, seat)]
    if s.step == "cleanup":
        # Every order and stack assignment is too many to list (3^n · n!): the tiles in hand
        # order, on each stack.
        return [cmd.Store([cmd.Stored(t, i) for t in p.hand]) for i in range(STACKS)]
    out: list[cmd.Command] = []
    if s.phase == "construction":
        number = board_of(s.options).number
        lay = layout(p.board)
        by_shape: dict[tuple[tuple[int, int], ...], list[tuple[str, int]]] = {}
        if s.actions_left > 0:
            if s.bag:
                out.append(cmd.DrawTile())
            tiles = [*p.hand, *(st[-1] for st in p.storage if st)]
            for tile in tiles:
                pc = piece(tile)
                if pc is None or tile_source(p, tile) is None:
                    continue
                if pc.offsets not in by_shape:
                    by_shape[pc.offsets] = _spots(number, lay, tile, p.scaffolds)
                out.extend(cmd.PlayTile(tile, at, rot) for at, rot in by_shape[pc.offsets])
        if not s.token_used and p.construction > 0:
            out.append(cmd.UseConstructionToken())
            for colour, held in p.splitters.items():  # red, teal, and the variant's purple
                if held > 0:
                    spots = _spots(number, lay, f"splitter-{colour}", p.scaffolds)
                    out.extend(
                        cmd.PlaceSplitter(colour, at, rot)  # type: ignore[arg-type]
                        for at, rot in spots
                    )
        out.append(cmd.EndTurn())
        return out
    acted = s.ap_spent > 0 or s.trucking_token_used
    for card in sorted(set(p.cards)):
        if TRUCKS[card].ap <= s.ap_left:
            out.extend(cmd.PlayTruck(card, target) for target in (0, 1))
    if not s.trucking_token_used and p.trucking > 0 and (p.cards or s.deck):
        out.append(cmd.UseTruckingToken())
    if not acted:
        out.extend(cmd.DiscardForTiles(card) for card in sorted(set(p.cards)))
        if s.deck:
            for i in range(STACKS):
                for j in range(i, STACKS):
                    if (i == j and len(p.storage[i]) >= 2) or (
                        i != j and p.storage[i] and p.storage[j]
                    ):
                        out.append(cmd.TradeTiles([i, j]))
    if not (s.trucking_token_used and s.ap_spent < 1):
        out.append(cmd.EndTurn())
    return out
