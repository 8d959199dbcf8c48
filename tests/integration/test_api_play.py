"""The HTTP API against the real server process, PostgreSQL and Redis (issue 3, "Must show").

Every check that a document is right compares it with what the test computes itself from the
events read straight from PostgreSQL: folded with the pure projection functions
(``domain.platform.table``) and, independently, with the game's own ``fold``/``view``/``legal``.
"""

from __future__ import annotations

import asyncio
import base64
import json
import random
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import httpx
import msgspec
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from domain.kernel.hidden import is_sealed
from domain.registry import all_games
from ledger.chain import verify_chain
from ledger.receipts import receipt_message

from .apihelp import (
    GAME,
    RANDOM_CRATES,
    Reference,
    assert_problem,
    auth,
    bot_step,
    check_accepted,
    commands_rows,
    create_started,
    game_doc,
    pg,
    stored_version,
    tokens_of,
)
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]


# --- 1. a whole game over HTTP ---------------------------------------------------------------
#: Every step is compared in full up to this many commands, then every ``CHECK_EVERY``th.
FULL_CHECK_COMMANDS = 1000
CHECK_EVERY = 10
MAX_COMMANDS = 5000


def test_full_game_over_http_from_lobby_to_result(server: ServerProcess) -> None:
    """Two bots play CARGO (crates placed at random) from an open lobby to the result.

    The game is created without players, both seats are joined with the invite code (the game
    starts by itself when full). Then, until it is over: GET the game → ``to_act`` → GET that
    seat's ``/legal`` → POST a uniformly random legal command with ``expected_version``.

    At every step for the first 1,000 commands and at every 10th after (and at the end), the
    spectator's and the acting seat's ``GET /v1/games/{id}`` and the seat's ``/legal`` are
    byte-for-byte the documents folded from the events read from PostgreSQL, and the ``view``
    equals ``JOLLY_CARGO.view`` of the game's own fold (legal: ``JOLLY_CARGO.legal``). Every
    accepted command's answer names exactly the stored events. (A random game is 300 to 2,200
    commands, usually under 1,000, so most games are checked at every step; a full check costs
    ~15 ms a step, and the cap keeps the longest games under ~40 s on two cores.)
    """
    asyncio.run(_full_game(server, random.Random(20261121)))


async def _full_game(server: ServerProcess, rng: random.Random) -> None:
    async with pg(server.pg_dsn) as store, server.async_client() as client:
        r = await client.post(
            "/v1/games", json={"game": GAME, "seats": 2, "options": RANDOM_CRATES}
        )
        assert r.status_code == 201, r.text
        created = r.json()
        game_id = created["id"]
        assert created["status"] == "open" and created["version"] == 1
        assert [s["token"] for s in created["seats"]] == [None, None]
        ref = Reference(game_id)
        await ref.refresh(store)
        spectator = await client.get(f"/v1/games/{game_id}")
        ref.check_document(spectator.content, None)
        assert spectator.json()["to_act"] == [] and spectator.json()["view"] is None

        tokens: list[str] = []
        for i, name in enumerate(["ada", "bob"]):
            r = await client.post(
                f"/v1/games/{game_id}/join",
                json={"name": name, "invite_code": created["invite_code"]},
            )
            assert r.status_code == 200, r.text
            joined = r.json()
            assert joined["seat"] == i
            assert joined["status"] == ("open" if i == 0 else "active")
            tokens.append(joined["token"])
        await ref.refresh(store)
        assert ref.table is not None and ref.table.status == "active"

        commands = 0
        while True:
            full = commands < FULL_CHECK_COMMANDS or commands % CHECK_EVERY == 0
            spectator = await client.get(f"/v1/games/{game_id}")
            assert spectator.status_code == 200
            doc = spectator.json()
            if full:
                await ref.refresh(store)
                assert doc["version"] == ref.version  # read-your-writes: no stale projection
                ref.check_document(spectator.content, None)
            if doc["status"] == "finished":
                break
            assert doc["status"] == "active"
            who = rng.choice(doc["to_act"])
            legal = await client.get(f"/v1/games/{game_id}/legal", headers=auth(tokens[who]))
            assert legal.status_code == 200, legal.text
            if full:
                own = await client.get(f"/v1/games/{game_id}", headers=auth(tokens[who]))
                ref.check_document(own.content, who)
                ref.check_legal(legal.content, who)
            options = legal.json()["commands"]
            assert options, f"seat {who} is to act but has no legal command"
            r = await client.post(
                f"/v1/games/{game_id}/commands",
                json={"command": rng.choice(options), "expected_version": doc["version"]},
                headers=auth(tokens[who]),
            )
            assert r.status_code == 200, r.text
            commands += 1
            if full:
                await ref.refresh(store)
                check_accepted(r.json(), ref.events, who)
            assert commands < MAX_COMMANDS

        await ref.refresh(store)
        final = doc
        assert final["status"] == "finished"
        assert final["result"] is not None and final["result"]["winners"], final["result"]
        for who in range(2):
            own = await client.get(f"/v1/games/{game_id}", headers=auth(tokens[who]))
            ref.check_document(own.content, who)
            legal = await client.get(f"/v1/games/{game_id}/legal", headers=auth(tokens[who]))
            ref.check_legal(legal.content, who)
            assert legal.json()["commands"] == []
        # Once over, nothing is hidden: every seat sees what the spectator sees.
        assert own.json()["view"] == final["view"]
        row = await store.get_game(game_id)
        assert row is not None and row.status == "finished" and row.result == final["result"]
        assert verify_chain(ref.events, head=row.head) is None
        accepted = [c for c in await commands_rows(store, game_id) if c["outcome"] == "accepted"]
        assert len(accepted) == commands
        print(f"{commands} commands, {ref.version} events, result {final['result']}")


def test_explicit_start_with_the_host_token(server: ServerProcess) -> None:
    """``POST /start``: only the host token; refused while seats are open and once started.

    Joining the last seat starts a game by itself, so a full game that has not started cannot be
    reached through the API; the test makes one by taking the seats in PostgreSQL directly (as a
    crash between the last join and the start would leave it) and starts it with the host token.
    """
    asyncio.run(_explicit_start(server))


