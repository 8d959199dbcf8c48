"""Shared helpers of the HTTP integration tests: lobby calls, bots, and the reference
computations (events straight from PostgreSQL, folded with the pure projection functions and,
independently, with the game's own ``fold``/``view``)."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import httpx
import msgspec

from domain.jolly_cargo import JOLLY_CARGO
from domain.kernel import AUDITOR, SPECTATOR, Viewer, seat
from domain.platform.table import Table, copy_table, fold_stream, game_document, legal_document
from ledger.records import StoredEvent
from service.eventstore.store import EventStore

GAME = "jolly-cargo"
PROBLEM_JSON = "application/problem+json"
RANDOM_CRATES = {"crate_placement": "random"}


def auth(token: str | None) -> dict[str, str]:
    return {} if token is None else {"Authorization": f"Bearer {token}"}


def encode(value: Any) -> bytes:
    """The bytes the server writes for a document (msgspec's JSON encoder)."""
    return msgspec.json.encode(value)


def assert_problem(
    response: httpx.Response, status: int, code: str | None = None
) -> dict[str, Any]:
    """``response`` is an RFC 9457 problem document with this status (and code)."""
    assert response.status_code == status, (response.status_code, response.text[:500])
    assert response.headers["content-type"].startswith(PROBLEM_JSON), response.headers
    body: dict[str, Any] = response.json()
    assert body["status"] == status, body
    assert isinstance(body.get("code"), str) and body["code"], body
    assert body["type"] == f"urn:manifest:problem:{body['code']}", body
    assert {"title", "detail"} <= body.keys(), body
    if code is not None:
        assert body["code"] == code, body
    return body


# --- lobby -----------------------------------------------------------------------------------
async def create_started(
    client: httpx.AsyncClient, seats: int = 2, options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A game created with one player per seat (started at once); returns the 201 body."""
    r = await client.post(
        "/v1/games",
        json={
            "game": GAME,
            "seats": seats,
            "options": RANDOM_CRATES if options is None else options,
            "players": [f"bot{i}" for i in range(seats)],
        },
    )
    assert r.status_code == 201, r.text
    body: dict[str, Any] = r.json()
    assert body["status"] == "active"
    return body


def tokens_of(created: dict[str, Any]) -> list[str]:
    return [s["token"] for s in created["seats"]]


async def game_doc(
    client: httpx.AsyncClient, game_id: str, token: str | None = None
) -> dict[str, Any]:
    r = await client.get(f"/v1/games/{game_id}", headers=auth(token))
    assert r.status_code == 200, r.text
    doc: dict[str, Any] = r.json()
    return doc


async def bot_step(
    client: httpx.AsyncClient, game_id: str, tokens: list[str], rng: random.Random
) -> httpx.Response | None:
    """One random legal command by the seat to act (None when the game is over)."""
    doc = await game_doc(client, game_id)
    if doc["status"] != "active":
        return None
    who = rng.choice(doc["to_act"])
    r = await client.get(f"/v1/games/{game_id}/legal", headers=auth(tokens[who]))
    assert r.status_code == 200, r.text
    legal = r.json()
    if not legal["commands"]:
        return None
    return await client.post(
        f"/v1/games/{game_id}/commands",
        json={"command": rng.choice(legal["commands"]), "expected_version": legal["version"]},
        headers=auth(tokens[who]),
    )


# --- PostgreSQL, read directly ---------------------------------------------------------------
@asynccontextmanager
async def pg(dsn: str, size: int = 4) -> AsyncIterator[EventStore]:
    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=size)
    try:
        yield EventStore(pool)
    finally:
        await pool.close()


def pool_of(store: EventStore) -> Any:
    return store._pool


async def commands_rows(store: EventStore, game_id: str) -> list[dict[str, Any]]:
    rows = await pool_of(store).fetch(
        "SELECT outcome, error_code, first_version, last_version, idempotency_key "
        "FROM commands WHERE game_id = $1::uuid ORDER BY received_at, id",
        game_id,
    )
    return [dict(r) for r in rows]


async def stored_version(store: EventStore, game_id: str) -> int:
    row = await store.get_game(game_id)
    assert row is not None
    return row.version


def seat_event_view(event: StoredEvent, seat_no: int, finished: bool) -> Any:
    """What seat ``seat_no`` may read of a stored event of its own command (a game event, or
    the ``seed.revealed`` that comes with the events that finish the game)."""
    if event.type == "seed.revealed":
        assert finished
        return event.data
    viewer: Viewer = AUDITOR if finished else seat(seat_no)
    data = JOLLY_CARGO.event_view(JOLLY_CARGO.decode_event(event.data), viewer)
    return msgspec.to_builtins(data)


# --- reference computations ------------------------------------------------------------------
class Reference:
    """One game folded from its stored events two ways: the pure projection fold
    (``fold_stream``/``game_document``) and the game's own ``fold``/``view``."""

    def __init__(self, game_id: str) -> None:
        self.game_id = game_id
        self.table: Table | None = None
        self.state: Any = None
        self.events: list[StoredEvent] = []

    async def refresh(self, store: EventStore) -> list[StoredEvent]:
        new = await store.read(self.game_id, after=len(self.events))
        if new:
            self.table = fold_stream(
                None if self.table is None else copy_table(self.table), new, self.game_id
            )
            game_events = [JOLLY_CARGO.decode_event(e.data) for e in new if "." not in e.type]
            if game_events:
                self.state = JOLLY_CARGO.fold(game_events, self.state)
            self.events.extend(new)
        return new

    @property
    def version(self) -> int:
        return len(self.events)

    @property
    def finished(self) -> bool:
        return self.table is not None and self.table.status == "finished"

    def document(self, key: str) -> bytes:
        assert self.table is not None
        return encode(game_document(self.table, key))

    def legal(self, seat_no: int) -> bytes:
        assert self.table is not None
        return encode(legal_document(self.table, seat_no))

    def view(self, seat_no: int | None) -> Any:
        """The game's own view for a seat (None: spectator), as JSON builtins."""
        if self.state is None:
            return None
        viewer: Viewer
        if self.finished:
            viewer = AUDITOR
        elif seat_no is None:
            viewer = SPECTATOR
        else:
            viewer = seat(seat_no)
        return msgspec.json.decode(encode(JOLLY_CARGO.view(self.state, viewer)))

    def check_document(self, body: bytes, seat_no: int | None) -> None:
        """``body`` (a GET /v1/games/{id} answer) is exactly the reference document, and its
        view is the game's own view for that viewer."""
        key = "spectator" if seat_no is None else f"seat:{seat_no}"
        got = msgspec.json.decode(body)
        expected = self.document(key)
        assert got == msgspec.json.decode(expected), (key, self.version, got.get("version"))
        assert body == expected, key
        assert got["view"] == self.view(seat_no), key
        if self.state is not None:
            assert got["to_act"] == JOLLY_CARGO.to_act(self.state)
            outcome = JOLLY_CARGO.outcome(self.state)
            assert got["result"] == (None if outcome is None else msgspec.to_builtins(outcome))

    def check_legal(self, body: bytes, seat_no: int) -> None:
        got = msgspec.json.decode(body)
        assert body == self.legal(seat_no), (seat_no, self.version, got.get("version"))
        if self.state is not None and not self.finished:
            own = msgspec.to_builtins(JOLLY_CARGO.legal(self.state, seat_no))
            assert got["commands"] == own


def check_accepted(body: dict[str, Any], stored: list[StoredEvent], seat_no: int) -> None:
    """An accepted command's answer names exactly the stored events at its versions."""
    by_version = {e.version: e for e in stored}
    versions = [e["version"] for e in body["events"]]
    assert versions, body
    assert versions == list(range(versions[0], versions[0] + len(versions))), versions
    assert body["version"] == versions[-1]
    finished = False
    for event in body["events"]:
        row = by_version[event["version"]]
        assert event["hash"] == row.hash.hex()
        assert event["prev_hash"] == row.prev_hash.hex()
        assert event["type"] == row.type
        assert event["seat"] == row.seat == seat_no
        finished = finished or row.type == "game_ended"
    last = by_version[versions[-1]]
    assert body["head"] == last.hash.hex()
    assert body["receipt"]["head"] == body["head"]
    assert body["receipt"]["version"] == body["version"]
    for event in body["events"]:
        row = by_version[event["version"]]
        assert event["data"] == seat_event_view(row, seat_no, finished), event


#: the replay's keyframe spacing (docs/api.md, "Replay"), written out: a change of it is a
#: change of the API, and should fail here
KEYFRAME_EVERY = 100


def check_replay_line(
    line: dict[str, Any], n: int, version: int, table: Table, key: str = "spectator"
) -> None:
    """A line of ``GET /replay`` (docs/api.md, "Replay"): event ``n``; the view after it
    exactly on the keyframes (every 100th event and the game's last, ``version``), equal to
    the view folded from the stored events (a finished game: everything shown)."""
    assert line["version"] == n
    assert line["event"]["version"] == n
    keyframe = n % KEYFRAME_EVERY == 0 or n == version
    assert ("view" in line) == keyframe, (n, sorted(line))
    if keyframe:
        expected = msgspec.to_builtins(game_document(table, key, everything=True).view)
        assert line["view"] == expected, n
