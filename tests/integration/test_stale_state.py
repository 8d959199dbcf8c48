"""Nothing is answered or decided on a stale state: a query answers on the stored state, not
on an older table another instance's move left in this one's cache, and a command whose game
moves on under every decision ends in 503 ``version.contention`` with nothing recorded."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest

from domain.kernel import Rng, RuleError
from projections.projector import Projector
from projections.store import MemoryStore
from service.application.bodies import CommandBody, CreateGame
from service.application.errors import ApplicationError
from service.application.gameplay import Manifest
from service.application.play import STALE
from service.application.queries import QueryBody
from service.bootstrap import compose
from service.eventstore.keys import load_signer
from service.eventstore.migrate import migrate
from service.http.problemmap import problem_of

from .apihelp import GAME, pg, pool_of

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]


def test_a_query_answers_on_the_stored_state_not_a_stale_cached_one(fresh_database: str) -> None:
    """Two instances serve one game. Instance A answers a query (and keeps the table), B
    records a move; A's next answer must be on the state after that move — its version the
    stored one — not on the table A had cached (a view older than an acknowledged move)."""

    async def run() -> None:
        await migrate(fresh_database)
        async with pg(fresh_database) as events:
            signer = await load_signer(events)

            def instance() -> Manifest:
                reader = lambda g, after: events.read(g, after=after)  # noqa: E731
                return compose(events, Projector(MemoryStore(), reader), signer)

            a, b = instance(), instance()
            created = await a.lobby.create(
                CreateGame(game="empire-builder", seats=2, players=["ann", "bob"])
            )
            me = created.to_act[0]
            token = created.seats[me].token
            plan = QueryBody(query={"type": "plan", "to": "Denver"})
            before = await a.queries.query(created.id, token, plan)
            assert before.version == created.version
            path = before.answer["path"]
            problem = before.answer["problem"]
            head = path if problem is None else path[: problem["step"]]
            survey = await b.queries.query(
                created.id, token, QueryBody({"type": "survey", "path": head})
            )
            build = {"type": "build", "path": head, "cost": survey.answer["cost"]}
            moved = await b.play.command(created.id, token, CommandBody(build), None)
            assert moved.version > created.version
            after = await a.queries.query(created.id, token, plan)
            assert after.version == moved.version

    asyncio.run(run())


def test_a_command_that_loses_every_race_is_a_503_with_retry_after(fresh_database: str) -> None:
    """A command re-decided because its game moved on, every time, ends in 503
    ``version.contention`` — with ``Retry-After``, as every 503 (it had none), and nothing
    recorded. The races are forced: each decision finds the game moved (the state it read is
    dropped and read again from PostgreSQL, as after a real lost race)."""

    tries = 0

    async def racing(*args: object, **kwargs: object) -> Any:
        nonlocal tries
        tries += 1
        return STALE

    async def run() -> None:
        await migrate(fresh_database)
        async with pg(fresh_database) as events:
            reader = lambda g, after: events.read(g, after=after)  # noqa: E731
            manifest = compose(
                events, Projector(MemoryStore(), reader), await load_signer(events)
            )
            manifest.play._decide_and_append = racing  # type: ignore[method-assign]
            created = await manifest.lobby.create(
                CreateGame(game=GAME, seats=2, players=["a", "b"])
            )
            token = created.seats[created.to_act[0]].token
            with pytest.raises(ApplicationError) as caught:
                await manifest.play.command(
                    created.id, token, CommandBody({"type": "end_turn"}), "k1"
                )
            problem = problem_of(caught.value)
            assert (problem.status, problem.code) == (503, "version.contention")
            assert problem.headers["Retry-After"] == str(manifest.faults.retry_after)
            assert tries > 1  # re-decided, not refused at once
            row = await events.get_game(created.id)
            assert row is not None and row.version == created.version  # nothing recorded

    asyncio.run(run())


def test_a_command_out_of_turn_on_a_stale_cache_is_decided_again_and_accepted(
    fresh_database: str,
) -> None:
    """Two instances serve one game. Instance A holds the table at version N, where seat X is
    to act; B records X's move, after which it is seat Y's turn. Y's command sent to A would be
    refused out of turn on A's table — but a refusal is only answered on the stored state: A
    sees its table is not the stored one, decides again on the stored state, and accepts.
    Nothing is recorded as refused."""

    async def run() -> None:
        await migrate(fresh_database)
        async with pg(fresh_database) as events:
            signer = await load_signer(events)

            def instance() -> Manifest:
                reader = lambda g, after: events.read(g, after=after)  # noqa: E731
                return compose(events, Projector(MemoryStore(), reader), signer)

            a, b = instance(), instance()
            created = await a.lobby.create(CreateGame(game=GAME, seats=2, players=["x", "y"]))
            gid = created.id
            tokens = [str(s.token) for s in created.seats]
            for _ in range(200):  # until one of B's moves passes the turn
                a.tables.forget(gid)
                _, cached = await a.tables.current(gid)  # A's table: the stored state now
                rules, state = cached.rules, cached.state
                assert state is not None
                mover = rules.to_act(state)[0]
                command = msgspec.to_builtins(rules.legal(state, mover)[-1])
                await b.play.command(gid, tokens[mover], CommandBody(command), None)
                _, now = await b.tables.current(gid)
                assert now.state is not None and now.status == "active"
                nxt = rules.to_act(now.state)[0]
                if nxt != mover:
                    break
            else:
                pytest.fail("the turn never passed")
            held = a.tables.latest(gid)
            assert held is not None and held[1].version == cached.version < now.version
            legal = msgspec.to_builtins(rules.legal(now.state, nxt)[0])
            with pytest.raises(RuleError):  # on A's table, out of turn
                rules.decide(state, nxt, rules.decode_command(legal), Rng(bytes(32), 1))
            answer = await a.play.command(gid, tokens[nxt], CommandBody(legal), "after-the-move")
            assert answer.version > now.version
            refused = await pool_of(events).fetchval(
                "SELECT count(*) FROM commands WHERE game_id = $1::uuid AND outcome <> 'accepted'",
                gid,
            )
            assert refused == 0

    asyncio.run(run())
