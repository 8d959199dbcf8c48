"""Turn clocks in the service (issue 31): deadlines stored with the game in PostgreSQL and
fired once — by another instance when the one holding a deadline dies; a move at the deadline
against the expiry (exactly one is appended); a move after the deadline refused; a game in
which one seat stops answering still ends (the bot sits in); the audit passes on all of it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest

from domain.platform.clocks import ClockTerms
from domain.registry import get_game
from ledger.audit import verify_export
from ledger.exportfile import decode_export, encode_export
from projections.projector import Projector
from projections.store import MemoryStore
from service.application.bodies import CommandBody, CreateGame
from service.application.clocks import ClockFirer
from service.application.errors import ApplicationError, Conflict
from service.application.gameplay import Manifest
from service.application.history import History
from service.bootstrap import compose
from service.eventstore.deadlines import Claim
from service.eventstore.keys import load_signer
from service.eventstore.migrate import migrate
from service.eventstore.store import EventStore

from .apihelp import pg, pool_of

pytestmark = pytest.mark.integration

GAME = "cargo-empire"


@contextlib.asynccontextmanager
async def instance(dsn: str) -> AsyncIterator[Manifest]:
    """One service instance: its own pool, caches and projections."""
    async with pg(dsn) as store:
        projector = Projector(MemoryStore(), lambda g, after: store.read(g, after=after))
        yield compose(store, projector, await load_signer(store))


async def create(manifest: Manifest, clock: dict[str, Any]) -> Any:
    terms = msgspec.convert(clock, ClockTerms)
    return await manifest.lobby.create(
        CreateGame(game=GAME, seats=2, players=["ann", "bob"], clock=terms)
    )


async def events(store: EventStore, gid: str) -> list[Any]:
    return await store.read(gid, after=0)


async def until(condition: Any, what: str, timeout: float = 60.0) -> None:
    """Wait for ``condition()`` (awaited) to be true, checking every 20 ms, at most
    ``timeout`` seconds (a generous bound, not a timing assertion)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not await condition():
        if loop.time() > end:
            raise AssertionError(f"gave up waiting for {what}")
        await asyncio.sleep(0.02)


async def audited(manifest: Manifest, gid: str) -> dict[str, Any]:
    report = await History.of(manifest).audit(gid)
    return report


def test_a_clock_is_stored_with_the_game_and_bad_terms_are_refused(fresh_database: str) -> None:
    async def run() -> None:
        await migrate(fresh_database)
        async with instance(fresh_database) as m:
            with pytest.raises(ApplicationError) as caught:
                await create(m, {"kind": "turn", "seconds": 0})
            assert caught.value.code == "clock.invalid"
            with pytest.raises(ApplicationError) as caught:
                await create(m, {"kind": "correspondence", "days": 2, "seconds": 5})
            assert caught.value.code == "clock.invalid"
            created = await create(m, {"kind": "correspondence", "days": 2})
            stored = await events(m.store, created.id)
            # the operator's rest rule is kept in the terms (MANIFEST_CLOCK_REST_AFTER)
            terms = {"kind": "correspondence", "days": 2, "rest_after": 50}
            assert stored[0].data["clock"] == terms
            assert stored[-1].type == "clock.set"
            doc = msgspec.json.decode(await m.documents.game_document(created.id, None))
            seat = created.to_act[0]
            clock = doc["clock"]["seats"][seat]
            assert clock["running"] is True
            deadline = await m.store.pending_deadline(created.id)
            assert deadline is not None and deadline.version == stored[-1].version
            assert deadline.due_at.isoformat().replace("+00:00", "Z") == clock["deadline"]
            # a game without a clock: no clock part, no deadline, no clock event
            plain = await m.lobby.create(CreateGame(game=GAME, seats=2, players=["a", "b"]))
            doc = msgspec.json.decode(await m.documents.game_document(plain.id, None))
            assert "clock" not in doc
            assert await m.store.pending_deadline(plain.id) is None
            assert not any(e.type.startswith("clock.") for e in await events(m.store, plain.id))

    asyncio.run(run())


