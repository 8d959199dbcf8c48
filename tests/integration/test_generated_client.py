"""A generated client (issue 26): ``openapi-python-client`` (from PyPI) turns the server's own
``/schema/openapi.json`` into a Python client, offline; the client plays a whole game of each
hosted game through the server, choosing every command from ``/legal`` (a listed command, or
half the time, where ``complete`` is false, one the ``grammar`` derives), and every answer
decodes into the generated models of its game and validates against the document's schema.

The generated endpoints parse an answer into one of the union's variants by trying each in
turn; where the answer has no ``game`` field (legal, command answers, events, replay views)
the variant is the game the path names, so the test — like a client that knows its game — also
decodes the body with that game's own model (``<Game>.<Envelope>``, docs/api.md "Typed
documents")."""

from __future__ import annotations

import importlib
import json
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import httpx
import jsonschema_rs
import pytest

from domain.registry import all_games, get_game
from service.http.gameschemas import prefix

from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]

#: The generator's command line, run with an audit hook that refuses every socket: generating
#: the client needs no network (CI may have none).
OFFLINE_GENERATOR = """
import sys

def refuse(event, args):
    if event.startswith("socket.") and event not in ("socket.__new__", "socket.gethostname"):
        raise RuntimeError(f"the generator used the network: {event} {args}")

sys.addaudithook(refuse)
from openapi_python_client.cli import app
sys.argv[0] = "openapi-python-client"
sys.exit(app())
"""
PACKAGE = "manifest_generated_client"
#: The operations whose answers are not JSON (NDJSON, SVG): the generator leaves those bodies
#: to the caller (the test reads the replay's lines with the generated ``<Game>.ReplayLine``).
NOT_JSON = {
    "GET /v1/games/{game_id}/replay",
    "GET /v1/games/{game_id}/board.svg",
    "GET /v1/games/{game_id}/replay/{n}/board.svg",
}


class Generated:
    """The generated package, and the document it was generated from."""

    def __init__(self, package: ModuleType, document: dict[str, Any]) -> None:
        self.package = package
        self.api = importlib.import_module(f"{PACKAGE}.api.default")
        self.models = importlib.import_module(f"{PACKAGE}.models")
        self.document = document
        self._validators: dict[str, Any] = {}

    def module(self, name: str) -> Any:
        return importlib.import_module(f"{PACKAGE}.api.default.{name}")

    def model(self, game: str, kind: str) -> Any:
        return getattr(self.models, prefix(game) + kind)

    def validate(self, component: str, data: Any) -> None:
        """``data`` against the document's schema ``component`` (JSON Schema 2020-12)."""
        found = self._validators.get(component)
        if found is None:
            schema = {
                "$ref": f"#/components/schemas/{component}",
                "components": self.document["components"],
            }
            found = self._validators[component] = jsonschema_rs.validator_for(schema)
        errors = [f"{e.instance_path}: {e.message}"[:300] for e in found.iter_errors(data)]
        assert not errors, (component, errors[:5])


@pytest.fixture(scope="module")
def generated(
    module_server: ServerProcess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Generated]:
    """The client generated from the running server's document, imported."""
    spec = httpx.get(module_server.url + "/schema/openapi.json", timeout=30)
    assert spec.status_code == 200
    where = tmp_path_factory.mktemp("generated")
    (where / "openapi.json").write_bytes(spec.content)
    # no formatter run afterwards (the generated code is imported, not read)
    (where / "config.yaml").write_text("post_hooks: []\n")
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            OFFLINE_GENERATOR,
            "generate",
            "--path",
            str(where / "openapi.json"),
            "--output-path",
            str(where / PACKAGE),
            "--meta",
            "none",
            "--config",
            str(where / "config.yaml"),
        ],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    said = result.stdout + result.stderr
    assert result.returncode == 0, said[-4000:]
    # every schema is understood: the only pieces left out are the non-JSON answers
    assert "Unable to" not in said and "Could not" not in said, said[-4000:]
    warned = set(re.findall(r"WARNING parsing (\S+ \S+) within", said))
    assert warned == NOT_JSON, said[-4000:]
    sys.path.insert(0, str(where))
    try:
        yield Generated(importlib.import_module(PACKAGE), json.loads(spec.content))
    finally:
        sys.path.remove(str(where))
        for name in [m for m in sys.modules if m.split(".")[0] == PACKAGE]:
            del sys.modules[name]


