"""One structured log line per request with its request id, game, seat, command type and
latency; commands counted per game and outcome in /metrics."""

from __future__ import annotations

import json
import re
import uuid

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