def test_the_instance_holding_a_deadline_dies_and_another_fires_it_once(
    fresh_database: str,
) -> None:
    async def run() -> None:
        await migrate(fresh_database)
        async with instance(fresh_database) as a:
            created = await create(a, {"kind": "turn", "seconds": 1})
            gid = created.id
            seat = created.to_act[0]
            # Instance A claims the deadline once it is due (the claim a firer makes) and dies
            # before firing it: its pool closes with the claim held, nothing released.
            claims: list[Claim] = []

            async def claimed() -> bool:
                now = datetime.now(UTC)
                claims.extend(
                    await a.store.claim_deadlines(now, now + timedelta(seconds=4), "A", 8)
                )
                return bool(claims)

            await until(claimed, "the deadline to be due")
            assert [c.game_id for c in claims] == [gid]
            # Another live instance cannot take it while A's lease lasts.
            now = datetime.now(UTC)
            assert await a.store.claim_deadlines(now, now, "B", 8) == []
            held = await pool_of(a.store).fetchrow(
                "SELECT claimed_by FROM deadlines WHERE game_id = $1::uuid", gid
            )
            assert held["claimed_by"] == "A"
        # Every instance restarted: a new one (new pool, empty caches) fires it, once the
        # dead instance's lease has lapsed.
        async with instance(fresh_database) as b:
            other = ClockFirer(b.clocks, tick=0.02, lease=5.0, owner="B")
            stop = asyncio.Event()
            runner = asyncio.create_task(other.run(stop))

            async def expired() -> bool:
                return any(e.type == "clock.expired" for e in await events(b.store, gid))

            await until(expired, "the expiry")
            stop.set()
            await runner
            stored = await events(b.store, gid)
            expiries = [e for e in stored if e.type == "clock.expired"]
            assert len(expiries) == 1
            assert expiries[0].data["seat"] == seat
            assert expiries[0].recorded_at >= datetime.fromisoformat(expiries[0].data["deadline"])
            # the same deadline never fires again: firing now finds nothing due for it
            again = ClockFirer(b.clocks, owner="C")
            await again.fire(gid)
            later = [e for e in await events(b.store, gid) if e.type == "clock.expired"]
            assert [e.data["deadline"] for e in later].count(expiries[0].data["deadline"]) == 1
            report = await audited(b, gid)
            assert report["problems"] == [] and report["adjudication"]["ok"] is True

    asyncio.run(run())


def test_a_move_at_the_deadline_and_the_expiry_compete_and_exactly_one_wins(
    fresh_database: str,
) -> None:
    async def run() -> None:
        await migrate(fresh_database)
        async with instance(fresh_database) as m:
            moves = expiries = 0
            for _ in range(8):
                created = await create(m, {"kind": "turn", "seconds": 600})
                gid = created.id
                seat = created.to_act[0]
                token = created.seats[seat].token
                assert token is not None
                before = await events(m.store, gid)
                version = before[-1].version
                deadline = datetime.fromisoformat(before[-1].data["seats"][seat]["deadline"])
                # The firer's clock reads the deadline itself; the move is sent now, in time.
                firer = ClockFirer(m.clocks, clock=lambda d=deadline: d, owner="race")
                _, table = await m.tables.current(gid)
                command = msgspec.to_builtins(get_game(GAME).expiry_command(table.state, seat))
                move, fired = await asyncio.gather(
                    m.play.command(
                        gid,
                        token,
                        CommandBody(command=command, expected_version=version),
                        f"race-{gid}",
                    ),
                    firer.fire(gid),
                    return_exceptions=True,
                )
                after = (await events(m.store, gid))[version:]
                won_move = not isinstance(move, BaseException)
                won_expiry = bool(after) and after[0].type == "clock.expired"
                assert won_move != won_expiry, (move, fired, [e.type for e in after])
                if won_move:
                    moves += 1
                    assert fired is False
                    assert after[0].type != "clock.expired"
                    assert not any(e.type == "clock.expired" for e in after)
                else:
                    expiries += 1
                    assert fired is True
                    assert isinstance(move, Conflict) and move.code == "version.conflict"
                report = await audited(m, gid)
                assert report["problems"] == []
            assert moves + expiries == 8
            print(f"race: the move won {moves}, the expiry {expiries}")

    asyncio.run(run())


