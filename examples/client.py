"""A short, typed Python client for Manifest's REST API (``docs/api.md``), over httpx.

    from examples.client import ManifestClient

    with ManifestClient("http://127.0.0.1:8000") as api:
        game = api.create("jolly-cargo", players=["ann", "bob"])
        seat0 = api.seat(game, 0)                   # the same client, acting as seat 0
        print(seat0.legal(game.id).commands[:3])
        seat0.command(game.id, seat0.legal(game.id).commands[0])

Errors come back as :class:`ApiError` carrying the RFC 9457 problem (``code``, ``detail``).
Only the standard library, msgspec-free, and httpx.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import httpx

JSON = dict[str, Any]


class ApiError(Exception):
    """A problem document answered by the server."""

    def __init__(self, status: int, problem: JSON) -> None:
        self.status = status
        self.problem = problem
        self.code: str = str(problem.get("code", ""))
        self.detail: str = str(problem.get("detail", ""))
        super().__init__(f"{status} {self.code}: {self.detail}")


@dataclass(frozen=True)
class Seat:
    seat: int
    name: str | None
    token: str | None


@dataclass(frozen=True)
class Created:
    id: str
    game: str
    status: str
    version: int
    host_token: str
    invite_code: str
    seats: list[Seat]


@dataclass(frozen=True)
class GameDoc:
    id: str
    game: str
    status: str
    version: int
    to_act: list[int]
    view: JSON | None
    result: JSON | None
    raw: JSON = field(repr=False)


@dataclass(frozen=True)
class Legal:
    version: int
    commands: list[JSON]


@dataclass(frozen=True)
class Accepted:
    version: int
    events: list[JSON]
    head: str
    receipt: JSON


class ManifestClient:
    """One HTTP connection pool; ``token`` (a seat or host token) is sent with every call."""

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: float = 10.0,
        http: httpx.Client | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self._own = http is None
        self.http = (
            http if http is not None else httpx.Client(base_url=self.base_url, timeout=timeout)
        )

    # --- plumbing --------------------------------------------------------------------------
    def __enter__(self) -> ManifestClient:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._own:
            self.http.close()

    def as_token(self, token: str | None) -> ManifestClient:
        """The same connection pool, acting with another token."""
        return ManifestClient(self.base_url, token, http=self.http)

    def seat(self, created: Created, seat: int) -> ManifestClient:
        token = created.seats[seat].token
        if token is None:
            raise ValueError(f"seat {seat} has no token (it is open)")
        return self.as_token(token)

    def _headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        headers = {} if self.token is None else {"Authorization": f"Bearer {self.token}"}
        return {**headers, **(extra or {})}

    def _call(
        self,
        method: str,
        path: str,
        body: JSON | None = None,
        headers: dict[str, str] | None = None,
        params: JSON | None = None,
    ) -> Any:
        r = self.http.request(
            method, path, json=body, headers=self._headers(headers), params=params
        )
        if r.status_code >= 400:
            try:
                problem = r.json()
            except ValueError:
                problem = {"code": "http.error", "detail": r.text[:200]}
            raise ApiError(r.status_code, problem)
        return r.json()

    # --- catalogue and lobby ---------------------------------------------------------------
    def rules(self) -> list[JSON]:
        rules: list[JSON] = self._call("GET", "/v1/rules")
        return rules

    def create(
        self,
        game: str,
        *,
        seats: int | None = None,
        players: list[str] | None = None,
        options: JSON | None = None,
        position: JSON | None = None,
        clock: JSON | None = None,
    ) -> Created:
        """Create a game (``clock``: its turn clock's terms, docs/api.md "Clocks")."""
        body: JSON = {"game": game, "seats": seats if seats is not None else len(players or [])}
        given = (
            ("players", players),
            ("options", options),
            ("position", position),
            ("clock", clock),
        )
        for key, value in given:
            if value is not None:
                body[key] = value
        raw = self._call("POST", "/v1/games", body)
        return Created(
            id=raw["id"],
            game=raw["game"],
            status=raw["status"],
            version=raw["version"],
            host_token=raw["host_token"],
            invite_code=raw["invite_code"],
            seats=[Seat(s["seat"], s.get("name"), s.get("token")) for s in raw["seats"]],
        )

    def join(self, game_id: str, name: str, invite_code: str, seat: int | None = None) -> Seat:
        body: JSON = {"name": name, "invite_code": invite_code}
        if seat is not None:
            body["seat"] = seat
        raw = self._call("POST", f"/v1/games/{game_id}/join", body)
        return Seat(raw["seat"], name, raw["token"])

    def games(self, *, status: str | None = None, game: str | None = None) -> JSON:
        params = {k: v for k, v in (("status", status), ("game", game)) if v is not None}
        page: JSON = self._call("GET", "/v1/games", params=params)
        return page

    # --- play ------------------------------------------------------------------------------
    def game(self, game_id: str) -> GameDoc:
        raw = self._call("GET", f"/v1/games/{game_id}")
        return GameDoc(
            raw["id"],
            raw["game"],
            raw["status"],
            raw["version"],
            list(raw.get("to_act") or []),
            raw.get("view"),
            raw.get("result"),
            raw,
        )

    def board_svg(self, game_id: str, n: int | None = None) -> str:
        """The board as the caller sees it now (or after event ``n``), as SVG text."""
        path = f"/v1/games/{game_id}" + ("" if n is None else f"/replay/{n}") + "/board.svg"
        r = self.http.get(path, headers=self._headers())
        if r.status_code >= 400:
            raise ApiError(r.status_code, r.json())
        return r.text

    def legal(self, game_id: str) -> Legal:
        raw = self._call("GET", f"/v1/games/{game_id}/legal")
        return Legal(raw["version"], list(raw["commands"]))

    def command(
        self,
        game_id: str,
        command: JSON,
        *,
        expected_version: int | None = None,
        idempotency_key: str | None = None,
    ) -> Accepted:
        body: JSON = {"command": command}
        if expected_version is not None:
            body["expected_version"] = expected_version
        key = idempotency_key or uuid.uuid4().hex
        raw = self._call(
            "POST", f"/v1/games/{game_id}/commands", body, headers={"Idempotency-Key": key}
        )
        return Accepted(raw["version"], list(raw["events"]), raw["head"], raw["receipt"])

    # --- history ---------------------------------------------------------------------------
    def replay_at(self, game_id: str, n: int) -> JSON:
        doc: JSON = self._call("GET", f"/v1/games/{game_id}/replay/{n}")
        return doc

    def replay(self, game_id: str, start: int = 1, limit: int | None = None) -> Iterator[JSON]:
        """The replay's lines (docs/api.md, "Replay"): ``{"version", "event"}`` for every
        event, plus ``"view"`` on keyframes (every 100th event and the game's last), read as
        they arrive. ``start``/``limit``: a page of it."""
        params: JSON = {"from": start} | ({} if limit is None else {"limit": limit})
        with self.http.stream(
            "GET", f"/v1/games/{game_id}/replay", headers=self._headers(), params=params
        ) as r:
            if r.status_code >= 400:
                r.read()
                raise ApiError(r.status_code, r.json())
            for line in r.iter_lines():
                if line:
                    yield json.loads(line)

    def view_at(self, game_id: str, n: int, lines: dict[int, JSON] | None = None) -> JSON:
        """The view after event ``n``: a keyframe's, when ``lines`` (the replay's lines by
        version) has one there, else asked of the server (``GET /replay/{n}``: the server folds;
        a client never folds events itself)."""
        line = None if lines is None else lines.get(n)
        if line is not None and "view" in line:
            view: JSON = line["view"]
            return view
        view = self.replay_at(game_id, n)["view"]
        return view

    def events(self, game_id: str) -> Iterator[JSON]:
        after: int | None = 0
        while after is not None:
            page = self._call(
                "GET", f"/v1/games/{game_id}/events", params={"after": after, "limit": 1000}
            )
            yield from page["events"]
            after = page["next"]

    def audit(self, game_id: str) -> JSON:
        report: JSON = self._call("GET", f"/v1/games/{game_id}/audit")
        return report

    def dispute(self, game_id: str, n: int) -> JSON:
        report: JSON = self._call("GET", f"/v1/games/{game_id}/audit/{n}")
        return report

    def keys(self) -> list[JSON]:
        keys: list[JSON] = self._call("GET", "/v1/keys")["keys"]
        return keys

    def stream(self, game_id: str) -> Iterator[JSON]:
        """The caller's game document now and after every change (Server-Sent Events)."""
        with self.http.stream(
            "GET", f"/v1/games/{game_id}/stream", headers=self._headers(), timeout=None
        ) as r:
            data: list[str] = []
            for line in r.iter_lines():
                if line.startswith("data:"):
                    data.append(line[5:].lstrip())
                elif not line and data:
                    yield json.loads("\n".join(data))
                    data = []