async def _explicit_start(server: ServerProcess) -> None:
    from domain.platform.events import LobbyJoined
    from service.application.tokens import SEAT_PREFIX, new_token, token_hash
    from service.eventstore.store import NewEvent

    async with pg(server.pg_dsn) as store, server.async_client() as client:
        r = await client.post(
            "/v1/games", json={"game": GAME, "seats": 2, "options": RANDOM_CRATES}
        )
        created = r.json()
        gid, host = created["id"], created["host_token"]
        start = f"/v1/games/{gid}/start"
        assert_problem(await client.post(start), 401, "auth.missing_token")
        assert_problem(await client.post(start, headers=auth("mfh_nope")), 403, "auth.not_host")
        assert_problem(await client.post(start, headers=auth(host)), 409, "lobby.not_full")
        r = await client.post(
            f"/v1/games/{gid}/join", json={"name": "ada", "invite_code": created["invite_code"]}
        )
        seat0 = r.json()["token"]
        assert_problem(await client.post(start, headers=auth(seat0)), 403, "auth.not_host")
        assert_problem(await client.post(start, headers=auth(host)), 409, "lobby.not_full")
        other = await create_started(client)
        assert_problem(
            await client.post(start, headers=auth(other["host_token"])), 403, "auth.not_host"
        )
        assert await stored_version(store, gid) == 2

        # Seat 1 taken behind the server's back: the game is full but still open.
        seat1 = new_token(SEAT_PREFIX)
        async with store.lock(gid) as locked:
            await locked.set_seat(1, "bob", token_hash(seat1))
            await locked.append(
                expected_version=2,
                events=[NewEvent("lobby.joined", msgspec.to_builtins(LobbyJoined(1, "bob")))],
                seat=1,
                command_id=None,
            )
        r = await client.post(start, headers=auth(host))
        assert r.status_code == 200, r.text
        assert r.json()["status"] == "active" and r.json()["version"] > 3
        assert_problem(await client.post(start, headers=auth(host)), 409, "lobby.started")
        ref = Reference(gid)
        await ref.refresh(store)
        assert ref.table is not None and ref.table.status == "active"
        for who, token in enumerate([seat0, seat1]):
            doc = await client.get(f"/v1/games/{gid}", headers=auth(token))
            ref.check_document(doc.content, who)
        # and it plays
        r2 = await bot_step(client, gid, [seat0, seat1], random.Random(1))
        assert r2 is not None and r2.status_code == 200, r2 and r2.text


# --- 2. 32 concurrent clients on one game ----------------------------------------------------
CLIENTS = 32
ATTEMPTS = 400


@pytest.mark.slow  # the two-worker twin below runs the same race in the quick run
def test_32_concurrent_clients_on_one_game(server: ServerProcess) -> None:
    """32 clients race on one game with current, stale and deliberately old versions.

    Every answer is 200, 409 ``version.conflict`` or 422 ``rule.*``; the stored stream is dense,
    its hash chain holds, there are exactly as many accepted command rows as 200s, and every
    200 names exactly the stored events at its versions.
    """
    asyncio.run(_concurrent(server))


def test_32_concurrent_clients_on_one_game_across_two_workers(
    server_two_workers: ServerProcess,
) -> None:
    """The same race served by two worker processes, each deciding on its own cached state:
    the compare-and-set append makes the loser of every race decide again on the stored one."""
    asyncio.run(_concurrent(server_two_workers))


async def _concurrent(server: ServerProcess) -> None:
    async with pg(server.pg_dsn) as store, server.async_client() as client:
        created = await create_started(client)
        gid, tokens = created["id"], tokens_of(created)
        answers: list[tuple[int, dict[str, Any], int]] = []  # status, body, seat
        posts = 0

        async def worker(n: int) -> None:
            rng = random.Random(n)
            mode = "read" if n % 2 == 0 else ("old" if n % 4 == 1 else "none")
            nonlocal posts
            while posts < ATTEMPTS:
                doc = await game_doc(client, gid)
                if doc["status"] != "active":
                    return
                who = rng.choice(doc["to_act"])
                legal = await client.get(f"/v1/games/{gid}/legal", headers=auth(tokens[who]))
                assert legal.status_code == 200, legal.text
                commands = legal.json()["commands"]
                if not commands:
                    continue
                body: dict[str, Any] = {"command": rng.choice(commands)}
                if mode == "read":
                    body["expected_version"] = legal.json()["version"]
                elif mode == "old":
                    body["expected_version"] = max(0, legal.json()["version"] - rng.randint(1, 5))
                # now and then the other seat's token: not its turn
                token_seat = who if rng.random() < 0.9 else 1 - who
                posts += 1
                r = await client.post(
                    f"/v1/games/{gid}/commands", json=body, headers=auth(tokens[token_seat])
                )
                answers.append((r.status_code, r.json(), token_seat))

        await asyncio.gather(*(worker(n) for n in range(CLIENTS)))

        statuses = Counter(status for status, _, _ in answers)
        assert set(statuses) <= {200, 409, 422}, statuses
        codes = Counter(body.get("code") for status, body, _ in answers if status != 200)
        for status, body, _ in answers:
            if status == 409:
                assert body["code"] in ("version.conflict", "game.finished"), body
            elif status == 422:
                assert body["code"].startswith("rule."), body
        print(f"answers: {dict(statuses)}, problems: {dict(codes)}")
        assert len(answers) >= ATTEMPTS
        assert statuses[200] > 10 and codes["version.conflict"] > 0, (statuses, codes)

        events = await store.read(gid)
        assert [e.version for e in events] == list(range(1, len(events) + 1))
        row = await store.get_game(gid)
        assert row is not None and row.version == len(events)
        assert verify_chain(events, head=row.head) is None
        rows = await commands_rows(store, gid)
        outcomes = Counter(r["outcome"] for r in rows)
        assert outcomes["accepted"] == statuses[200], (outcomes, statuses)
        assert outcomes["conflict"] == codes["version.conflict"]
        assert outcomes["rejected"] == statuses[422] + codes["game.finished"]
        ranges = sorted(
            (r["first_version"], r["last_version"]) for r in rows if r["outcome"] == "accepted"
        )
        covered = [v for first, last in ranges for v in range(first, last + 1)]
        first_command = ranges[0][0]
        assert covered == list(range(first_command, len(events) + 1)), "a gap or an overlap"
        for status, body, who in answers:
            if status == 200:
                check_accepted(body, events, who)
        ref = Reference(gid)
        await ref.refresh(store)
        ref.check_document((await client.get(f"/v1/games/{gid}")).content, None)


