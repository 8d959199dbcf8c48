"""Deciding: what a command causes. ``decide`` works on a :class:`~domain.kernel.Run` (a copy of
the state to which each event is applied as it is emitted), so later steps see earlier results
and folding the events gives exactly the state the decision saw."""

from __future__ import annotations

from itertools import combinations

from domain import kernel
from domain.kernel import Rng, RuleError

from . import commands as cmd
from . import events as ev
from .components import (
    DEAL,
    DOCKS,
    ROTATIONS,
    STACKS,
    STREET_MAX,
    TOKEN_ACTIONS,
    TOKEN_AP,
    TOKEN_CAP,
    TRACK_BONUS,
    TRACK_MAX,
    TRACK_POINTS,
    TRUCKS,
    Board,
    board_of,
    footprint,
    piece,
    side_of,
    xy,
)
from .evolve import evolve
from .lines import Layout, active_docks, layout
from .options import Options
from .position import Position, turn_order, validate
from .state import Placed, Player, Score, State, TruckInLane, stars

#: a decision of Curious Cargo in progress
Run = kernel.Run[State, ev.E]


def _draw(rng: Rng, pool: list[str], n: int) -> list[str]:
    """``n`` draws, each ``below(len)`` over what remains, sorted by id."""
    left = sorted(pool)
    out = []
    for _ in range(min(n, len(left))):
        out.append(left.pop(rng.below(len(left))))
    return out


# --- set-up ---------------------------------------------------------------------------------
def start(options: Options, seats: int, rng: Rng) -> list[ev.E]:
    if seats != 2:
        raise RuleError("rule.seats", "Curious Cargo is a game for 2 players")
    first = options.first_player if options.first_player is not None else rng.below(2)
    run = Run.opening(evolve, ev.GameStarted(options, first))
    for seat in (0, 1):
        run.emit(ev.CardsDealt(seat, _draw(rng, run.state.deck, DEAL), options.draft))
    if not options.draft:
        begin_phase(run, "construction", 1)
    return run.events


def start_from_position(position: Position, rng: Rng) -> list[ev.E]:
    validate(position)  # raises position.invalid; folding the event checks nothing
    run = Run.opening(evolve, ev.PositionLoaded(position))
    if position.at == "phase_start" and position.step == "turn":
        begin_phase(run, position.phase, position.round)
    return run.events


# --- flow -----------------------------------------------------------------------------------
def begin_phase(run: Run, phase: str, round_: int) -> None:
    order = turn_order(run.state.players, run.state.top)
    run.emit(ev.PhaseStarted(phase, round_, order))  # type: ignore[arg-type]
    if phase == "trucking":
        loading_pass(run)


def end_turn(run: Run, seat: int) -> None:
    run.emit(ev.TurnEnded(seat))
    if run.state.turn >= len(run.state.order) and run.state.step != "cleanup":
        finish_phase(run)


def finish_phase(run: Run) -> None:
    s = run.state
    for seat, p in enumerate(s.players):
        over = {
            "construction": max(0, p.construction - TOKEN_CAP),
            "trucking": max(0, p.trucking - TOKEN_CAP),
        }
        split = sum(p.splitters.values()) - TOKEN_CAP
        extra: dict[str, int] = {}
        for c in list(p.splitters):  # red, teal, purple: D26's order
            take = min(max(split, 0), p.splitters[c])
            if take:
                extra[c] = take
                split -= take
        if any(over.values()) or extra:
            run.emit(ev.TokensReturned(seat, over["construction"], over["trucking"], extra))
    triggers = end_triggers(s)
    if triggers:
        scores = [score(s, p) for p in s.players]
        run.emit(ev.GameEnded(scores, winners(s, scores), triggers))
    elif s.phase == "construction":
        begin_phase(run, "trucking", s.round)
    else:
        begin_phase(run, "construction", s.round + 1)


def end_triggers(s: State) -> list[str]:
    out = []
    if any(sum(p.shipped.values()) >= side_of(s.options).goal for p in s.players):
        out.append("shipped")
    if any(stars(p) for p in s.players):
        out.append("star")
    if not s.bag:
        out.append("bag_empty")
    if not s.deck:
        out.append("deck_empty")
    return out