def _decoded(gen: Generated, game: str, kind: str, response: Any, status: int = 200) -> Any:
    """The answer decoded: the generated endpoint parsed it (one of the union's variants),
    the body is valid against ``<Game>.<kind>``, and that game's generated model reads it
    and writes it back unchanged."""
    assert response.status_code == status, response.content[:500]
    assert response.parsed is not None
    data = json.loads(response.content)
    gen.validate(f"{prefix(game)}.{kind}", data)
    value = gen.model(game, kind).from_dict(data)
    assert value.to_dict() == data
    return value


def _derived(legal: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    """Commands the ``grammar`` derives from the listed that are not listed themselves
    (docs/api.md, "The legal contract"). ``steps`` paths longer than one step need the legal
    list after each step, and ``one_of`` is cosmetic: neither is used here."""
    commands: list[dict[str, Any]] = legal["commands"]
    found: list[dict[str, Any]] = []
    for rule in legal["grammar"]:
        same = [c for c in commands if c["type"] == rule["type"]]
        field = rule.get("field")
        for _ in range(4):
            if rule["form"] == "any_order":
                found += [{**c, field: rng.sample(c[field], len(c[field]))} for c in same]
            elif rule["form"] == "range":
                low, high = rule["minimum"], rule["maximum"]
                found += [{**c, field: rng.randint(low, high)} for c in same]
            elif rule["form"] == "assignment":
                items = rng.sample(rule["items"], len(rule["items"]))
                placed = [
                    {rule["item"]: i, rule["choice"]: rng.choice(rule["choices"])} for i in items
                ]
                found.append({"type": rule["type"], field: placed})
    return [c for c in found if c not in commands]


def _seats(game: str) -> int:
    rules = get_game(game)
    return max(rules.min_seats, 2) if rules.max_seats > 1 else 1


#: Whole games over HTTP of more than 30 s on a busy two-core machine (measured 50-80 s at load
#: 12; 20-25 s on a quiet one), like the CARGO game of test_example_client: CI runs them.
LONG = {"jolly-cargo", "empire-builder"}


@pytest.mark.parametrize(
    "game",
    [pytest.param(g.id, marks=[pytest.mark.slow] if g.id in LONG else []) for g in all_games()],
)
def test_a_generated_client_plays_a_whole_game(
    generated: Generated, server: ServerProcess, game: str
) -> None:
    gen, api = generated, generated.package
    rng = random.Random(f"generated {game}")
    anon = api.Client(base_url=server.url, timeout=httpx.Timeout(30))
    seats = _seats(game)
    create = gen.model(game, "CreateGame").from_dict(
        {
            "game": game,
            "seats": seats,
            "players": [f"gen{i}" for i in range(seats)],
            "options": get_game(game).bot_options or {},
        }
    )
    r = gen.module("v1_games_create_game").sync_detailed(client=anon, body=create)
    created = _decoded(gen, game, "CreatedGame", r, 201)
    assert isinstance(r.parsed, gen.model(game, "CreatedGame"))  # told apart by `game`
    gid = created.id
    clients = {
        s.seat: api.AuthenticatedClient(
            base_url=server.url, token=s.token, timeout=httpx.Timeout(30)
        )
        for s in created.seats
    }
    get_game_doc = gen.module("v1_games_game_id_get_game")
    get_legal = gen.module("v1_games_game_id_legal_get_legal")
    post_command = gen.module("v1_games_game_id_commands_post_command")
    get_events = gen.module("v1_games_game_id_events_get_events")
    derived = derivable = commands = 0
    read_midway = False
    to_act = list(created.to_act)
    while True:
        if not to_act:
            r = get_game_doc.sync_detailed(game_id=gid, client=anon)
            doc = _decoded(gen, game, "GameDocument", r)
            assert isinstance(r.parsed, gen.model(game, "GameDocument"))  # by `game`
            if doc.status == "finished":
                break
            to_act = doc.to_act
        assert commands < 5_000, "no ending"
        seat = rng.choice(to_act)
        r = get_legal.sync_detailed(gid, client=clients[seat])
        legal = _decoded(gen, game, "LegalDocument", r)
        raw = legal.to_dict()
        grown = _derived(raw, rng) if not raw["complete"] else []
        derivable += bool(grown)
        if grown and (not derived or rng.random() < 0.5):  # the first one always
            command = rng.choice(grown)
            derived += 1
        else:
            command = rng.choice(raw["commands"])
        body = gen.model(game, "CommandBody").from_dict(
            {"command": command, "expected_version": legal.version}
        )
        r = post_command.sync_detailed(gid, client=clients[seat], body=body)
        to_act = _decoded(gen, game, "CommandAnswer", r).to_act
        commands += 1
        if not read_midway and legal.version >= 12:
            # the events as a spectator and a seat read them live: hidden values are
            # commitments where their event types declare them
            read_midway = True
            for reader in (anon, clients[0]):
                page = get_events.sync_detailed(gid, client=reader, limit=1000)
                _decoded(gen, game, "EventsPage", page)
    assert read_midway
    assert derived > 0 or not derivable, "the grammar was never used"
    final = doc.version
    assert doc.result is not None and len(doc.result.to_dict()["scores"]) == seats
    # every event, as a page of the generated client
    after, seen = 0, 0
    while True:
        page = _decoded(
            gen, game, "EventsPage", get_events.sync_detailed(gid, client=anon, after=after)
        )
        seen += len(page.events)
        if page.next_ is None:
            break
        after = page.next_
    assert seen == final
    replay_at = gen.module("v1_games_game_id_replay_n_get_replay_at")
    for n in (1, final // 2, final):
        _decoded(gen, game, "ReplayView", replay_at.sync_detailed(gid, n, client=anon))
    # the replay's NDJSON lines (the generator leaves that body to the caller)
    lines = httpx.get(f"{server.url}/v1/games/{gid}/replay", timeout=60).content.splitlines()
    assert len(lines) == final
    for line in lines:
        data = json.loads(line)
        gen.validate(f"{prefix(game)}.ReplayLine", data)
        assert gen.model(game, "ReplayLine").from_dict(data).to_dict() == data
    # a dispute file: the state before as views of the game, its events typed
    dispute = gen.module("v1_games_game_id_audit_n_get_dispute")
    r = dispute.sync_detailed(gid, final, client=anon)
    _decoded(gen, game, "DisputeFile", r)
    audit = gen.module("v1_games_game_id_audit_get_audit").sync_detailed(gid, client=anon)
    assert audit.status_code == 200 and audit.parsed.ok


def test_a_generated_client_asks_empire_builder_its_queries(
    generated: Generated, server: ServerProcess
) -> None:
    """The query answers are typed too: each of Empire Builder's three, through the client."""
    gen, api = generated, generated.package
    game = "empire-builder"
    anon = api.Client(base_url=server.url)
    create = gen.model(game, "CreateGame").from_dict(
        {"game": game, "seats": 2, "players": ["a", "b"]}
    )
    created = _decoded(
        gen,
        game,
        "CreatedGame",
        gen.module("v1_games_create_game").sync_detailed(client=anon, body=create),
        201,
    )
    seat = created.to_act[0]
    token = next(s.token for s in created.seats if s.seat == seat)
    me = api.AuthenticatedClient(base_url=server.url, token=token)
    ask = gen.module("v1_games_game_id_queries_post_query")
    for query in (
        {"type": "plan", "to": "Chicago"},
        {"type": "survey", "path": [0, 1]},
        {"type": "auto_move", "toward": 0},
    ):
        body = gen.model(game, "QueryBody").from_dict({"query": query})
        answer = _decoded(
            gen, game, "QueryAnswer", ask.sync_detailed(created.id, client=me, body=body)
        )
        assert answer.answer.to_dict()["type"] == query["type"]
