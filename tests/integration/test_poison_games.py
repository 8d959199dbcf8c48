"""A game whose projection cannot be computed is a poison message (issue 35): the catch-up
logs it, counts it (``manifest_projection_poisoned_total``) and skips it, goes on repairing
the games after it, and ``/readyz`` reports it without declaring the instance unready.

The attack it stands for: an Empire Builder position with a 4,300-digit money was accepted,
and a ``borrow`` of 1 made it 4,301 digits, which JSON encoding refuses: the catch-up stopped
at that game on every pass, and ``/readyz`` answered 503 on every instance, after restarts too.
Positions now refuse such money (``tests/domain/test_position_bounds.py``); the row planted
here is what a forged or legacy row in the database is."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import msgspec
import pytest

from domain.empire_builder.board import MAP
from domain.platform.table import fold_stream
from projections.poison import POISONED
from projections.projector import Projector
from projections.store import MemoryStore
from service.application.bodies import CommandBody, CreateGame
from service.application.errors import RefusedByRules
from service.bootstrap import compose
from service.eventstore.keys import load_signer
from service.eventstore.migrate import migrate
from service.http.readiness import readiness

from .apihelp import pg, pool_of

pytestmark = pytest.mark.integration

GAMES = 6
POSITION = {"players": [{"cards": [0, 1, 2]}, {"cards": [3, 4, 5]}]}


def _poisoned_total() -> float:
    return POISONED._value.get()  # type: ignore[no-any-return]


async def _until(check: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        await asyncio.sleep(0.02)


async def _plant(store: Any, game_id: str, type: str, data: str) -> int:
    """Append an event row directly, as a forged or legacy row would be."""
    pool = pool_of(store)
    row = await pool.fetchrow("SELECT version, head FROM games WHERE id = $1::uuid", game_id)
    version, head = int(row["version"]) + 1, bytes(row["head"])
    forged = os.urandom(32)
    await pool.execute(
        "INSERT INTO events (game_id, version, type, data, seat, recorded_at, prev_hash, hash) "
        "VALUES ($1::uuid, $2, $3, $4::text::jsonb, 0, now(), $5, $6)",
        game_id, version, type, data, head, forged,
    )  # fmt: skip
    await pool.execute(
        "UPDATE games SET version = $2, head = $3 WHERE id = $1::uuid", game_id, version, forged
    )
    return version


async def _plant_poison(store: Any, game_id: str) -> int:
    """Two ``borrowed`` events of 4,300 digits each (the most a JSON number may have here):
    each reads and folds (every recorded event does), into money of 4,301 digits, which no
    JSON encoder writes — the issue's game, whose position's money had 4,300 digits."""
    borrowed = '{"type": "borrowed", "seat": 0, "amount": ' + "9" * 4300 + ', "owed": 0}'
    await _plant(store, game_id, "borrowed", borrowed)
    return await _plant(store, game_id, "borrowed", borrowed)


def test_a_poison_game_is_skipped_by_the_catch_up_and_readiness_stays_up(
    fresh_database: str,
) -> None:
    asyncio.run(_poison(fresh_database))


async def _poison(dsn: str) -> None:
    await migrate(dsn)
    async with pg(dsn, size=6) as store:
        signer = await load_signer(store)
        first = Projector(MemoryStore(), lambda g, after: store.read(g, after=after))
        manifest = compose(store, first, signer)
        ids = []
        for i in range(GAMES):
            created = await manifest.lobby.create(
                CreateGame(game="empire-builder", seats=2, players=[f"a{i}", f"b{i}"],
                           position=POSITION)
            )  # fmt: skip
            ids.append(created.id)
        ids.sort()  # the catch-up's order
        poison = ids[1]  # games after it must still be repaired
        poisoned_at = await _plant_poison(store, poison)

        # A new instance (or a restart, or a flushed Redis): every projection is to be built.
        projector = Projector(MemoryStore(), lambda g, after: store.read(g, after=after))
        instance = compose(store, projector, signer)
        before = _poisoned_total()
        repaired = await projector.repair(store.game_versions)
        assert repaired == GAMES - 1
        stored = dict(await store.game_versions(None, 100))
        have = await projector.store.versions(ids)
        assert {g: v for g, v in zip(ids, have, strict=True) if g != poison} == {
            g: stored[g] for g in ids if g != poison
        }
        assert have[ids.index(poison)] is None
        assert _poisoned_total() == before + 1
        assert poison in projector.poisoned
        assert projector.poisoned[poison][0] == poisoned_at
        assert "ValueError" in projector.poisoned[poison][1]

        # The worker's pass succeeds, so the instance stays ready; /readyz names the game.
        passes = 0

        async def listing(after: str | None, limit: int) -> list[tuple[str, int]]:
            nonlocal passes
            passes += after is None  # a pass starts with the first page
            return await store.game_versions(after, limit)

        stop = asyncio.Event()
        worker = asyncio.create_task(projector.run_worker(listing, 0.01, stop))
        try:
            before_passes = _poisoned_total()
            await _until(lambda: passes >= 3, 10, "three catch-up passes")
            assert projector.last_pass_error is None
            assert _poisoned_total() == before_passes  # the poisoned game is not folded again
        finally:
            stop.set()
            await worker
        ready, checks = await readiness(instance, max_lag=10)
        assert ready, checks
        assert checks["projections"]["ok"] is True
        assert checks["projections"]["poisoned"] == 1
        assert checks["projections"]["poisoned_games"] == [poison]

        # After a commit, a table that cannot be encoded is dropped from the pending writes
        # (it would hold the lag up for ever, and /readyz with it), not retried.
        table = fold_stream(None, await store.read(poison), poison)
        fresh = Projector(MemoryStore(), lambda g, after: store.read(g, after=after), backoff=0)
        fresh.schedule(table, lazy=True)
        await _until(lambda: poison in fresh.poisoned, 5, "the write path poisoned the game")
        await _until(lambda: fresh.lag() == 0.0, 5, "the poisoned write left the pending set")


def test_a_command_whose_game_could_not_be_encoded_is_refused_and_not_recorded(
    fresh_database: str,
) -> None:
    """The issue's second attack end to end, on a legacy stream (money of 4,300 digits, the
    most a JSON number may have here, planted as a pre-bounds position would have left it): a
    ``borrow`` of 1 would make 4,301 digits. It is refused, 422 ``command.unencodable``, and
    nothing is appended — so the game's document, picture and replays keep being served."""
    asyncio.run(_unencodable(fresh_database))