def test_a_move_after_the_deadline_is_refused_and_the_expiry_recorded(
    fresh_database: str,
) -> None:
    async def run() -> None:
        await migrate(fresh_database)
        async with instance(fresh_database) as m:
            created = await create(m, {"kind": "turn", "seconds": 1})
            gid = created.id
            seat = created.to_act[0]
            token = created.seats[seat].token
            assert token is not None
            stored = await events(m.store, gid)
            deadline = datetime.fromisoformat(stored[-1].data["seats"][seat]["deadline"])

            async def passed() -> bool:
                return datetime.now(UTC) > deadline

            await until(passed, "the deadline")
            _, table = await m.tables.current(gid)
            command = msgspec.to_builtins(get_game(GAME).expiry_command(table.state, seat))
            with pytest.raises(ApplicationError) as caught:
                await m.play.command(gid, token, CommandBody(command=command), "late")
            assert isinstance(caught.value, Conflict) and caught.value.code == "clock.expired"
            assert await ClockFirer(m.clocks).fire(gid) is True
            types = [e.type for e in await events(m.store, gid)]
            assert types.count("clock.expired") == 1
            assert (await audited(m, gid))["problems"] == []

    asyncio.run(run())


def test_one_seat_stops_answering_and_the_game_still_ends(fresh_database: str) -> None:
    async def run() -> None:
        await migrate(fresh_database)
        async with instance(fresh_database) as m:
            created = await create(m, {"kind": "turn", "seconds": 1, "sit_in_after": 1})
            gid = created.id
            silent = created.to_act[0]
            player = 1 - silent
            token = created.seats[player].token
            assert token is not None
            firer = ClockFirer(m.clocks, tick=0.02, owner="table")
            stop = asyncio.Event()
            runner = asyncio.create_task(firer.run(stop))
            timeout = get_game(GAME)
            try:
                for _ in range(2000):
                    _, table = await m.tables.current(gid)
                    if table.status == "finished":
                        break
                    if player in table.rules.to_act(table.state):
                        bot = timeout.sitting_in(player, table.version + 1)
                        command = msgspec.to_builtins(bot.choose(table.state, player))
                        try:
                            await m.play.command(
                                gid,
                                token,
                                CommandBody(command=command, expected_version=table.version),
                                None,
                            )
                        except Conflict as problem:  # the silent seat's bot moved first
                            assert problem.code == "version.conflict"
                        continue
                    version = table.version

                    async def moved(v: int = version) -> bool:
                        return (await m.tables.current(gid))[1].version > v

                    await until(moved, "the silent seat's expiry or its bot's move")
            finally:
                stop.set()
                await runner
            _, table = await m.tables.current(gid)
            assert table.status == "finished"
            stored = await events(m.store, gid)
            types = [e.type for e in stored]
            assert types.count("clock.expired") == 1
            assert "clock.sat_in" in types and "clock.bot" in types
            assert await m.store.pending_deadline(gid) is None  # nothing left to fire
            report = await audited(m, gid)
            assert report["problems"] == []
            assert report["adjudication"]["ok"] is True
            # the export, verified offline (no database), re-adjudicates the clock too
            exported = decode_export(encode_export(await History.of(m).export(gid)))
            offline = verify_export(exported)
            assert offline["problems"] == [] and offline["adjudication"]["ok"] is True

    asyncio.run(run())


def test_deadlines_lateness_is_bounded_by_the_tick() -> None:
    """The documented bound: a due deadline is claimed within one tick (plus the lease if its
    holder died); the defaults are those the README lists."""
    from service.settings import Settings

    s = Settings()
    assert (s.clock_tick, s.clock_lease, s.clock_batch) == (1.0, 30.0, 32)
    assert timedelta(seconds=s.clock_tick) < timedelta(seconds=s.clock_lease)