def score(s: State, p: Player) -> Score:
    """Points by the game's shipping board side: a column is complete when every colour of the
    side has left it, and eligibility asks 2 shipped of every colour (purple too, D33)."""
    side = side_of(s.options)
    colours = side.colours
    shipping = sum(side.columns[p.shipped[c] - 1] for c in colours if p.shipped[c])
    bonus = side.column_bonus.get(min(p.shipped[c] for c in colours), 0)
    receiving = sum(side.receiving_slots[p.received[c] - 1] for c in colours if p.received[c])
    track = TRACK_POINTS[p.forklift]
    unused = p.construction + p.trucking + sum(p.splitters.values())
    eligible = all(p.shipped[c] >= 2 for c in colours)
    total = shipping + bonus + receiving + track + unused
    return Score(eligible, stars(p), shipping, bonus, receiving, track, unused, total)


def winners(s: State, scores: list[Score]) -> list[int]:
    eligible = [seat for seat, sc in enumerate(scores) if sc.eligible]
    if len(eligible) <= 1:
        return eligible
    best = max(
        eligible,
        key=lambda seat: (
            scores[seat].stars,
            scores[seat].total,
            s.players[seat].forklift,
            seat == s.top,
        ),
    )
    return [best]


# --- placement ------------------------------------------------------------------------------
class Placement:
    __slots__ = ("gears", "level", "scaffolds", "squares")

    def __init__(self, squares: list[str], level: int, scaffolds: dict[str, int], gears: int):
        self.squares = squares
        self.level = level
        self.scaffolds = scaffolds
        self.gears = gears


def check_placement(
    board: Board, lay: Layout, pid: str, at: str, rot: int, scaffolds: int
) -> Placement:
    pc = piece(pid)
    if pc is None:
        raise RuleError("rule.unknown_tile", f"there is no piece {pid!r}")
    if rot not in ROTATIONS:
        raise RuleError("rule.invalid_rotation", "rotations are 0, 90, 180 or 270", rot=rot)
    squares = footprint(pc, at, rot) if xy(at) is not None else [None]
    if None in squares:
        raise RuleError("rule.off_grid", f"{pid} at {at} {rot} leaves the grid", at=at, rot=rot)
    real = [sq for sq in squares if sq is not None]
    blocked = [sq for sq in real if sq in board.blocked]
    if blocked:
        raise RuleError(
            "rule.blocked_square", f"{blocked[0]} is a machine, wall or dock", square=blocked[0]
        )
    level, need = lay.scaffolds_for(real)
    if sum(need.values()) > scaffolds:
        raise RuleError(
            "rule.no_scaffolding",
            f"lying flat needs {sum(need.values())} scaffolds; {scaffolds} left",
            need=need,
        )
    gears = sum(1 for sq in real if sq in board.gears and lay.heights.get(sq, 0) == 0)
    return Placement(real, level, need, gears)


def place(run: Run, seat: int, pid: str, source: str, at: str, rot: int, actions: int) -> None:
    s = run.state
    p = s.players[seat]
    board = board_of(s.options)
    lay = layout(p.board).copy()
    where = check_placement(board, lay, pid, at, rot, p.scaffolds)
    gears = min(where.gears, s.supply.construction)
    lay.put(Placed(pid, at, rot))
    count = len(active_docks(board, lay.top))
    run.emit(
        ev.TilePlayed(
            seat,
            pid,
            source,
            at,
            rot,
            where.squares,
            where.level,
            where.scaffolds,
            gears,
            count,
            actions,
        )
    )
    if count > p.forklift:
        to = min(count, TRACK_MAX)
        bonuses: list[str] = []
        supply = {
            "construction": s.supply.construction,
            "trucking": s.supply.trucking,
            **s.supply.splitters,
        }
        for space in range(p.forklift + 1, to + 1):
            bonus = TRACK_BONUS.get(space)
            if bonus == "star":
                bonuses.append(bonus)
            elif bonus is not None and supply[bonus] > 0:
                supply[bonus] -= 1
                bonuses.append(bonus)
        on_top = s.players[1 - seat].forklift == to
        run.emit(ev.ForkliftMoved(seat, to, bonuses, on_top))


