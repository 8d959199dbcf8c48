"""One structured log line per request with its request id, game, seat, command type and
latency; commands counted per game and outcome in /metrics."""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from .apihelp import GAME, RANDOM_CRATES, auth, tokens_of
from .serverproc import ServerProcess

pytestmark = pytest.mark.integration


def test_access_log_line_and_command_metrics(fresh_database: str, redis_url: str) -> None:
    server = ServerProcess(fresh_database, redis_url)
    server.env.update({"MANIFEST_ACCESS_LOG": "1", "MANIFEST_LOG_LEVEL": "info"})
    server.start()
    try:
        with server.client() as client:
            created = client.post(
                "/v1/games",
                json={
                    "game": "jolly-cargo",
                    "seats": 2,
                    "players": ["a", "b"],
                    "options": RANDOM_CRATES,
                },
            ).json()
            base = f"/v1/games/{created['id']}"
            seat = client.get(base).json()["to_act"][0]
            token = tokens_of(created)[seat]
            other = tokens_of(created)[1 - seat]
            legal = client.get(base + "/legal", headers=auth(token)).json()
            ok = client.post(
                base + "/commands",
                headers={**auth(token), "x-request-id": "req-accepted-1"},
                json={"command": legal["commands"][0]},
            )
            assert ok.status_code == 200 and ok.headers["x-request-id"] == "req-accepted-1"
            refused = client.post(
                base + "/commands", headers=auth(other), json={"command": {"type": "end_turn"}}
            )
            assert refused.status_code == 422
            metrics = client.get("/metrics").text
        lines = [
            json.loads(x) for x in server.log_path.read_text().splitlines() if x.startswith("{")
        ]
        line = next(x for x in lines if x.get("request_id") == "req-accepted-1")
        assert line["event"] == "request" and line["status"] == 200
        assert line["game"] == created["id"] and line["seat"] == seat
        assert line["command"] == legal["commands"][0]["type"]
        assert isinstance(line["latency_ms"], float) and line["latency_ms"] > 0
        assert 'manifest_commands_total{game="jolly-cargo",outcome="accepted"} 1.0' in metrics
        assert 'outcome="rule.not_your_turn"' in metrics or 'outcome="rule.' in metrics
    finally:
        server.close()


@pytest.mark.real_process  # it counts every route label of /metrics: the process's own alone
def test_metrics_labels_are_routes_not_paths(server: ServerProcess) -> None:
    """The request metrics are labelled by route: a client sending many paths (game ids,
    numbers, unknown games, unrouted paths) adds no label of its own — each label is a
    server memory cell for as long as the process lives."""
    with server.client() as client:
        created = client.post(
            "/v1/games", json={"game": GAME, "seats": 2, "players": ["a", "b"]}
        ).json()
        game_id = created["id"]
        for n in range(1, 4):
            client.get(f"/v1/games/{game_id}/replay/{n}")
        for i in range(20):
            client.get(f"/v1/games/{uuid.uuid4()}")  # 404: unknown games
            client.get(f"/v1/games/nothing-{i}/legal")  # routed, then 404: not a game id
            client.get(f"/v1/rules/nothing-{i}/assets/map")  # routed, then 404: no such game
            client.get(f"/v1/nothing-{i}")  # not routed
        metrics = client.get("/metrics").text
    routes = set(re.findall(r'manifest_http_requests_total\{[^}]*route="([^"]*)"', metrics))
    assert "/v1/games/{id}/replay/{n}" in routes and "/v1/games/{id}" in routes, routes
    assert not any(game_id in r or "nothing" in r for r in routes), routes
    assert len(routes) < 10, routes


def _log_lines(server: ServerProcess) -> list[dict[str, Any]]:
    return [json.loads(x) for x in server.log_path.read_text().splitlines() if x.startswith("{")]