def test_a_player_leaves_the_bot_plays_and_the_player_comes_back(fresh_database: str) -> None:
    from service.application.clocks import PresenceBody

    async def run() -> None:
        await migrate(fresh_database)
        async with instance(fresh_database) as m:
            created = await create(m, {"kind": "correspondence", "days": 1})
            gid = created.id
            seat = created.to_act[0]
            token = created.seats[seat].token
            assert token is not None
            left = await m.clocks.presence(gid, token, PresenceBody(away=True))
            again = await m.clocks.presence(gid, token, PresenceBody(away=True))
            assert again.version == left.version  # already away: nothing appended
            types = [e.type for e in await events(m.store, gid)]
            assert types[-2:] == ["clock.sat_in", "clock.set"]
            # The bot is due at once for a seat it sits in for (the deadline is the time the
            # clock started): a firer plays the seat's move.
            assert await ClockFirer(m.clocks).fire(gid) is True
            stored = await events(m.store, gid)
            bot = [e for e in stored if e.type == "clock.bot"]
            assert len(bot) == 1 and bot[0].seat == seat
            back = await m.clocks.presence(gid, token, PresenceBody(away=False))
            assert back.version > left.version
            _, table = await m.tables.current(gid)
            assert table.clock is not None and not table.clock.seats[seat].sitting_in
            plain = await m.lobby.create(CreateGame(game=GAME, seats=2, players=["a", "b"]))
            plain_token = plain.seats[0].token
            with pytest.raises(ApplicationError) as caught:
                await m.clocks.presence(plain.id, plain_token, PresenceBody(away=True))
            assert caught.value.code == "clock.none"
            report = await audited(m, gid)
            assert report["problems"] == []

    asyncio.run(run())


def test_dispute_files_and_the_offline_export_judge_the_clock(fresh_database: str) -> None:
    async def run() -> None:
        await migrate(fresh_database)
        async with instance(fresh_database) as m:
            created = await create(m, {"kind": "turn", "seconds": 1})
            gid = created.id
            seat = created.to_act[0]

            async def fired() -> bool:
                return await ClockFirer(m.clocks).fire(gid)

            await until(fired, "the expiry")
            stored = await events(m.store, gid)
            expiry = next(e for e in stored if e.type == "clock.expired")
            history = History.of(m)
            dispute = await history.dispute(gid, expiry.version)
            assert dispute.command is not None
            checks = {c.check: c for c in dispute.checks}
            assert checks["clock"].ok, checks["clock"].detail
            assert "deadline" in checks["clock"].detail
            # the expiry's game events re-run with the timeout rules, as any command's are
            assert set(checks) == {"version", "clock", "to_act", "rules", "listed_as_legal"}
            assert all(c.ok for c in checks.values()), dispute.checks
            assert "timeout rules" in checks["rules"].detail
            # the other seat's move after it, in time: its dispute file checks the clock too
            _, table = await m.tables.current(gid)
            mover = table.rules.to_act(table.state)[0]
            token = created.seats[mover].token
            command = msgspec.to_builtins(get_game(GAME).expiry_command(table.state, mover))
            answer = await m.play.command(gid, token, CommandBody(command=command), None)
            move = await history.dispute(gid, answer.version)
            checks = {c.check: c for c in move.checks}
            assert checks["clock"].ok and checks["rules"].ok, move.checks
            assert seat in (0, 1)

    asyncio.run(run())


def test_a_game_that_fails_to_fire_keeps_its_claim_and_the_others_still_fire(
    fresh_database: str,
) -> None:
    async def run() -> None:
        await migrate(fresh_database)
        async with instance(fresh_database) as m:
            broken = (await create(m, {"kind": "turn", "seconds": 1})).id
            fine = (await create(m, {"kind": "turn", "seconds": 1})).id
            firer = ClockFirer(m.clocks, lease=600, owner="one")
            real = firer.fire

            async def fire(game_id: str) -> bool:
                if game_id == broken:
                    raise RuntimeError("a game that cannot be fired")
                return await real(game_id)

            firer.fire = fire  # type: ignore[method-assign]

            async def fired() -> bool:
                await firer.fire_due()
                return any(e.type == "clock.expired" for e in await events(m.store, fine))

            await until(fired, "the other game's expiry")
            held = await pool_of(m.store).fetchrow(
                "SELECT claimed_by FROM deadlines WHERE game_id = $1::uuid", broken
            )
            assert held["claimed_by"] == "one"  # not claimed again at every tick
            now = datetime.now(UTC)
            again = await m.store.claim_deadlines(now, now, "two", 8)
            assert broken not in [c.game_id for c in again]
            assert not any(e.type == "clock.expired" for e in await events(m.store, broken))

    asyncio.run(run())