# --- trucks ---------------------------------------------------------------------------------
def drive(s: State, seat: int, card: str) -> list[ev.TruckMove]:
    """Where every truck ends up when ``card`` enters ``seat``'s shipping lane (r.16)."""
    lanes = {
        (who, lane): [(t.card, t.rear) for t in getattr(p, f"{lane}_lane")]
        for who, p in enumerate(s.players)
        for lane in ("shipping", "receiving")
    }
    moves: list[ev.TruckMove] = []
    arrivals = [(seat, "shipping", card)]
    while arrivals:
        who, lane, entering = arrivals.pop(0)
        trucks = sorted(lanes[(who, lane)], key=lambda t: t[1])
        placed = [(entering, 1)]
        moves.append(ev.TruckMove(entering, who, lane, 1))  # type: ignore[arg-type]
        front = TRUCKS[entering].length
        for c, rear in trucks:
            new = max(rear, front + 1)
            front = new + TRUCKS[c].length - 1
            placed.append((c, new))
            if new != rear and front <= STREET_MAX:
                moves.append(ev.TruckMove(c, who, lane, new))  # type: ignore[arg-type]
        staying = [(c, r) for c, r in placed if r + TRUCKS[c].length - 1 <= STREET_MAX]
        leaving = [c for c, r in reversed(placed) if r + TRUCKS[c].length - 1 > STREET_MAX]
        lanes[(who, lane)] = staying
        for c in leaving:
            if lane == "shipping":
                arrivals.append((1 - who, "receiving", c))
            else:
                moves.append(ev.TruckMove(c, who, "gone", 0))
    return moves


def _covering(lane: list[TruckInLane], street: int) -> tuple[TruckInLane, int] | None:
    for t in lane:
        slot = street - t.rear
        if 0 <= slot < TRUCKS[t.card].length:
            return t, slot
    return None


def load_candidates(s: State, seat: int) -> list[ev.Load]:
    p = s.players[seat]
    out: list[ev.Load] = []
    docks = active_docks(board_of(s.options), layout(p.board).top)
    columns = len(side_of(s.options).columns)
    for dock in DOCKS:
        colour = docks.get(dock.id)
        if dock.kind != "shipping" or colour is None or p.shipped.get(colour, columns) >= columns:
            continue
        hit = _covering(p.shipping_lane, dock.street)
        if hit is None:
            continue
        truck, slot = hit
        lay = TRUCKS[truck.card].layout
        if lay[slot] != "." or slot in truck.goods:
            continue
        if truck.goods.get(slot - 1) == colour or truck.goods.get(slot + 1) == colour:
            continue
        out.append(ev.Load(dock.street, truck.card, slot, colour))
    return out


def _fits(loads: tuple[ev.Load, ...], p: Player, columns: int) -> bool:
    for c in p.shipped:
        if sum(1 for x in loads if x.colour == c) > columns - p.shipped[c]:
            return False
    for a, b in combinations(loads, 2):
        if a.card == b.card and a.colour == b.colour and abs(a.slot - b.slot) == 1:
            return False
    return True


def load_options(s: State, seat: int) -> list[list[ev.Load]]:
    """Every non-extendable set of loads (D12), by dock order."""
    cands = load_candidates(s, seat)
    p = s.players[seat]
    columns = len(side_of(s.options).columns)
    valid = [
        combo
        for n in range(len(cands), -1, -1)
        for combo in combinations(cands, n)
        if _fits(combo, p, columns)
    ]
    sets = [set(v) for v in valid]
    out = [
        list(v) for v, vs in zip(valid, sets, strict=True) if not any(vs < other for other in sets)
    ]
    return sorted(out, key=lambda v: [x.dock for x in v])


def loading_pass(run: Run) -> None:
    """D11: unload every receiving lane, then load every shipping lane; ties wait for a choice."""
    s = run.state
    board = board_of(s.options)
    slots = len(side_of(s.options).receiving_slots)
    for seat, p in enumerate(s.players):
        docks = active_docks(board, layout(p.board).top)
        unloads: list[ev.Load] = []
        kept: list[bool] = []
        have = dict(p.received)
        for dock in DOCKS:
            colour = docks.get(dock.id)
            if dock.kind != "receiving" or colour is None:
                continue
            hit = _covering(p.receiving_lane, dock.street)
            if hit is None or hit[0].goods.get(hit[1]) != colour:
                continue
            unloads.append(ev.Load(dock.street, hit[0].card, hit[1], colour))
            kept.append(have[colour] < slots)
            have[colour] += 1
        if unloads:
            run.emit(ev.GoodsUnloaded(seat, unloads, kept))
    pending: list[int] = []
    for seat in s.order:
        options = load_options(s, seat)
        if len(options) > 1:
            pending.append(seat)
        elif options and options[0]:
            run.emit(ev.GoodsLoaded(seat, options[0]))
    if pending:
        run.emit(ev.LoadsPending(pending))