def test_every_answer_is_logged_and_counted_with_the_status_sent(
    fresh_database: str, redis_url: str
) -> None:
    """Issue 35: a client's mistake answered by a middleware (the hardening's 404, 400 and 415,
    the quota's 429), by the router (no route, 405) or by litestar (413) was logged and counted
    as ``status="500"`` and had no ``X-Request-Id``; the access log sat inside the route's
    middleware and never saw those answers. Each is now logged and counted as sent, with its
    id — the client's own when it sent one."""
    server = ServerProcess(
        fresh_database,
        redis_url,
        MANIFEST_ACCESS_LOG="1",
        MANIFEST_LOG_LEVEL="info",
        MANIFEST_MAX_BODY="1024",
        MANIFEST_QUOTA_CREATE="1",
        MANIFEST_STREAMS_PER_PROCESS="2",
        MANIFEST_STREAMS_SEAT_RESERVE="1",
    )
    server.start()
    try:
        with server.client() as client:
            created = client.post(
                "/v1/games", json={"game": GAME, "seats": 2, "players": ["a", "b"]}
            ).json()
            base = f"/v1/games/{created['id']}"
            token = tokens_of(created)[0]
            cmd = base + "/commands"
            end_turn = {"command": {"type": "end_turn"}}
            json_ct = {"content-type": "application/json"}
            cases: list[tuple[str, int, Callable[[dict[str, str]], httpx.Response]]] = [
                ("not-a-game-id", 404, lambda h: client.get("/v1/games/abc", headers=h)),
                ("unknown-game", 404, lambda h: client.get(f"/v1/games/{uuid.uuid4()}", headers=h)),
                ("unrouted", 404, lambda h: client.get("/v1/nothing", headers=h)),
                ("bad-method", 405, lambda h: client.delete("/v1/games", headers=h)),
                ("no-token", 401, lambda h: client.post(cmd, json=end_turn, headers=h)),
                (
                    "string-version",
                    400,
                    lambda h: client.post(
                        cmd,
                        json={**end_turn, "expected_version": "3"},
                        headers={**h, **auth(token)},
                    ),
                ),
                (
                    "unknown-field",
                    400,
                    lambda h: client.post(
                        cmd, json={**end_turn, "colour": 1}, headers={**h, **auth(token)}
                    ),
                ),
                (
                    "missing-field",
                    400,
                    lambda h: client.post(cmd, json={}, headers={**h, **auth(token)}),
                ),
                (
                    "no-content-type",
                    415,
                    lambda h: client.post(cmd, content=b"{}", headers={**h, **auth(token)}),
                ),
                (
                    "bad-idempotency-key",
                    400,
                    lambda h: client.post(
                        cmd,
                        json=end_turn,
                        headers={**h, **auth(token), "idempotency-key": "a b"},
                    ),
                ),
                (
                    "malformed-json",
                    400,
                    lambda h: client.post(
                        cmd, content=b'{"command": ', headers={**h, **auth(token), **json_ct}
                    ),
                ),
                (
                    "too-large",
                    413,
                    lambda h: client.post(
                        cmd,
                        content=b'{"x": "' + b"a" * 2000 + b'"}',
                        headers={**h, **auth(token), **json_ct},
                    ),
                ),
                (
                    "quota",
                    429,
                    lambda h: client.post("/v1/games", json={"game": GAME, "seats": 2}, headers=h),
                ),
            ]
            seen: dict[str, int] = {}
            for name, status, send in cases:
                rid = f"err-{name}"
                r = send({"x-request-id": rid})
                assert r.status_code == status, (name, r.status_code, r.text[:300])
                assert r.headers.get("x-request-id") == rid, (name, r.headers)
                seen[rid] = status
                anonymous = send({})  # no id sent: the server makes one
                assert anonymous.status_code == status, name
                assert re.fullmatch(r"[0-9a-f]{32}", anonymous.headers.get("x-request-id", ""))
            # a spectator's stream past the process's cap: 503, sent by the handler
            with client.stream("GET", base + "/stream", headers={"x-request-id": "open"}) as held:
                assert held.status_code == 200
                r = client.get(base + "/stream", headers={"x-request-id": "err-streams"})
                assert r.status_code == 503, r.text
                assert r.headers.get("x-request-id") == "err-streams"
                seen["err-streams"] = 503
            metrics = client.get("/metrics").text

        deadline = time.monotonic() + 10
        while True:
            logged = {
                x["request_id"]: x["status"]
                for x in _log_lines(server)
                if x.get("event") == "request" and x.get("request_id") in seen
            }
            if len(logged) == len(seen) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert logged == seen
        counted = re.findall(
            r'^manifest_http_requests_total\{method="(\w+)",route="([^"]*)",status="(\d+)"\}',
            metrics,
            re.MULTILINE,
        )
        statuses = {status for _, _, status in counted}
        assert "500" not in statuses, metrics
        assert {str(s) for s in seen.values()} <= statuses, statuses
        assert ("POST", "/v1/games/{id}/commands", "415") in counted, counted
        assert ("GET", "/v1/games/{id}", "404") in counted, counted
        assert ("GET", "unrouted", "404") in counted, counted  # one label, not its path
    finally:
        server.close()