def test_a_move_by_a_player_the_bot_sat_in_for_is_its_return(fresh_database: str) -> None:
    from service.application.clocks import PresenceBody

    async def run() -> None:
        await migrate(fresh_database)
        async with instance(fresh_database) as m:
            created = await create(m, {"kind": "fischer", "bank_seconds": 60})
            gid = created.id
            seat = created.to_act[0]
            token = created.seats[seat].token
            assert token is not None
            await m.clocks.presence(gid, token, PresenceBody(away=True))
            _, table = await m.tables.current(gid)
            command = msgspec.to_builtins(get_game(GAME).expiry_command(table.state, seat))
            answer = await m.play.command(gid, token, CommandBody(command=command), None)
            types = [e.type for e in answer.events]
            assert types[0] == "clock.returned" and types[-1] == "clock.set"
            _, table = await m.tables.current(gid)
            assert table.clock is not None and not table.clock.seats[seat].sitting_in
            assert 0 < table.clock.seats[seat].bank_ms <= 60_000
            assert (await audited(m, gid))["problems"] == []

    asyncio.run(run())


# --- issue 35: clocks count moves, every game comes to rest, replays and disputes -----------
@contextlib.asynccontextmanager
async def limited(dsn: str, limits: Any) -> AsyncIterator[Manifest]:
    """An instance whose operator bounds new games' clocks (``MANIFEST_CLOCK_REST_AFTER``,
    ``MANIFEST_CLOCK_MAX_BANK``)."""
    async with pg(dsn) as store:
        projector = Projector(MemoryStore(), lambda g, after: store.read(g, after=after))
        signer = await load_signer(store)
        yield compose(store, projector, signer, clock_limits=limits)


def test_the_issues_terms_come_to_rest_and_a_move_wakes_the_game(fresh_database: str) -> None:
    """``{"kind": "fischer", "bank_seconds": 2, "increment_seconds": 0, "sit_in_after": 0}``
    with every seat silent: before, an expiry at every tick for ever; now, after the
    operator's ``rest_after`` (4 here) expiries in a row, no deadline is left to claim. A
    firer on a fake clock that jumps to each deadline (no waiting). The audit
    re-derives the rest; a player's move starts the clocks again."""
    from service.application.clocks import ClockLimits

    async def run() -> None:
        await migrate(fresh_database)
        async with limited(fresh_database, ClockLimits(rest_after=4)) as m:
            terms = {"kind": "fischer", "bank_seconds": 2, "increment_seconds": 0}
            created = await create(m, {**terms, "sit_in_after": 0})
            gid = created.id
            stored = await events(m.store, gid)
            assert stored[0].data["clock"]["rest_after"] == 4
            assert stored[0].data["clock"]["max_bank_seconds"] == 604_800
            fake = [datetime.now(UTC)]
            firer = ClockFirer(m.clocks, clock=lambda: fake[0])
            for _ in range(50):
                pending = await m.store.pending_deadline(gid)
                if pending is None:
                    break
                fake[0] = max(fake[0], pending.due_at)  # the fake clock jumps to the deadline
                await firer.fire_due()
            stored = await events(m.store, gid)
            assert [e.type for e in stored].count("clock.expired") == 4
            assert await m.store.pending_deadline(gid) is None  # nothing left to fire
            assert await firer.fire_due() is False
            doc = msgspec.json.decode(await m.documents.game_document(gid, None))
            assert doc["clock"]["resting"] is True and doc["clock"]["idle"] == 4
            assert not any(s["running"] for s in doc["clock"]["seats"])
            assert (await audited(m, gid))["problems"] == []
            _, table = await m.tables.current(gid)
            mover = table.rules.to_act(table.state)[0]
            token = created.seats[mover].token
            command = msgspec.to_builtins(get_game(GAME).expiry_command(table.state, mover))
            answer = await m.play.command(gid, token, CommandBody(command=command), None)
            assert answer.events[-1].type == "clock.set"
            assert await m.store.pending_deadline(gid) is not None  # the clocks run again
            assert (await audited(m, gid))["problems"] == []

    asyncio.run(run())