# --- 3. idempotency --------------------------------------------------------------------------
def test_idempotency_keys(server: ServerProcess) -> None:
    """A repeated ``Idempotency-Key`` returns the first answer and appends nothing."""
    asyncio.run(_idempotency(server))


async def _legal_for_turn(
    client: httpx.AsyncClient, gid: str, tokens: list[str]
) -> tuple[int, list[Any], int]:
    doc = await game_doc(client, gid)
    who = doc["to_act"][0]
    legal = (await client.get(f"/v1/games/{gid}/legal", headers=auth(tokens[who]))).json()
    return who, legal["commands"], legal["version"]


async def _other_seat_reuses_key(
    client: httpx.AsyncClient,
    store: Any,
    gid: str,
    tokens: list[str],
    who: int,
    body: dict[str, Any],
    first: dict[str, Any],
) -> None:
    """Keys are scoped to (game, seat): the other seat sending one of ``who``'s keys sends an
    ordinary new command — answered exactly as the same request under a never-used key, with
    the same body as ``who``'s and with a different one, and accepted when legal — and ``who``
    retrying still gets its first answers."""
    url = f"/v1/games/{gid}/commands"
    them = 1 - who

    def key(seat: int, k: str) -> dict[str, str]:
        return {**auth(tokens[seat]), "Idempotency-Key": k}

    malformed = {"command": {"type": "no_such_command"}}
    refused = assert_problem(await client.post(url, json=malformed, headers=key(who, "w-1")), 422)
    assert (await client.post(url, json=malformed, headers=key(who, "w-2"))).status_code == 422
    # "k-1" with who's very body (its expected_version is stale now: 409), "w-1" with another
    # body than who's malformed one: each answered as under a key nobody ever used
    for n, (k, sent) in enumerate((("k-1", body), ("w-1", body))):
        reused = await client.post(url, json=sent, headers=key(them, k))
        fresh = await client.post(url, json=sent, headers=key(them, f"never-used-{n}"))
        assert reused.status_code == fresh.status_code == 409, reused.text
        assert reused.json() == fresh.json()
    # a legal command of theirs under "w-2" is accepted (after any moves needed to get there)
    while True:
        turn, legal, version = await _legal_for_turn(client, gid, tokens)
        if turn == them:
            break
        moved = await client.post(url, json={"command": legal[0]}, headers=auth(tokens[turn]))
        assert moved.status_code == 200, moved.text
    mine = {"command": legal[0], "expected_version": version}
    accepted = await client.post(url, json=mine, headers=key(them, "w-2"))
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["version"] > version
    rows = await commands_rows(store, gid)
    assert Counter(
        r["idempotency_key"] for r in rows if r["idempotency_key"] in ("k-1", "w-1", "w-2")
    ) == {"k-1": 2, "w-1": 2, "w-2": 2}
    # every seat retrying gets its own first answer
    again = await client.post(url, json=body, headers=key(who, "k-1"))
    assert again.status_code == 200 and again.json() == first
    again = await client.post(url, json=malformed, headers=key(who, "w-1"))
    assert again.status_code == 422 and again.json() == refused
    again = await client.post(url, json=mine, headers=key(them, "w-2"))
    assert again.status_code == 200 and again.json() == accepted.json()


async def _idempotency(server: ServerProcess) -> None:
    async with pg(server.pg_dsn) as store, server.async_client() as client:
        created = await create_started(client)
        gid, tokens = created["id"], tokens_of(created)
        url = f"/v1/games/{gid}/commands"

        async def key_rows(key: str) -> list[dict[str, Any]]:
            return [r for r in await commands_rows(store, gid) if r["idempotency_key"] == key]

        # sequentially
        who, commands, version = await _legal_for_turn(client, gid, tokens)
        body = {"command": commands[0], "expected_version": version}
        headers = {**auth(tokens[who]), "Idempotency-Key": "k-1"}
        first = await client.post(url, json=body, headers=headers)
        assert first.status_code == 200, first.text
        after = await stored_version(store, gid)
        assert after > version
        again = await client.post(url, json=body, headers=headers)
        assert again.status_code == 200
        assert again.json() == first.json()
        assert await stored_version(store, gid) == after
        assert len(await key_rows("k-1")) == 1
        # the same key with a different body is refused
        other = {"command": commands[0], "expected_version": version + 1}
        assert_problem(
            await client.post(url, json=other, headers=headers), 422, "idempotency.key_reused"
        )
        assert await stored_version(store, gid) == after
        await _other_seat_reuses_key(client, store, gid, tokens, who, body, first.json())

        # five at once with one key: one append, five identical answers
        who, commands, version = await _legal_for_turn(client, gid, tokens)
        body = {"command": commands[-1]}
        headers = {**auth(tokens[who]), "Idempotency-Key": "k-2"}
        answers = await asyncio.gather(
            *(client.post(url, json=body, headers=headers) for _ in range(5))
        )
        assert [a.status_code for a in answers] == [200] * 5, [a.text for a in answers]
        assert all(a.json() == answers[0].json() for a in answers)
        stored = await store.read(gid, after=version)
        assert [e.version for e in stored] == [e["version"] for e in answers[0].json()["events"]]
        assert len(await key_rows("k-2")) == 1

        # a rejected command, retried with its key, is rejected the same way
        who, commands, version = await _legal_for_turn(client, gid, tokens)
        wrong = {**auth(tokens[1 - who]), "Idempotency-Key": "k-3"}
        body = {"command": commands[0]}
        no = await client.post(url, json=body, headers=wrong)
        problem = assert_problem(no, 422, "rule.not_your_turn")
        again = await client.post(url, json=body, headers=wrong)
        assert again.status_code == 422 and again.json() == problem
        # a stale version (409), and a malformed command (422): the same on retry
        stale = {**auth(tokens[who]), "Idempotency-Key": "k-4"}
        body = {"command": commands[0], "expected_version": version - 1}
        conflict = assert_problem(
            await client.post(url, json=body, headers=stale), 409, "version.conflict"
        )
        again = await client.post(url, json=body, headers=stale)
        assert again.status_code == 409 and again.json() == conflict
        bad = {**auth(tokens[who]), "Idempotency-Key": "k-5"}
        body = {"command": {"type": "no_such_command"}}
        invalid = assert_problem(await client.post(url, json=body, headers=bad), 422)
        again = await client.post(url, json=body, headers=bad)
        assert again.status_code == 422 and again.json() == invalid
        assert await stored_version(store, gid) == version
        for key in ("k-3", "k-4", "k-5"):
            assert len(await key_rows(key)) == 1, key
        # ... and the key, once refused, still refuses a command that would now be legal
        assert_problem(
            await client.post(url, json={"command": commands[0]}, headers=stale),
            422,
            "idempotency.key_reused",
        )
        assert_problem(
            await client.post(
                url,
                json={"command": commands[0]},
                headers={**auth(tokens[who]), "Idempotency-Key": ""},
            ),
            400,
        )
        assert await stored_version(store, gid) == version


