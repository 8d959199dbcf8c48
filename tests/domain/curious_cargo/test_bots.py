"""Random bots play Curious Cargo to the end; perft-style checks of ``legal`` on the positions
they reach.

A bot game is ≈500 commands, every one listing every placement; 200 games take ≈16 s of CPU
(70 s wall on the shared machine), so the default run plays 30 games and the slow suite 200;
1,000 games were run once by hand with ``bot_games(1000, "marathon")``, without error
(docs/rules/curious-cargo.md, "Measured")."""

from __future__ import annotations

import hashlib
from itertools import product
from typing import Any

import pytest

from domain.curious_cargo import CURIOUS_CARGO as G
from domain.curious_cargo import commands as cmd
from domain.curious_cargo.components import CARD_IDS, COLOURS, ROTATIONS, SQUARES, STACKS
from domain.curious_cargo.options import Options
from domain.curious_cargo.rules import score
from domain.curious_cargo.state import State
from domain.kernel import LocalGame, Rng, RuleError, play_random_game


def bot_games(count: int, tag: str) -> None:
    for n in range(count):
        seed = hashlib.sha256(f"curious-cargo/bots/{tag}/{n}".encode()).digest()
        options = Options(first_player=[0, 1, None][n % 3], draft=n % 4 != 0)
        table, outcome = play_random_game(G, seed, 2, options)
        s: State = table.state
        assert s.phase == "finished" and G.to_act(s) == []
        assert outcome.scores == [score(s, p).total for p in s.players]
        eligible = [seat for seat in (0, 1) if score(s, s.players[seat]).eligible]
        assert set(outcome.winners) <= set(eligible) and len(outcome.winners) <= 1
        assert bool(outcome.winners) == bool(eligible)
        assert G.fold(table.events) == s


def test_bot_games_run_to_a_result() -> None:
    bot_games(30, "default")


@pytest.mark.slow
def test_many_bot_games_run_to_a_result() -> None:
    bot_games(200, "slow")


def every_command(s: State, seat: int) -> list[Any]:
    """Every command shape a seat could send, legal or not (the brute-force side of perft)."""
    p = s.players[seat]
    tiles = [*p.hand, *(t for stack in p.storage for t in stack)]
    out: list[Any] = [cmd.DrawTile(), cmd.UseConstructionToken(), cmd.EndTurn(),
                      cmd.UseTruckingToken()]
    out += [cmd.PlayTile(t, at, rot) for t, at, rot in product(tiles, SQUARES, ROTATIONS)]
    out += [cmd.PlaceSplitter(c, at, rot) for c, at, rot in product(COLOURS, SQUARES, ROTATIONS)]
    out += [cmd.KeepCard(c) for c in CARD_IDS] + [cmd.DiscardForTiles(c) for c in CARD_IDS]
    out += [cmd.PlayTruck(c, target) for c in CARD_IDS for target in (0, 1)]
    out += [cmd.TradeTiles([i, j]) for i in range(STACKS) for j in range(i, STACKS)]
    docks = [2, 3, 5, 6, 8, 9]
    out += [cmd.ChooseLoads([d for k, d in enumerate(docks) if mask >> k & 1])
            for mask in range(64)]
    return out


@pytest.mark.parametrize("n", range(8))
def test_perft_legal_is_exactly_the_accepted_commands(n: int) -> None:
    seed = hashlib.sha256(f"curious-cargo/perft/{n}".encode()).digest()
    table = LocalGame.new(G, seed, 2, Options())
    bot = Rng(seed, 0)
    stop = 20 + 25 * n
    checked = 0
    for step in range(stop):
        waiting = G.to_act(table.state)
        if not waiting:
            break
        if step % 8 == 0 or step == stop - 1:
            for who in (0, 1):
                legal = G.legal(table.state, who)
                accepted = []
                for command in every_command(table.state, who):
                    try:
                        G.decide(table.state, who, command, table.rng())
                    except RuleError:
                        continue
                    accepted.append(command)
                stores = [c for c in legal if isinstance(c, cmd.Store)]
                assert sorted(map(repr, legal)) == sorted(map(repr, [*accepted, *stores]))
                assert len(legal) == len(set(map(repr, legal)))
                checked += 1
        who = waiting[bot.below(len(waiting))]
        options = G.legal(table.state, who)
        table.submit(who, options[bot.below(len(options))])
    assert checked