# --- deciding -------------------------------------------------------------------------------
def decide(state: State, seat: int, command: cmd.Command, rng: Rng) -> list[ev.E]:
    """``command`` by ``seat``, a seat to act (the kernel checked that)."""
    run = Run(evolve, state)
    if isinstance(command, cmd.KeepCard):
        _keep(run, seat, command)
    elif isinstance(command, cmd.ChooseLoads):
        _choose(run, seat, command)
    elif isinstance(command, cmd.Store):
        _store(run, seat, command)
    elif state.step != "turn" or state.pending:
        raise RuleError("rule.wrong_step", f"{command.__struct_config__.tag} is not allowed now")
    elif state.phase == "construction":
        _construction(run, seat, command, rng)
    else:
        _trucking(run, seat, command, rng)
    return run.events


def _keep(run: Run, seat: int, c: cmd.KeepCard) -> None:
    s = run.state
    if s.step != "draft":
        raise RuleError("rule.wrong_step", "cards are kept in the draft only")
    p = s.players[seat]
    if c.card not in p.dealt:
        raise RuleError("rule.card_not_held", f"{c.card} is not among your dealt cards")
    run.emit(ev.CardKept(seat, c.card))
    if all(pl.kept is not None for pl in s.players):
        passed = [[x for x in pl.dealt if x != pl.kept] for pl in s.players]
        run.emit(ev.CardsPassed(passed))
        begin_phase(run, "construction", 1)


def _choose(run: Run, seat: int, c: cmd.ChooseLoads) -> None:
    s = run.state
    if not s.pending or s.pending[0] != seat:
        raise RuleError("rule.wrong_step", "there is no load choice for you to make")
    for option in load_options(s, seat):
        if sorted(c.docks) == [x.dock for x in option] and len(set(c.docks)) == len(c.docks):
            run.emit(ev.GoodsLoaded(seat, option))
            return
    raise RuleError(
        "rule.invalid_load_choice",
        "choose one of the maximal loads",
        options=[[x.dock for x in o] for o in load_options(s, seat)],
    )


def _store(run: Run, seat: int, c: cmd.Store) -> None:
    s = run.state
    if s.step != "cleanup":
        raise RuleError("rule.wrong_step", "tiles are stored in a phase's cleanup")
    p = s.players[seat]
    tiles = [x.tile for x in c.placements]
    if sorted(tiles) != sorted(p.hand) or any(not 0 <= x.stack < STACKS for x in c.placements):
        raise RuleError(
            "rule.invalid_store", "store every tile in hand once, on stacks 0–2", hand=p.hand
        )
    run.emit(ev.TilesStored(seat, tiles, [x.stack for x in c.placements]))
    if not any(pl.hand for pl in s.players):
        finish_phase(run)


def _construction(run: Run, seat: int, c: cmd.Command, rng: Rng) -> None:
    s = run.state
    p = s.players[seat]
    if isinstance(c, cmd.DrawTile):
        _need_action(s)
        if not s.bag:
            raise RuleError("rule.bag_empty", "the bag is empty")
        run.emit(ev.TileDrawn(seat, _draw(rng, s.bag, 1), 1))
    elif isinstance(c, cmd.PlayTile):
        _need_action(s)
        source = tile_source(p, c.tile)
        if source is None:
            raise RuleError("rule.tile_not_held", f"{c.tile} is not in your hand or on a stack top")
        place(run, seat, c.tile, source, c.at, c.rot, 1)
    elif isinstance(c, cmd.UseConstructionToken):
        _need_token(s, p.construction)
        run.emit(ev.TokenUsed(seat, "construction", TOKEN_ACTIONS))
    elif isinstance(c, cmd.PlaceSplitter):
        _need_token(s, p.construction)
        if p.splitters.get(c.colour, 0) < 1:
            raise RuleError("rule.no_splitter", f"you hold no {c.colour} splitter")
        pid = f"splitter-{c.colour}"
        check_placement(board_of(s.options), layout(p.board), pid, c.at, c.rot, p.scaffolds)
        run.emit(ev.TokenUsed(seat, "construction", 0))
        place(run, seat, pid, "splitter", c.at, c.rot, 0)
    elif isinstance(c, cmd.EndTurn):
        end_turn(run, seat)
    else:
        raise RuleError("rule.wrong_phase", "that is a trucking command")