async def _unencodable(dsn: str) -> None:
    await migrate(dsn)
    async with pg(dsn, size=6) as store:
        signer = await load_signer(store)
        projector = Projector(MemoryStore(), lambda g, after: store.read(g, after=after))
        manifest = compose(store, projector, signer)
        train = MAP.cities["Chicago"].mileposts[0]
        position = {"players": [{"cards": [0, 1, 2], "train": train},
                                {"cards": [3, 4, 5], "train": train}],
                    "turn_number": 4}  # fmt: skip
        created = await manifest.lobby.create(
            CreateGame(game="empire-builder", seats=2, players=["a", "b"], position=position)
        )
        gid, token = created.id, str(created.seats[0].token)
        # Seat 0's money becomes 10**4300 - 1 (4,300 nines); its turn and seat 1's end.
        amount = str(10**4300 - 1 - 60)
        borrowed = f'{{"type": "borrowed", "seat": 0, "amount": {amount}, "owed": 0}}'
        await _plant(store, gid, "borrowed", borrowed)
        await _plant(store, gid, "turn_ended", '{"type": "turn_ended", "seat": 0}')
        version = await _plant(store, gid, "turn_ended", '{"type": "turn_ended", "seat": 1}')
        with pytest.raises(RefusedByRules) as refused:
            await manifest.play.command(
                gid, token, CommandBody(command={"type": "borrow", "amount": 1}), None
            )
        assert refused.value.code == "command.unencodable"
        row = await store.get_game(gid)
        assert row is not None and row.version == version  # nothing appended
        assert len(await store.read(gid)) == version
        document = msgspec.json.decode(await manifest.documents.game_document(gid, None))
        assert document["version"] == version  # still served