def test_a_rest_or_a_bank_above_the_operators_is_refused(fresh_database: str) -> None:
    from service.application.clocks import ClockLimits

    async def run() -> None:
        await migrate(fresh_database)
        async with limited(fresh_database, ClockLimits(max_bank_seconds=600, rest_after=20)) as m:
            for terms in (
                {"kind": "turn", "seconds": 5, "rest_after": 21},
                {"kind": "fischer", "bank_seconds": 60, "max_bank_seconds": 601},
                {"kind": "fischer", "bank_seconds": 601},  # a bank above the cap from the start
                {"kind": "fischer", "bank_seconds": 60, "max_bank_seconds": 59},
                {"kind": "turn", "seconds": 5, "max_bank_seconds": 60},
            ):
                with pytest.raises(ApplicationError) as caught:
                    await create(m, terms)
                assert caught.value.code == "clock.invalid", terms
            created = await create(m, {"kind": "fischer", "bank_seconds": 60, "rest_after": 3})
            clock = (await events(m.store, created.id))[0].data["clock"]
            assert clock["rest_after"] == 3 and clock["max_bank_seconds"] == 600

    asyncio.run(run())


@pytest.mark.parametrize(
    "terms",
    [
        {"kind": "turn", "seconds": 4},
        {"kind": "fischer", "bank_seconds": 10, "increment_seconds": 60},
        {"kind": "correspondence", "days": 1},
    ],
)
def test_a_cosmetic_command_runs_no_clock_in_the_service(
    fresh_database: str, terms: dict[str, Any]
) -> None:
    """Empire Builder's ``choose_face``, sent by the seat to act and by the other seat: only
    ``face_chosen`` is appended, the deadline PostgreSQL holds does not move, and the audit
    agrees (it expects no clock event after a command that is no move)."""

    async def run() -> None:
        await migrate(fresh_database)
        async with instance(fresh_database) as m:
            created = await m.lobby.create(
                CreateGame(
                    game="empire-builder",
                    seats=2,
                    players=["ann", "bob"],
                    clock=msgspec.convert(terms, ClockTerms),
                )
            )
            gid = created.id
            seat = created.to_act[0]
            before = await m.store.pending_deadline(gid)
            assert before is not None
            for face, who in (("rancher", seat), ("banker", 1 - seat), ("senator", seat)):
                token = created.seats[who].token
                body = CommandBody(command={"type": "choose_face", "face": face})
                answer = await m.play.command(gid, token, body, None)
                assert [e.type for e in answer.events] == ["face_chosen"]
            # table talk and queries are no commands of the game: no clock event either
            from service.application.bodies import MessageBody
            from service.application.queries import QueryBody

            token = created.seats[seat].token
            await m.talk.message(gid, token, MessageBody(to="all", text="thinking"))
            with contextlib.suppress(ApplicationError):  # answered or refused: nothing appended
                await m.queries.query(gid, token, QueryBody(query={"type": "survey", "path": []}))
            assert not any(e.type == "clock.set" for e in (await events(m.store, gid))[-4:])
            after = await m.store.pending_deadline(gid)
            assert after is not None and after.due_at == before.due_at
            doc = msgspec.json.decode(await m.documents.game_document(gid, None))
            assert doc["clock"]["seats"][seat]["deadline"] == before.due_at.isoformat().replace(
                "+00:00", "Z"
            )
            assert (await audited(m, gid))["problems"] == []

    asyncio.run(run())


def test_a_replay_carries_the_clock_part(fresh_database: str) -> None:
    """``GET /v1/games/{id}/replay/{n}`` of a clocked game has the clock after event ``n``
    (docs/api.md: replays carry it), and so do the NDJSON replay's keyframes; a game without a
    clock has none (the key left out)."""

    async def run() -> None:
        await migrate(fresh_database)
        async with instance(fresh_database) as m:
            created = await create(m, {"kind": "turn", "seconds": 60})
            gid = created.id
            history = History.of(m)
            stored = await events(m.store, gid)
            last = stored[-1].version
            replay = await history.replay(gid, None, last)
            doc = msgspec.json.decode(await m.documents.game_document(gid, None))
            assert replay.clock is not None
            assert msgspec.to_builtins(replay.clock) == doc["clock"]
            early = await history.replay(gid, None, 1)  # lobby.created: the clock not started
            assert early.clock is not None and not any(s.running for s in early.clock.seats)
            plan = await history.replay_plan(gid, None)
            lines = [msgspec.json.decode(x) async for x in history.replay_lines(plan)]
            assert lines[-1]["clock"] == doc["clock"]
            plain = await m.lobby.create(CreateGame(game=GAME, seats=2, players=["a", "b"]))
            unclocked = await history.replay(plain.id, None, 1)
            assert b'"clock"' not in msgspec.json.encode(unclocked)

    asyncio.run(run())
