"""The application over the in-memory event log (issue 36): lobby, play, idempotency, refusals
and clocks run with no PostgreSQL and no Redis (``service.bootstrap.in_memory``), the same
services the HTTP edge calls — what the port (:class:`service.eventstore.port.EventLog`) buys.
The whole file runs in a few seconds."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from domain.platform.clocks import ClockTerms
from domain.registry import get_game
from ledger.chain import verify_chain
from ledger.receipts import verify_receipt
from service.application.bodies import CommandBody, CreateGame, JoinGame
from service.application.clocks import ClockFirer
from service.application.errors import ApplicationError, Conflict, Repeated
from service.application.gameplay import Manifest
from service.application.history import History
from service.bootstrap import in_memory

GAME = "cargo-empire"


def run(test: Callable[[Manifest], Awaitable[None]], **options: Any) -> None:
    async def main() -> None:
        await test(await in_memory(**options))

    asyncio.run(main())


async def started(m: Manifest, clock: dict[str, Any] | None = None) -> Any:
    terms = None if clock is None else msgspec.convert(clock, ClockTerms)
    return await m.lobby.create(CreateGame(game=GAME, seats=2, players=["ann", "bob"], clock=terms))


async def legal_move(m: Manifest, game_id: str) -> tuple[int, dict[str, Any], int]:
    """(the seat to act, a legal command of it, the version it is decided on)."""
    _, table = await m.tables.current(game_id)
    seat = table.rules.to_act(table.state)[0]
    command = msgspec.to_builtins(get_game(GAME).expiry_command(table.state, seat))
    return seat, command, table.version


def _public_key(m: Manifest) -> Ed25519PublicKey:
    return Ed25519PublicKey.from_public_bytes(m.signer.public_raw)


def test_the_lobby_creates_joins_and_starts() -> None:
    async def test(m: Manifest) -> None:
        created = await m.lobby.create(CreateGame(game=GAME, seats=2))
        assert created.status == "open" and created.seats[0].token is None
        with pytest.raises(ApplicationError) as caught:
            await m.lobby.join(created.id, JoinGame(name="eve", invite_code="wrong"))
        assert caught.value.code == "lobby.bad_invite"
        ann = await m.lobby.join(created.id, JoinGame(name="ann", invite_code=created.invite_code))
        assert ann.status == "open"
        with pytest.raises(ApplicationError) as caught:
            await m.lobby.join(created.id, JoinGame(name="Ann", invite_code=created.invite_code))
        assert caught.value.code == "lobby.name_taken"
        removed = await m.lobby.remove_seat(created.id, created.host_token, ann.seat)
        assert removed.status == "open"
        for name in ("ann", "bob"):
            joined = await m.lobby.join(
                created.id, JoinGame(name=name, invite_code=created.invite_code)
            )
        assert joined.status == "active"  # the last seat taken starts the game
        with pytest.raises(ApplicationError) as caught:
            await m.lobby.join(created.id, JoinGame(name="cy", invite_code=created.invite_code))
        assert caught.value.code in ("lobby.full", "lobby.started")
        events = await m.store.read(created.id)
        verify_chain(events)
        types = [e.type for e in events]
        assert types[:5] == ["lobby.created", "lobby.joined", "lobby.left", "lobby.joined",
                             "lobby.joined"]  # fmt: skip
        assert (await m.store.get_game(created.id) or created).status == "active"

    run(test)


def test_a_move_is_decided_appended_signed_and_audited() -> None:
    async def test(m: Manifest) -> None:
        created = await started(m)
        for _ in range(6):
            seat, command, version = await legal_move(m, created.id)
            token = created.seats[seat].token
            answer = await m.play.command(
                created.id, token, CommandBody(command=command, expected_version=version), None
            )
            assert answer.version > version and answer.events[0].version == version + 1
            receipt = msgspec.to_builtins(answer.receipt)
            assert verify_receipt(_public_key(m), receipt)
        stored = await m.store.read(created.id)
        verify_chain(stored)
        assert [e.version for e in stored] == list(range(1, len(stored) + 1))
        report = await History.of(m).audit(created.id)
        assert report["problems"] == [] and report["adjudication"]["ok"] is True
        # the other seat may not move out of turn: refused, recorded, nothing appended
        seat, command, version = await legal_move(m, created.id)
        other = created.seats[1 - seat].token
        with pytest.raises(ApplicationError):
            await m.play.command(created.id, other, CommandBody(command=command), None)
        assert len(await m.store.read(created.id)) == len(stored)

    run(test)


def test_a_resent_idempotency_key_is_answered_again_and_appends_nothing() -> None:
    async def test(m: Manifest) -> None:
        created = await started(m)
        seat, command, version = await legal_move(m, created.id)
        token = created.seats[seat].token
        body = CommandBody(command=command, expected_version=version)
        first = await m.play.command(created.id, token, body, "key-1")
        again = await m.play.command(created.id, token, body, "key-1")
        # the same document (its objects' keys in the order jsonb reads them back, as with
        # PostgreSQL: the recorded answer is read back from the store)
        assert msgspec.json.decode(msgspec.json.encode(again)) == msgspec.json.decode(
            msgspec.json.encode(first)
        )
        assert len(await m.store.read(created.id)) == first.version
        accepted = [c for c in await m.store.commands(created.id) if c.outcome == "accepted"]
        assert [c.idempotency_key for c in accepted] == ["key-1"]
        with pytest.raises(ApplicationError) as caught:
            await m.play.command(created.id, token, CommandBody(command={"type": "x"}), "key-1")
        assert caught.value.code == "idempotency.key_reused"

    run(test)


def test_concurrent_moves_on_one_version_exactly_one_is_appended() -> None:
    async def test(m: Manifest) -> None:
        created = await started(m)
        seat, command, version = await legal_move(m, created.id)
        token = created.seats[seat].token
        body = CommandBody(command=command, expected_version=version)
        results = await asyncio.gather(
            *(m.play.command(created.id, token, body, None) for _ in range(2)),
            return_exceptions=True,
        )
        won = [r for r in results if not isinstance(r, BaseException)]
        lost = [r for r in results if isinstance(r, BaseException)]
        assert len(won) == 1 and len(lost) == 1
        assert isinstance(lost[0], Conflict) and lost[0].code == "version.conflict"
        commands = await m.store.commands(created.id)
        assert sorted(c.outcome for c in commands) == ["accepted", "conflict"]

    run(test)


def test_refusals_are_recorded_up_to_the_cap_then_counted() -> None:
    async def test(m: Manifest) -> None:
        created = await started(m)
        seat, _, _ = await legal_move(m, created.id)
        token = created.seats[seat].token
        for i in range(3):
            with pytest.raises(ApplicationError) as caught:
                bad = CommandBody(command={"type": "no-such-command"})
                await m.play.command(created.id, token, bad, f"bad-{i}")
        code = caught.value.code
        recorded = [c for c in await m.store.commands(created.id) if c.outcome == "rejected"]
        assert len(recorded) == 2 and all(c.error_code == code for c in recorded)
        assert (await m.store.unrecorded_refusals(created.id)).by_seat == {str(seat): 1}
        # a recorded refusal's key answers the same refusal again
        with pytest.raises(Repeated) as repeated:
            await m.play.command(
                created.id, token, CommandBody(command={"type": "no-such-command"}), "bad-0"
            )
        assert repeated.value.code == code

    run(test, rejected_cap=2)


def test_a_turn_clock_expires_once_when_its_deadline_is_fired() -> None:
    async def test(m: Manifest) -> None:
        created = await started(m, {"kind": "turn", "seconds": 600})
        pending = await m.store.pending_deadline(created.id)
        assert pending is not None
        late = pending.due_at + timedelta(seconds=1)
        firer = ClockFirer(m.clocks, clock=lambda: late, owner="test")
        assert await firer.fire_due() is True
        types = [e.type for e in await m.store.read(created.id)]
        assert types.count("clock.expired") == 1
        again = await m.store.pending_deadline(created.id)
        assert again is None or again.due_at > late or again.version > pending.version
        assert await ClockFirer(m.clocks, clock=lambda: late, owner="other").fire_due() is False
        assert [e.type for e in await m.store.read(created.id)].count("clock.expired") == 1
        report = await History.of(m).audit(created.id)
        assert report["problems"] == []

    run(test)


def test_a_game_without_a_clock_has_no_deadline() -> None:
    async def test(m: Manifest) -> None:
        created = await started(m)
        assert await m.store.pending_deadline(created.id) is None
        far = datetime.now(UTC) + timedelta(days=3650)
        assert await m.store.claim_deadlines(far, far, "x", 8) == []

    run(test)
