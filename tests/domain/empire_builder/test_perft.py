"""Perft-style checks of ``legal`` on random reachable positions: every command it lists is
accepted, and random single steps it does not list are refused (so ``legal`` lists every next
step of each kind)."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from domain.empire_builder import EMPIRE_BUILDER
from domain.empire_builder import commands as cmd
from domain.empire_builder.board import LOADS, MAP
from domain.empire_builder.options import Options
from domain.kernel import LocalGame, Rng, RuleError

AnyGame = LocalGame[Any, Any, Any, Any, Any]


def positions(count: int) -> list[Any]:
    """``count`` states reached by seeded random play, 2 to 6 players, sampled along games."""
    out: list[Any] = []
    game = 0
    while len(out) < count:
        seats = 2 + game % 5
        seed = game.to_bytes(4, "big") * 8
        table: AnyGame = LocalGame.new(EMPIRE_BUILDER, seed, seats, Options(turn_limit=8))
        bot = Rng(seed, 0)
        step = 0
        while EMPIRE_BUILDER.to_act(table.state) and len(out) < count:
            s = EMPIRE_BUILDER.to_act(table.state)[0]  # a lost load's chooser may wait too
            if step % 7 == 3:
                out.append(table.state)
            table.submit(s, bot.choice(EMPIRE_BUILDER.legal(table.state, s)))
            step += 1
        game += 1
    return out


def unlisted(state: Any, s: int, listed: list[Any], rnd: random.Random) -> list[Any]:
    """Random single steps of every kind that ``legal`` did not list."""
    p = state.players[s]
    near = [m for m in range(MAP.size) if MAP.adjacent[m]]
    here = p.train if p.train is not None else rnd.choice(near)
    tries: list[Any] = []
    for _ in range(12):
        a = rnd.choice(near)
        tries.append(cmd.Build([a, rnd.choice(sorted(MAP.adjacent[a]))]))
    tries += [cmd.Build([here, n]) for n in MAP.adjacent[here]]
    tries += [cmd.Move([n]) for n in [*MAP.adjacent[here], *MAP.inside[here]]]
    tries += [cmd.Move([rnd.randrange(MAP.size)])]
    tries += [cmd.PickUp(x) for x in rnd.sample(sorted(LOADS), 4)]
    tries += [cmd.Dump(x) for x in rnd.sample(sorted(LOADS), 2)]
    tries += [cmd.Deliver(rnd.randrange(3), rnd.randrange(3)) for _ in range(3)]
    tries += [cmd.Upgrade("speed"), cmd.Upgrade("capacity"), cmd.TradeIn(), cmd.EndTurn()]
    tries += [cmd.PlaceTrain(rnd.choice(sorted(MAP.cities)))]
    # a listed build carries its cost; the same path without a cost is the same step
    encoded = {msgspec.json.encode(msgspec.structs.replace(c, cost=None)
                                   if isinstance(c, cmd.Build) else c) for c in listed}
    return [c for c in tries if msgspec.json.encode(c) not in encoded]


def check(states: list[Any]) -> int:
    rnd = random.Random(7)
    refused = 0
    for n, state in enumerate(states):
        s = EMPIRE_BUILDER.to_act(state)[0]  # a lost load's chooser may wait too
        listed = EMPIRE_BUILDER.legal(state, s)
        assert listed
        for c in listed:
            EMPIRE_BUILDER.decide(state, s, c, Rng(bytes(32), n + 1))
        for c in unlisted(state, s, listed, rnd):
            with pytest.raises(RuleError):
                EMPIRE_BUILDER.decide(state, s, c, Rng(bytes(32), n + 1))
            refused += 1
        for other in range(state.seats):
            if other != s:
                assert EMPIRE_BUILDER.legal(state, other) == []
    return refused


def test_legal_on_random_reachable_positions() -> None:
    assert check(positions(120)) > 1000


@pytest.mark.slow
def test_legal_on_a_thousand_random_reachable_positions() -> None:
    check(positions(1000))
