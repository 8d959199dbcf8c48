"""Attacks on resign and abort over HTTP (issue 40) kept as tests (review3940): no host token,
spectator, another game's seat or a removed seat ends a game; nothing is ended before it starts;
two endings racing (two resignations, a resignation and an abort) leave exactly one ending; a
resignation sent again with its idempotency key answers again and appends nothing; the
server's own expiries after a resignation never give the resigned seat a deadline."""

from __future__ import annotations

import asyncio

import pytest
from litestar.testing import AsyncTestClient

from service.http.app import create_app
from service.settings import Settings

from .test_endings_http import ABORT, RESIGN, Client, auth, options_of

pytestmark = [pytest.mark.integration]


def test_who_may_not_end_a_game_and_endings_racing(fresh_database: str, redis_url: str) -> None:
    asyncio.run(_attacks(fresh_database, redis_url))


async def _attacks(fresh_database: str, redis_url: str) -> None:
    game = "cargo-empire"
    settings = Settings(
        pg_dsn=fresh_database, redis_url=redis_url, redis_prefix="rev3940:", access_log=False
    )
    async with AsyncTestClient(app=create_app(settings)) as raw:
        c = Client(raw, game)
        # --- before the start: a joined seat, then removed by the host ----------------------
        body = {"game": game, "seats": 2, "options": options_of(game)}
        r = await raw.post("/v1/games", json=body)
        assert r.status_code == 201, r.text
        created = r.json()
        base, host = f"/v1/games/{created['id']}", created["host_token"]
        invite = {"invite_code": created["invite_code"], "name": "a"}
        r = await raw.post(base + "/join", json=invite)
        joined = r.json()
        for command in (RESIGN, ABORT):
            r = await c.send(base, joined["token"], command)
            assert r.status_code == 409 and r.json()["code"] == "game.not_started", r.text
        r = await raw.delete(base + f"/seats/{joined['seat']}", headers=auth(host))
        assert r.status_code == 200, r.text
        for command in (RESIGN, ABORT):
            r = await c.send(base, joined["token"], command)
            assert r.status_code == 401, r.text
        # --- a started game: the host, a spectator, another game's seat ---------------------
        base, tokens = await c.new()
        _, other = await c.new()
        r = await raw.get(base)
        version = r.json()["version"]
        for command in (RESIGN, ABORT):
            r = await raw.post(base + "/commands", json={"command": command})
            assert r.status_code == 401, r.text
            r = await c.send(base, other[0], command)
            assert r.status_code == 403 and r.json()["code"] == "auth.wrong_game", r.text
        assert (await raw.get(base)).json()["version"] == version
        # the host token of a started game (its own game)
        r = await raw.post(
            "/v1/games", json={"game": game, "seats": 2, "options": options_of(game),
                               "players": ["h", "i"]},
        )  # fmt: skip
        hosted = r.json()
        hbase = f"/v1/games/{hosted['id']}"
        for command in (RESIGN, ABORT):
            r = await c.send(hbase, hosted["host_token"], command)
            assert r.status_code == 403 and r.json()["code"] == "auth.not_seat", r.text
        assert (await raw.get(hbase)).json()["status"] == "active"

        # --- two resignations at once, no expected version: exactly one --------------------
        first, second = await asyncio.gather(
            c.send(base, tokens[0], RESIGN), c.send(base, tokens[1], RESIGN)
        )
        codes = sorted([first.status_code, second.status_code])
        assert codes == [200, 409], (first.text, second.text)
        events = (await raw.get(base + "/events")).json()["events"]
        assert len([e for e in events if e["type"] == "game.resigned"]) == 1
        doc = await c.doc(base)
        assert doc["status"] == "finished" and doc["result"]["reason"] == "resigned"
        winner = 1 if first.status_code == 200 else 0
        assert doc["result"]["winners"] == [winner]
        await c.audit_ok(base)

        # --- a resignation against an abort, no expected version: exactly one ending --------
        base, tokens = await c.new()
        resign, abort = await asyncio.gather(
            c.send(base, tokens[0], RESIGN), c.send(base, tokens[1], ABORT)
        )
        assert sorted([resign.status_code, abort.status_code]) == [200, 409], (
            resign.text,
            abort.text,
        )
        events = (await raw.get(base + "/events")).json()["events"]
        endings = [e["type"] for e in events if e["type"] in ("game.resigned", "game.aborted")]
        assert len(endings) == 1, endings
        doc = await c.doc(base)
        assert doc["result"]["reason"] == ("resigned" if resign.status_code == 200 else "aborted")
        await c.audit_ok(base)

        # --- a resignation sent again with its key: the same answer, nothing appended -------
        base, tokens = await c.new()
        headers = {**auth(tokens[0]), "Idempotency-Key": "resign-once"}
        r1 = await raw.post(base + "/commands", json={"command": RESIGN}, headers=headers)
        assert r1.status_code == 200, r1.text
        before = (await raw.get(base + "/events")).json()["events"]
        r2 = await raw.post(base + "/commands", json={"command": RESIGN}, headers=headers)
        assert r2.status_code == 200 and r2.json() == r1.json(), r2.text
        assert (await raw.get(base + "/events")).json()["events"] == before
        # and the other seat, after the end, neither resigns nor aborts
        for command in (RESIGN, ABORT):
            r = await c.send(base, tokens[1], command)
            assert r.status_code == 409 and r.json()["code"] == "game.finished", r.text


def test_a_resigned_seat_is_never_given_a_deadline_by_the_others_expiries(
    fresh_database: str, redis_url: str
) -> None:
    asyncio.run(_expiries_after_a_resignation(fresh_database, redis_url))


async def _expiries_after_a_resignation(fresh_database: str, redis_url: str) -> None:
    settings = Settings(
        pg_dsn=fresh_database, redis_url=redis_url, redis_prefix="rev3940c:", access_log=False
    )
    async with AsyncTestClient(app=create_app(settings)) as raw:
        r = await raw.post(
            "/v1/games",
            json={"game": "cargo-empire", "seats": 3, "players": ["a", "b", "c"],
                  "clock": {"kind": "turn", "seconds": 1, "sit_in_after": 0}},
        )  # fmt: skip
        assert r.status_code == 201, r.text
        created = r.json()
        base, tokens = f"/v1/games/{created['id']}", [s["token"] for s in created["seats"]]
        r = await raw.post(base + "/commands", json={"command": RESIGN}, headers=auth(tokens[1]))
        assert r.status_code == 200, r.text
        seen: list[dict[str, object]] = []
        deadline = asyncio.get_running_loop().time() + 60
        expiries = 0
        while expiries < 4:  # wait on the server's own expiries, one seat after the other
            assert asyncio.get_running_loop().time() < deadline, seen[-3:]
            events = (await raw.get(base + "/events")).json()["events"]
            expiries = len([e for e in events if e["type"] == "clock.expired"])
            seen = [e["data"] for e in events if e["type"] == "clock.set"]
            await asyncio.sleep(0.05)
        assert seen
        for data in seen[1:]:  # every clock.set after the resignation
            seats = data["seats"]
            assert isinstance(seats, list) and seats[1].get("deadline") is None, data
        expired = [e["seat"] for e in events if e["type"] == "clock.expired"]
        assert 1 not in expired, expired
        doc = (await raw.get(base)).json()
        assert 1 not in doc["to_act"] and doc["to_act"], doc["to_act"]
        r = await raw.get(base + "/audit")
        assert r.status_code == 200, r.text
        assert r.json()["ok"] is not False, r.text  # live: the chain checked, the rules later