def tile_source(p: Player, tile: str) -> str | None:
    if tile in p.hand:
        return "hand"
    for i, stack in enumerate(p.storage):
        if stack and stack[-1] == tile:
            return str(i)
    return None


def _need_action(s: State) -> None:
    if s.actions_left < 1:
        raise RuleError("rule.no_actions", "no actions left this turn")


def _need_token(s: State, held: int) -> None:
    if s.token_used:
        raise RuleError("rule.token_already_used", "one construction token a turn")
    if held < 1:
        raise RuleError("rule.no_token", "you hold no construction token")


def _trucking(run: Run, seat: int, c: cmd.Command, rng: Rng) -> None:
    s = run.state
    p = s.players[seat]
    acted = s.ap_spent > 0 or s.trucking_token_used
    if isinstance(c, cmd.PlayTruck):
        if c.card not in p.cards:
            raise RuleError("rule.card_not_held", f"{c.card} is not in your hand")
        if c.target not in (0, 1):
            raise RuleError("rule.invalid_target", "the target is seat 0 or 1")
        cost = TRUCKS[c.card].ap
        if cost > s.ap_left:
            raise RuleError("rule.not_enough_ap", f"{c.card} costs {cost} AP; {s.ap_left} left")
        run.emit(ev.TruckPlayed(seat, c.card, c.target, cost, drive(s, c.target, c.card)))
        loading_pass(run)
    elif isinstance(c, cmd.UseTruckingToken):
        if s.trucking_token_used:
            raise RuleError("rule.token_already_used", "one trucking token a turn")
        if p.trucking < 1:
            raise RuleError("rule.no_token", "you hold no trucking token")
        if not p.cards and not s.deck:
            raise RuleError("rule.no_truck_card", "no card in hand or deck to spend the AP on")
        run.emit(ev.TokenUsed(seat, "trucking", TOKEN_AP))
        if s.deck:
            run.emit(ev.CardsDrawn(seat, _draw(rng, s.deck, 1)))
    elif isinstance(c, cmd.DiscardForTiles):
        if acted:
            raise RuleError("rule.action_taken", "you already chose to play trucks this turn")
        if c.card not in p.cards:
            raise RuleError("rule.card_not_held", f"{c.card} is not in your hand")
        run.emit(ev.CardDiscarded(seat, c.card))
        tiles = _draw(rng, s.bag, TRUCKS[c.card].tiles)
        if tiles:
            run.emit(ev.TileDrawn(seat, tiles, 0))
        end_turn(run, seat)
    elif isinstance(c, cmd.TradeTiles):
        if acted:
            raise RuleError("rule.action_taken", "you already chose to play trucks this turn")
        if len(c.stacks) != 2 or any(not 0 <= i < STACKS for i in c.stacks):
            raise RuleError("rule.invalid_stacks", "name two stacks (0–2), or one stack twice")
        i, j = c.stacks
        if (i == j and len(p.storage[i]) < 2) or (i != j and not (p.storage[i] and p.storage[j])):
            raise RuleError("rule.stack_empty", "those stacks do not hold two tiles to discard")
        if not s.deck:
            raise RuleError("rule.deck_empty", "the truck deck is empty")
        tiles = [p.storage[i][-1], p.storage[j][-2 if i == j else -1]]
        run.emit(ev.TilesTraded(seat, [i, j], tiles))
        run.emit(ev.CardsDrawn(seat, _draw(rng, s.deck, 1)))
        end_turn(run, seat)
    elif isinstance(c, cmd.EndTurn):
        if s.trucking_token_used and s.ap_spent < 1:
            raise RuleError("rule.must_spend_ap", "a trucking token's turn spends at least 1 AP")
        end_turn(run, seat)
    else:
        raise RuleError("rule.wrong_phase", "that is a construction command")