def test_same_key_for_a_valid_and_a_malformed_command_at_once(server: ServerProcess) -> None:
    """One ``Idempotency-Key``, a legal and a malformed command sent at the same moment (the
    malformed one a little later each round): one of them is recorded, the other is told the key
    was used for a different command. Never a 5xx (this used to deadlock in PostgreSQL: the
    malformed command was recorded outside the game's lock)."""
    asyncio.run(_same_key_race(server))


async def _same_key_race(server: ServerProcess) -> None:
    async with pg(server.pg_dsn) as store, server.async_client() as client:
        created = await create_started(client)
        gid, tokens = created["id"], tokens_of(created)
        url = f"/v1/games/{gid}/commands"
        rng = random.Random(33)
        outcomes: Counter[tuple[int, int]] = Counter()
        for i in range(40):
            who, commands, _ = await _legal_for_turn(client, gid, tokens)
            headers = {**auth(tokens[who]), "Idempotency-Key": f"race-{i}"}

            async def malformed(delay: float, headers: dict[str, str] = headers) -> httpx.Response:
                await asyncio.sleep(delay)
                return await client.post(url, json={"command": {"type": "bogus"}}, headers=headers)

            good, bad = await asyncio.gather(
                client.post(url, json={"command": rng.choice(commands)}, headers=headers),
                malformed(rng.uniform(0, 0.006)),
            )
            outcomes[(good.status_code, bad.status_code)] += 1
            assert good.status_code < 500 and bad.status_code < 500, (good.text, bad.text)
            if good.status_code == 200:
                assert_problem(bad, 422, "idempotency.key_reused")
            else:
                assert_problem(good, 422, "idempotency.key_reused")
                assert_problem(bad, 422, "command.invalid")
        rows = await commands_rows(store, gid)
        keys = Counter(r["idempotency_key"] for r in rows)
        assert all(keys[f"race-{i}"] == 1 for i in range(40)), keys
        assert sum(r["outcome"] == "accepted" for r in rows) == outcomes[(200, 422)]
        print(f"(legal, malformed) answers: {dict(outcomes)}")


# --- 4. seat tokens --------------------------------------------------------------------------
def test_seat_tokens(server: ServerProcess) -> None:
    """A seat token acts for its seat of its game only; nothing else acts at all."""
    asyncio.run(_tokens(server))


async def _tokens(server: ServerProcess) -> None:
    async with pg(server.pg_dsn) as store, server.async_client() as client:
        a = await create_started(client)
        b = await create_started(client)
        gid, tokens = a["id"], tokens_of(a)
        # make it seat 1's turn
        rng = random.Random(4)
        while (await game_doc(client, gid))["to_act"] != [1]:
            r = await bot_step(client, gid, tokens, rng)
            assert r is not None and r.status_code == 200
        version = await stored_version(store, gid)
        seat1_moves = (await client.get(f"/v1/games/{gid}/legal", headers=auth(tokens[1]))).json()
        command = {"command": seat1_moves["commands"][0]}
        url = f"/v1/games/{gid}/commands"
        legal = f"/v1/games/{gid}/legal"

        assert_problem(
            await client.post(url, json=command, headers=auth(tokens[0])), 422, "rule.not_your_turn"
        )
        assert (await client.get(legal, headers=auth(tokens[0]))).json()["commands"] == []
        for token in tokens_of(b):
            assert_problem(
                await client.post(url, json=command, headers=auth(token)), 403, "auth.wrong_game"
            )
            assert_problem(await client.get(legal, headers=auth(token)), 403, "auth.wrong_game")
            assert_problem(
                await client.get(f"/v1/games/{gid}", headers=auth(token)), 403, "auth.wrong_game"
            )
        # this game's host token is valid but no seat: 403 (issue 35); another's is unknown
        hosted = auth(a["host_token"])
        assert_problem(await client.post(url, json=command, headers=hosted), 403, "auth.not_seat")
        assert_problem(await client.get(legal, headers=hosted), 403, "auth.not_seat")
        for garbage in ("nope", "mfs_" + "x" * 43, b["host_token"]):
            assert_problem(
                await client.post(url, json=command, headers=auth(garbage)),
                401,
                "auth.invalid_token",
            )
            assert_problem(
                await client.get(legal, headers=auth(garbage)), 401, "auth.invalid_token"
            )
        assert_problem(await client.post(url, json=command), 401)
        assert_problem(await client.get(legal), 401)
        assert_problem(
            await client.post(url, json=command, headers={"Authorization": tokens[1]}),
            401,
            "auth.malformed",
        )
        assert_problem(
            await client.post(url, json=command, headers={"Authorization": "Basic " + tokens[1]}),
            401,
            "auth.malformed",
        )
        assert await stored_version(store, gid) == version
        assert await stored_version(store, b["id"]) == b["version"]
        # the right token still works
        r = await client.post(url, json=command, headers=auth(tokens[1]))
        assert r.status_code == 200, r.text


# --- 5. hidden information -------------------------------------------------------------------
def _crate_colours(value: Any, path: str = "") -> list[tuple[str, Any]]:
    """Every (path, colour) of a crate-like object (one with a ``square`` and a ``colour``) and
    of ``crate_placed`` events in a JSON document."""
    found: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        if "colour" in value and ("square" in value or value.get("type") == "crate_placed"):
            found.append((path, value["colour"]))
        for k, v in value.items():
            found += _crate_colours(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += _crate_colours(v, f"{path}[{i}]")
    return found


def test_face_down_crates_stay_hidden(server: ServerProcess) -> None:
    """While the players place face-down crates, no spectator or seat answer (game, legal,
    command responses' events) carries a crate's colour — the events only its commitment —
    though PostgreSQL holds them all."""
    asyncio.run(_hidden(server))


async def _hidden(server: ServerProcess) -> None:
    async with pg(server.pg_dsn) as store, server.async_client() as client:
        r = await client.post(
            "/v1/games", json={"game": GAME, "seats": 2, "options": {"crate_placement": "players"}}
        )
        created = r.json()
        gid = created["id"]
        tokens = []
        for name in ("ada", "bob"):
            r = await client.post(
                f"/v1/games/{gid}/join", json={"name": name, "invite_code": created["invite_code"]}
            )
            tokens.append(r.json()["token"])
        rng = random.Random(5)
        placed = 0
        seen: list[tuple[str, Any]] = []
        while True:
            documents = [await client.get(f"/v1/games/{gid}")]
            documents += [await client.get(f"/v1/games/{gid}", headers=auth(t)) for t in tokens]
            documents += [
                await client.get(f"/v1/games/{gid}/legal", headers=auth(t)) for t in tokens
            ]
            phase = documents[0].json()["view"]["phase"]
            if phase != "crates":
                break
            for d in documents:
                assert d.status_code == 200
                assert b'"crate_placed"' not in d.content or b'"colour":null' in d.content
                seen += _crate_colours(d.json())
            who = documents[0].json()["to_act"][0]
            commands = documents[3 + who].json()["commands"]
            assert all(set(c) == {"type", "square"} for c in commands)
            r = await client.post(
                f"/v1/games/{gid}/commands",
                json={"command": rng.choice(commands)},
                headers=auth(tokens[who]),
            )
            assert r.status_code == 200, r.text
            placed += 1
            events = r.json()["events"]
            assert events[0]["type"] == "crate_placed"  # (the last one also rolls the dice)
            seen += _crate_colours(r.json())
        assert placed == 20
        assert seen and all(colour is None or is_sealed(colour) for _, colour in seen), [
            s for s in seen if s[1] is not None and not is_sealed(s[1])
        ][:5]
        stored = [e for e in await store.read(gid) if e.type == "crate_placed"]
        assert len(stored) == 20 and all(e.data["colour"] for e in stored)
        # the colours stay hidden in the next phase too, until the crates turn up
        doc = await game_doc(client, gid, tokens[0])
        assert all(c["colour"] is None for c in doc["view"]["crates"])


# --- 6. bad input ----------------------------------------------------------------------------
# Every kind of bad request gets a 4xx problem document with a stable code, nothing appended,
# never a 5xx: one case per parameter, so a failure names its case and hides none of the others.
Body = Callable[[list[dict[str, Any]]], bytes | str]

#: (case, body from the game's legal commands, status, code) sent to /commands.
BAD_BODIES: list[tuple[str, Body, int, str]] = [
    ("malformed JSON", lambda legal: b'{"command": ', 400, "request.invalid"),
    ("not JSON", lambda legal: b"\xff\xfe\x00garbage", 400, "request.invalid"),
    ("empty body", lambda legal: b"", 400, "request.invalid"),
    ("JSON array", lambda legal: b"[1, 2]", 400, "request.invalid"),
    ("JSON string", lambda legal: b'"place_worker"', 400, "request.invalid"),
    ("JSON null", lambda legal: b"null", 400, "request.invalid"),
    ("missing command", lambda legal: b'{"expected_version": 1}', 400, "request.invalid"),
    ("command not an object", lambda legal: b'{"command": "move"}', 400, "request.invalid"),
    (
        "version not an int",
        lambda legal: json.dumps({"command": legal[0], "expected_version": "one"}),
        400,
        "request.invalid",
    ),
    (
        "unknown field",
        lambda legal: json.dumps({"command": legal[0], "extra": 1}),
        400,
        "request.invalid",
    ),
    (
        "unknown command type",
        lambda legal: json.dumps({"command": {"type": "teleport"}}),
        422,
        "command.invalid",
    ),
    (
        "command without type",
        lambda legal: json.dumps({"command": {"square": "a1"}}),
        422,
        "command.invalid",
    ),
    (
        "command field of the wrong type",
        lambda legal: json.dumps({"command": {"type": "place_worker", "worker": 7, "square": []}}),
        422,
        "command.invalid",
    ),
    (
        "command with an unknown field",
        lambda legal: json.dumps({"command": {**legal[0], "bonus": True}}),
        422,
        "command.invalid",
    ),
    (
        "oversized body",
        lambda legal: json.dumps({"command": legal[0], "pad": "x" * 70_000}),
        413,
        "request.too_large",
    ),
]

#: (method, path — ``{gid}`` is a live game, ``{nobody}`` none —, JSON body, status, code);
#: the two that act (``commands``, ``start``) carry the live game's seat token.
BAD_ROUTES: list[tuple[str, str, Any, int, str | None]] = [
    ("GET", "/v1/games/{nobody}", None, 404, "game.not_found"),
    ("GET", "/v1/games/not-a-uuid", None, 404, None),
    ("POST", "/v1/games/not-a-uuid/commands", "legal", 404, None),
    ("POST", "/v1/games/{nobody}/join", {"name": "x", "invite_code": "y"}, 404, "game.not_found"),
    ("POST", "/v1/games/{nobody}/start", None, 404, "game.not_found"),
    ("GET", "/v1/nothing-here", None, 404, "http.not_found"),
    ("GET", "/v1/games/{gid}/commands", None, 405, "http.method_not_allowed"),
    ("DELETE", "/v1/games/{gid}", None, 405, "http.method_not_allowed"),
    ("PUT", "/v1/games", {}, 405, "http.method_not_allowed"),
    ("GET", "/v1/games?status=paused", None, 400, "request.bad_status"),
    ("GET", "/v1/games?cursor=nonsense", None, 400, "request.bad_cursor"),
    ("GET", "/v1/games?limit=0", None, 400, "request.invalid"),
]

#: (case, create-game body, status, code): none of them creates a game.
BAD_GAMES: list[tuple[str, dict[str, Any], int, str | None]] = [
    ("unknown game", {"game": "chess", "seats": 2}, 422, "lobby.unknown_game"),
    ("one seat", {"game": GAME, "seats": 1}, 422, "lobby.bad_seats"),
    ("five seats", {"game": GAME, "seats": 5}, 422, "lobby.bad_seats"),
    ("seats not an int", {"game": GAME, "seats": "two"}, 400, "request.invalid"),
    ("no seats", {"game": GAME}, 400, "request.invalid"),
    ("unknown field", {"game": GAME, "seats": 2, "colour": "red"}, 400, "request.invalid"),
    (
        "bad option value",
        {"game": GAME, "seats": 2, "options": {"crate_placement": "thrown"}},
        422,
        "options.invalid",
    ),
    (
        "unknown option",
        {"game": GAME, "seats": 2, "options": {"speed": 3}},
        422,
        "options.invalid",
    ),
    (
        "repeated colour",
        {"game": GAME, "seats": 2, "options": {"colours": ["red", "red"]}},
        422,
        None,
    ),
    (
        "players for fewer seats",
        {"game": GAME, "seats": 3, "players": ["a", "b"]},
        422,
        "lobby.bad_players",
    ),
    ("empty name", {"game": GAME, "seats": 2, "players": ["a", ""]}, 400, "lobby.bad_name"),
    ("long name", {"game": GAME, "seats": 2, "players": ["a", "b" * 65]}, 400, "lobby.bad_name"),
    (
        "nonsense position",
        {"game": GAME, "seats": 2, "position": {"board": "nonsense"}},
        422,
        "position.invalid",
    ),
    (
        "empty position",
        {"game": GAME, "seats": 2, "position": {"players": [], "crates": {}, "workers": {}}},
        422,
        None,
    ),
]


class Target(msgspec.Struct):
    """A started game on the module's server: the bad requests' target."""

    gid: str
    me: dict[str, str]
    legal: list[dict[str, Any]]


@pytest.fixture(scope="module")
def target(module_server: ServerProcess) -> Target:
    async def make() -> Target:
        async with module_server.async_client() as client:
            created = await create_started(client)
            gid, tokens = created["id"], tokens_of(created)
            me = auth(tokens[(await game_doc(client, gid))["to_act"][0]])
            legal = (await client.get(f"/v1/games/{gid}/legal", headers=me)).json()["commands"]
            return Target(gid, me, legal)

    return asyncio.run(make())


def _stored(server: ServerProcess, gid: str) -> int:
    async def read() -> int:
        async with pg(server.pg_dsn) as store:
            return await stored_version(store, gid)

    return asyncio.run(read())


@pytest.mark.parametrize(
    ("body", "status", "code"), [c[1:] for c in BAD_BODIES], ids=[c[0] for c in BAD_BODIES]
)
def test_bad_command_bodies_get_problems(
    server: ServerProcess, target: Target, body: Body, status: int, code: str
) -> None:
    before = _stored(server, target.gid)
    with server.client() as client:
        r = client.post(
            f"/v1/games/{target.gid}/commands",
            content=body(target.legal),
            headers={**target.me, "content-type": "application/json"},
        )
    assert_problem(r, status, code)
    assert _stored(server, target.gid) == before  # nothing appended


@pytest.mark.parametrize(("method", "path", "body", "status", "code"), BAD_ROUTES)
def test_unknown_games_endpoints_and_methods_get_problems(
    server: ServerProcess,
    target: Target,
    method: str,
    path: str,
    body: Any,
    status: int,
    code: str | None,
) -> None:
    url = path.format(gid=target.gid, nobody=uuid.uuid4())
    json_body = {"command": target.legal[0]} if body == "legal" else body
    with server.client() as client:
        acts = path.endswith(("/commands", "/start")) and method == "POST"
        r = client.request(method, url, json=json_body, headers=target.me if acts else {})
    assert_problem(r, status, code)


@pytest.mark.parametrize(
    ("body", "status", "code"), [c[1:] for c in BAD_GAMES], ids=[c[0] for c in BAD_GAMES]
)
def test_bad_games_are_not_created(
    server: ServerProcess, target: Target, body: dict[str, Any], status: int, code: str | None
) -> None:
    with server.client() as client:
        before = client.get("/v1/games").json()["games"]
        assert_problem(client.post("/v1/games", json=body), status, code)
        assert client.get("/v1/games").json()["games"] == before


def test_bad_joins_and_random_bodies_get_problems(server: ServerProcess) -> None:
    """Bad joins, then ~300 random bodies to /commands: a 4xx problem, never a 5xx."""
    asyncio.run(_bad_input(server))


async def _bad_input(server: ServerProcess) -> None:
    async with pg(server.pg_dsn) as store, server.async_client() as client:
        created = await create_started(client)
        gid, tokens = created["id"], tokens_of(created)
        who = (await game_doc(client, gid))["to_act"][0]
        me = auth(tokens[who])
        url = f"/v1/games/{gid}/commands"
        legal = (await client.get(f"/v1/games/{gid}/legal", headers=me)).json()["commands"]
        ctype = {"content-type": "application/json"}

        # joining
        join = f"/v1/games/{gid}/join"
        assert_problem(await client.post(join, json={"name": "x"}), 400, "request.invalid")
        assert_problem(await client.post(join, content=b"{", headers=ctype), 400, "request.invalid")

        # fuzz: random bytes, random JSON, random commands, hostile bytes — never a 5xx
        rng = random.Random(6)
        statuses: Counter[int] = Counter()
        for i in range(300):
            body = _fuzz_body(rng, legal, i)
            r = await client.post(url, content=body, headers={**me, **ctype})
            statuses[r.status_code] += 1
            assert r.status_code < 500, (body[:200], r.status_code, r.text)
            if i % 5 == 4:
                assert_problem(r, 400, "request.invalid")
            if r.status_code != 200:
                assert r.headers["content-type"].startswith("application/problem+json")
                assert isinstance(r.json().get("code"), str)
        assert statuses[400] > 50 and statuses[422] > 50, statuses
        row = await store.get_game(gid)
        assert row is not None
        events = await store.read(gid)
        assert [e.version for e in events] == list(range(1, row.version + 1))
        assert verify_chain(events, head=row.head) is None


def _fuzz_body(rng: random.Random, legal: list[dict[str, Any]], i: int) -> bytes:
    kind = i % 5
    if kind == 4:  # hostile bytes inside an otherwise good command (issue 10): always a 400
        poison = rng.choice(
            [
                b'"\\u0000"',
                b'"x\\ud800"',
                b'"\\udfff"',
                b'"caf\xe9"',
                b'"\xff\xfe"',
                b"[" * 40 + b"]" * 40,
                b"[" * 30_000 + b"]" * 30_000,
            ]
        )
        command = json.dumps(rng.choice(legal)).encode()[:-1]  # without its closing brace
        return b'{"command": ' + command + b', "note": ' + poison + b'}, "expected_version": 0}'
    if kind == 0:
        return rng.randbytes(rng.randint(0, 300))
    if kind == 1:
        text = json.dumps({"command": rng.choice(legal), "expected_version": 0})
        pos = rng.randrange(len(text))
        return (
            text[:pos] + rng.choice(['"', "{", "}", ",", "\\", "\x00", "9e999"]) + text[pos + 1 :]
        ).encode()
    if kind == 2:
        junk: list[Any] = [
            None,
            True,
            -1,
            2**70,
            1.5,
            "",
            "x" * 100,
            [],
            {},
            [1, {}],
            {"type": None},
            {"type": "move", "worker": None},
        ]
        return json.dumps(
            {"command": rng.choice(junk), "expected_version": rng.choice(junk)},
        ).encode()
    command = dict(rng.choice(legal))
    key = rng.choice([*command.keys(), "type", "steps", "colour", "seat"])
    command[key] = rng.choice(
        [None, 0, -7, 10**30, "", "zz9", ["n"], {"dir": "up"}, 3.25, [{"dir": "n", "kind": "fly"}]]
    )
    return json.dumps({"command": command, "expected_version": 0}).encode()


# --- 7. lobby --------------------------------------------------------------------------------
@pytest.mark.own_server  # lists every game of its database
def test_lobby_listing_joining_and_messages(server: ServerProcess) -> None:
    """The game list (filters, pages), joining (invite code, seats, full games) and table talk
    seen only by its addressees."""
    asyncio.run(_lobby(server))


async def _lobby(server: ServerProcess) -> None:
    async with server.async_client() as client:
        opened = []
        for _ in range(3):
            r = await client.post("/v1/games", json={"game": GAME, "seats": 3})
            opened.append(r.json())
        started = [await create_started(client, 3) for _ in range(2)]
        everything = [g["id"] for g in reversed(opened + started)]  # newest first

        listed = (await client.get("/v1/games")).json()
        assert [g["id"] for g in listed["games"]] == everything and listed["next"] is None
        only_open = (await client.get("/v1/games", params={"status": "open"})).json()
        assert [g["id"] for g in only_open["games"]] == [g["id"] for g in reversed(opened)]
        assert {g["status"] for g in only_open["games"]} == {"open"}
        active = (await client.get("/v1/games", params={"status": "active", "game": GAME})).json()
        assert [g["id"] for g in active["games"]] == [g["id"] for g in reversed(started)]
        none = (await client.get("/v1/games", params={"game": "chess"})).json()
        assert none == {"games": [], "next": None}
        # pages of two, following `next`
        pages: list[str] = []
        cursor = None
        while True:
            params = {"limit": 2} | ({} if cursor is None else {"cursor": cursor})
            page = (await client.get("/v1/games", params=params)).json()
            pages += [g["id"] for g in page["games"]]
            cursor = page["next"]
            if cursor is None:
                break
        assert pages == everything
        # a client pasting `next` into a URL by hand gets the same page
        first = (await client.get("/v1/games?limit=2")).json()
        second = await client.get(f"/v1/games?limit=2&cursor={first['next']}")
        assert second.status_code == 200, second.text
        assert [g["id"] for g in second.json()["games"]] == everything[2:4]

        # joining
        game = opened[0]
        join = f"/v1/games/{game['id']}/join"
        code = game["invite_code"]
        assert_problem(
            await client.post(join, json={"name": "eve", "invite_code": "WRONG123"}),
            403,
            "lobby.bad_invite",
        )
        r = await client.post(join, json={"name": "ada", "invite_code": code, "seat": 1})
        assert r.status_code == 200 and r.json()["seat"] == 1
        assert_problem(
            await client.post(join, json={"name": "bob", "invite_code": code, "seat": 1}),
            409,
            "lobby.seat_taken",
        )
        assert_problem(
            await client.post(join, json={"name": "bob", "invite_code": code, "seat": 3}),
            422,
            "lobby.no_such_seat",
        )
        assert_problem(
            await client.post(join, json={"name": "  ", "invite_code": code}), 400, "lobby.bad_name"
        )
        r = await client.post(join, json={"name": "bob", "invite_code": code})
        assert r.json()["seat"] == 0
        r = await client.post(join, json={"name": "cyd", "invite_code": code})
        assert r.json()["seat"] == 2 and r.json()["status"] == "active"
        assert_problem(
            await client.post(join, json={"name": "dan", "invite_code": code}), 409, "lobby.started"
        )
        full = started[0]
        assert_problem(
            await client.post(
                f"/v1/games/{full['id']}/join",
                json={"name": "dan", "invite_code": full["invite_code"]},
            ),
            409,
        )
        doc = await game_doc(client, game["id"])
        assert [s["name"] for s in doc["seats"]] == ["bob", "ada", "cyd"]

        # table talk
        gid, tokens = full["id"], tokens_of(full)
        messages = f"/v1/games/{gid}/messages"
        r = await client.post(
            messages, json={"to": [1], "text": "psst, seat 1"}, headers=auth(tokens[0])
        )
        assert r.status_code == 200, r.text
        r = await client.post(
            messages, json={"to": "all", "text": "hello all"}, headers=auth(tokens[2])
        )
        assert r.status_code == 200, r.text
        assert_problem(
            await client.post(messages, json={"to": [7], "text": "x"}, headers=auth(tokens[0])),
            422,
            "message.bad_recipients",
        )
        assert_problem(
            await client.post(messages, json={"to": "some", "text": "x"}, headers=auth(tokens[0])),
            422,
            "message.bad_recipients",
        )
        assert_problem(
            await client.post(messages, json={"to": [], "text": "x"}, headers=auth(tokens[0])),
            422,
            "message.bad_recipients",
        )
        assert_problem(
            await client.post(messages, json={"to": "all", "text": " "}, headers=auth(tokens[0])),
            422,
            "message.bad_text",
        )
        assert_problem(await client.post(messages, json={"to": "all", "text": "x"}), 401)

        def texts(doc: dict[str, Any]) -> list[str]:
            return [m["text"] for m in doc["messages"]]

        private, public = "psst, seat 1", "hello all"
        assert texts(await game_doc(client, gid, tokens[0])) == [private, public]
        assert texts(await game_doc(client, gid, tokens[1])) == [private, public]
        assert texts(await game_doc(client, gid, tokens[2])) == [public]
        assert texts(await game_doc(client, gid)) == [public]
        # the messages are stored events, and the game goes on around them
        rng = random.Random(7)
        r2 = await bot_step(client, gid, tokens, rng)
        assert r2 is not None and r2.status_code == 200, r2 and r2.text
        assert texts(await game_doc(client, gid, tokens[2])) == [public]


# --- 8. operations, catalogue, keys ----------------------------------------------------------
def test_operations_catalogue_and_receipts(server: ServerProcess) -> None:
    """/healthz, /readyz, /metrics, the OpenAPI document and its UI, /v1/rules, /v1/keys, and
    a command's receipt verifies with the published Ed25519 key."""
    with server.client() as client:
        assert client.get("/healthz").json() == {"status": "ok"}
        ready = client.get("/readyz")
        assert ready.status_code == 200
        checks = ready.json()["checks"]
        assert {name: c["ok"] for name, c in checks.items()} == {
            "postgres": True,
            "redis": True,
            "projections": True,
            "streams": True,
        }
        metrics = client.get("/metrics")
        assert metrics.status_code == 200
        assert metrics.headers["content-type"].startswith("text/plain")
        assert "manifest_http_requests_total" in metrics.text
        ui = client.get("/schema")
        assert ui.status_code == 200 and "html" in ui.headers["content-type"]
        spec = client.get("/schema/openapi.json")
        assert spec.status_code == 200
        paths = spec.json()["paths"]
        assert "/v1/games" in paths and "/v1/games/{game_id}/commands" in paths

        rules = client.get("/v1/rules").json()
        assert [r["game"] for r in rules] == [g.id for g in all_games()]
        cargo = next(r for r in rules if r["game"] == GAME)
        assert (cargo["min_seats"], cargo["max_seats"]) == (2, 4)
        for entry in rules:
            assert entry["title"] and entry["options"] and entry["position"], entry["game"]
        for schema in ("options", "position"):
            assert isinstance(cargo[schema], dict) and cargo[schema], schema
        assert "crate_placement" in json.dumps(cargo["options"])

        keys = client.get("/v1/keys").json()["keys"]
        assert len(keys) == 1 and keys[0]["alg"] == "Ed25519"
        public = Ed25519PublicKey.from_public_bytes(base64.b64decode(keys[0]["public_key"]))

        created = client.post(
            "/v1/games",
            json={"game": GAME, "seats": 2, "players": ["a", "b"], "options": RANDOM_CRATES},
        ).json()
        gid, tokens = created["id"], tokens_of(created)
        who = client.get(f"/v1/games/{gid}").json()["to_act"][0]
        command = client.get(f"/v1/games/{gid}/legal", headers=auth(tokens[who])).json()
        r = client.post(
            f"/v1/games/{gid}/commands",
            json={"command": command["commands"][0]},
            headers=auth(tokens[who]),
        )
        assert r.status_code == 200
        receipt = r.json()["receipt"]
        assert receipt["key_id"] == keys[0]["id"] and receipt["game"] == gid
        message = receipt_message(gid, receipt["version"], receipt["head"])
        assert (
            message
            == (
                f'{{"game":"{gid}","head":"{receipt["head"]}","version":{receipt["version"]}}}'
            ).encode()
        )
        public.verify(base64.b64decode(receipt["signature"]), message)  # raises if forged
        forged = receipt_message(gid, receipt["version"] + 1, receipt["head"])
        with pytest.raises(InvalidSignature):
            public.verify(base64.b64decode(receipt["signature"]), forged)
        # the metrics counted what just happened
        assert 'route="/v1/games/{id}/commands"' in client.get("/metrics").text

    # The key survives a restart (it is stored in PostgreSQL), so old receipts still verify.
    server.restart()
    with server.client() as client:
        assert client.get("/v1/keys").json()["keys"] == keys
