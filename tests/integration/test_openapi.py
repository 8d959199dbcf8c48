"""The OpenAPI document tells the truth (issue 10): every route with its answer's schema, every
status it can answer with the problem schema, the bearer scheme, ``Idempotency-Key``; ``Allow``
on 405; ``docs/api.md`` names every path; and Schemathesis, run against the live server with a
bounded budget and every check, finds nothing."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from domain.registry import all_games
from service.http import gameschemas, nulfree, openapi
from service.http.app import create_app
from service.http.openapi import JSON
from service.settings import Settings

from .serverproc import ROOT, ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]
HERE = Path(__file__).resolve().parent / "schemathesis"
#: examples per operation and phase: enough to reach every route and status, under ~90 s here
MAX_EXAMPLES = 5


def _document() -> dict[str, Any]:
    """The document ``/schema/openapi.json`` serves (no database needed to build it)."""
    from litestar._openapi.plugin import OpenAPIPlugin

    app = create_app(Settings(pg_dsn="postgresql://unused", access_log=False))
    doc: dict[str, Any] = app.plugins.get(OpenAPIPlugin).provide_openapi_schema()
    return doc


def test_every_route_is_documented_with_its_statuses() -> None:
    doc = _document()
    routes = {(m, p) for p, ops in doc["paths"].items() for m in ops}
    assert routes == set(openapi.OPERATIONS), routes ^ set(openapi.OPERATIONS)
    assert doc["components"]["securitySchemes"]["bearer"] == {
        **doc["components"]["securitySchemes"]["bearer"],
        "type": "http",
        "scheme": "bearer",
    }
    problem = {"$ref": "#/components/schemas/ProblemDocument"}
    for (method, path), (status, media, _, security, extra) in openapi.OPERATIONS.items():
        operation = doc["paths"][path][method]
        responses = operation["responses"]
        assert str(status) in responses and media in responses[str(status)]["content"]
        for code in {400, 429, *extra} - {206, 304}:  # 206: a part of the body itself
            assert responses[str(code)]["content"]["application/problem+json"]["schema"] == problem
        assert "Retry-After" in responses["429"]["headers"]
        if method == "post":
            assert "413" in responses, path
            assert "415" in responses, path  # a body not labelled JSON (request hygiene)
        if security == "required":
            assert operation["security"] == [{"bearer": []}]
            assert {"401", "403"} <= responses.keys()
    commands = doc["paths"]["/v1/games/{game_id}/commands"]["post"]
    assert any(
        p["name"] == "Idempotency-Key" and p["in"] == "header" for p in commands["parameters"]
    )
    schemas = doc["components"]["schemas"]
    variants = schemas["CommandBody"]["anyOf"]  # one per game: its typed commands
    assert len(variants) == len(all_games())
    for variant in variants:
        body = _resolve(schemas, variant)
        assert body.get("additionalProperties") is False
        version = body["properties"]["expected_version"]
        assert {"type": "integer", "minimum": 0} in version["anyOf"], version
    games = sorted(g.id for g in all_games())
    create = schemas["CreateGame"]
    assert create["discriminator"]["propertyName"] == "game"
    assert sorted(create["discriminator"]["mapping"]) == games
    for game, target in create["discriminator"]["mapping"].items():
        variant = schemas[target.rsplit("/", 1)[1]]
        assert variant["properties"]["game"] == {"const": game}
        assert variant["additionalProperties"] is False


def test_every_answer_of_every_operation_names_its_x_request_id() -> None:
    """Every answer carries ``X-Request-Id`` (issue 35: errors included, since the access log
    wraps the whole app), so every answer of every operation lists it, as ``Retry-After`` is
    listed on a 429: a client generated from the document can read it."""
    doc = _document()
    missing = [
        (method, path, status)
        for path, ops in doc["paths"].items()
        for method, op in ops.items()
        for status, answer in op["responses"].items()
        if "X-Request-Id" not in answer.get("headers", {})
    ]
    assert missing == [], missing


def _resolve(schemas: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema or len(schema.get("allOf", [])) == 1:
        schema = schema["allOf"][0] if "allOf" in schema else schema
        schema = schemas[schema["$ref"].rsplit("/", 1)[1]] if "$ref" in schema else schema
    return schema


def test_each_game_has_named_schemas_of_its_view_commands_and_events() -> None:
    """Issue 26: a client finds each game's typed values by name (docs/api.md, "Typed
    documents"): ``<Game>.Command`` and ``<Game>.Event`` are unions discriminated by ``type``
    over the game's own Structs, the game document is a union discriminated by ``game`` whose
    variant holds ``<Game>.View``, and an event document's ``data`` is the game's or the
    platform's event."""
    doc = _document()
    schemas = doc["components"]["schemas"]
    game_doc = schemas["GameDocument"]
    assert game_doc["discriminator"]["propertyName"] == "game"
    for rules in all_games():
        p = gameschemas.prefix(rules.id)
        for kind, union in (("Command", rules.command_type), ("Event", rules.event_type)):
            schema = schemas[f"{p}.{kind}"]
            assert schema["discriminator"]["propertyName"] == "type"
            tags = sorted(schema["discriminator"]["mapping"])
            assert tags == sorted(
                msgspec.inspect.type_info(t).tag  # type: ignore[attr-defined]
                for t in typing.get_args(union)
            )
            for target in schema["discriminator"]["mapping"].values():
                assert target.startswith(f"#/components/schemas/{p}."), target
        for kind in ("Options", "Position"):
            assert _resolve(schemas, schemas[f"{p}.{kind}"])["type"] == "object"
        variant = schemas[game_doc["discriminator"]["mapping"][rules.id].rsplit("/", 1)[1]]
        assert {"$ref": f"#/components/schemas/{p}.View"} in variant["properties"]["view"]["anyOf"]
        data = schemas[f"{p}.EventDocument"]["properties"]["data"]
        mapping = schemas[data["$ref"].rsplit("/", 1)[1]]["discriminator"]["mapping"]
        assert {"lobby.created", "table.message", "seed.revealed"} <= set(mapping)
        # the view is the game's own type: an object with the view's fields, not free-form
        view = _resolve(schemas, schemas[f"{p}.View"])
        assert view["type"] == "object", (rules.id, view)
        assert set(view["properties"]) == set(rules.view_type.__struct_fields__), rules.id


def test_the_turn_clock_is_typed_in_documents_events_and_the_create_body() -> None:
    """Issue 31: a clocked game's ``clock`` part (optional: absent without a clock) is the
    typed ``ClockDocument`` in every game's document variant, the create body's ``clock`` is
    ``ClockTerms``, and every clock event is in each game's event data union."""
    schemas = _document()["components"]["schemas"]
    clock = schemas["ClockDocument"]
    assert set(clock["required"]) == {"terms", "seats"}
    seat = schemas["SeatClockDocument"]["properties"]
    assert {"running", "since", "deadline", "bank_ms", "expiries", "sitting_in"} <= set(seat)
    game_doc = schemas["GameDocument"]
    for rules in all_games():
        p = gameschemas.prefix(rules.id)
        variant = schemas[game_doc["discriminator"]["mapping"][rules.id].rsplit("/", 1)[1]]
        assert variant["properties"]["clock"] == {"$ref": "#/components/schemas/ClockDocument"}
        assert "clock" not in variant.get("required", [])
        data = schemas[f"{p}.EventDocument"]["properties"]["data"]
        mapping = schemas[data["$ref"].rsplit("/", 1)[1]]["discriminator"]["mapping"]
        clock_events = {"clock.set", "clock.expired", "clock.sat_in", "clock.bot", "clock.returned"}
        assert clock_events <= set(mapping), rules.id
    create = _resolve(schemas, schemas["CreateGame"]["oneOf"][0])
    assert "ClockTerms" in json.dumps(create["properties"]["clock"])


def test_hidden_values_may_be_commitments_where_declared() -> None:
    """An event as a caller reads it holds ``{"commitment": ...}`` for a value hidden from
    the caller: the schema admits one exactly where the event type declares a hidden path."""
    schemas = _document()["components"]["schemas"]
    commitment = {"$ref": "#/components/schemas/Commitment"}
    placed = schemas["JollyCargo.CratePlaced"]["properties"]
    assert commitment in placed["colour"]["anyOf"]
    assert "anyOf" not in placed["square"] or commitment not in placed["square"]["anyOf"]
    drawn = schemas["CargoEmpire.CardsDrawn"]["properties"]["cards"]["items"]
    assert commitment in drawn["anyOf"]
    loaded = schemas["CuriousCargo.PositionLoaded"]["properties"]["position"]
    player = loaded["properties"]["players"]["items"]["properties"]
    assert commitment in player["cards"]["anyOf"] and commitment in player["kept"]["anyOf"]
    # the position a client sends (CreateGame) admits none
    position = schemas["CuriousCargo.Position"]
    assert "Commitment" not in str(position)
    assert commitment in schemas["Platform.TableMessage"]["properties"]["text"]["anyOf"]


def _strings(schema: Any, where: str) -> list[tuple[str, Any]]:
    """Every string schema and free-form object schema under ``schema``, with its place."""
    found: list[tuple[str, Any]] = []
    if isinstance(schema, list):
        for i, item in enumerate(schema):
            found += _strings(item, f"{where}[{i}]")
    elif isinstance(schema, dict):
        if schema.get("type") in ("string", "object"):
            found.append((where, schema))
        for key, value in schema.items():
            if key in ("properties",):
                for name, sub in value.items():
                    found += _strings(sub, f"{where}.{name}")
            elif key in ("items", "anyOf", "oneOf", "allOf", "additionalProperties"):
                found += _strings(value, f"{where}.{key}")
    return found


def test_the_schema_says_no_request_string_holds_a_nul() -> None:
    """What the hardening refuses (a NUL anywhere) is in the schema: every request string has a
    pattern (NUL_FREE, or a stricter one of its own), keys of free-form objects too, and their
    values are NUL-free JSON; so Schemathesis generates NUL only in negative cases."""
    doc = _document()
    schemas = doc["components"]["schemas"]
    places: list[tuple[str, Any]] = []
    bodies = ["CreateGame", "JoinGame", "CommandBody", "MessageBody", "QueryBody"]
    for name in openapi._reachable(schemas, bodies):  # each game's typed values too
        places += _strings(schemas[name], name)
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            for param in op.get("parameters", []):
                places += _strings(param["schema"], f"{method} {path} {param['name']}")
    if "NulFreeJson" in schemas:  # only while a free-form request object refers to it
        places += _strings(schemas["NulFreeJson"], "NulFreeJson")
    assert len(places) > 100
    pattern = re.compile(nulfree.NUL_FREE)
    for where, schema in places:
        if schema["type"] == "string":
            if "enum" in schema:
                continue
            assert "pattern" in schema, where
            assert not re.fullmatch(schema["pattern"], "a\x00b"), where
        elif "properties" not in schema:  # a map: its keys NUL-free, its values checked above
            assert schema["propertyNames"] == {"pattern": nulfree.NUL_FREE}, where
            assert isinstance(schema["additionalProperties"], dict), where
        else:  # a Struct: no key beyond its own (Schemathesis would add one with a NUL)
            assert schema.get("additionalProperties") is False, where
    assert pattern.fullmatch("any text") and not pattern.fullmatch("\x00")
    assert doc["info"]["x-integer-policy"] == "no-fraction"
    assert "28.0" in doc["info"]["description"]


def test_docs_api_names_every_path() -> None:
    """``docs/api.md`` is the project's copy of the contract: it names every documented path."""
    text = (ROOT / "docs" / "api.md").read_text()
    missing = [
        p for p in _document()["paths"] if not re.search(re.escape(_plain(p)) + r"(?![\w/{])", text)
    ]
    assert not missing, missing


def _plain(path: str) -> str:
    """``/v1/games/{game_id}/audit/{n}`` as docs/api.md writes it: ``/v1/games/{id}/audit/{n}``."""
    return re.sub(r"\{game_id\}", "{id}", path)


def _filled(path: str, game: dict[str, Any]) -> str:
    """A path of the document with real values: a started game, its seat 0, its event 1."""
    return (
        path.replace("{game_id}", game["id"])
        .replace("{seat}", "0")
        .replace("{n}", "1")
        .replace("{game}", "jolly-cargo")
        .replace("{name}", "board")
    )


def test_every_status_the_middleware_answers_is_in_each_operations_document(
    server: ServerProcess,
) -> None:
    """Issue 35: ``DELETE /v1/games/{id}/seats/{seat}`` answered 413 and 415, which its
    operation did not list. The middleware (hardening, quotas, the request size bound) runs
    before any handler, so what it answers every operation can answer: each operation of the
    document is sent what the middleware refuses — a NUL in the query string, the game id
    upper-cased, a body past ``MANIFEST_MAX_BODY``, a body that is not JSON — and whatever status
    comes back must be one its document lists. And every operation lists the quota's 429 and
    the 503 of a dependency down."""
    doc = _document()
    big = b"[" + b"0," * 40_000 + b"0]"  # > MANIFEST_MAX_BODY (64 KiB), valid JSON
    with server.client() as client:
        body = {"game": "jolly-cargo", "seats": 2, "players": ["a", "b"]}
        r = client.post("/v1/games", json=body)
        assert r.status_code == 201, r.text
        game = r.json()
        variants: list[tuple[str, str, dict[str, Any]]] = [
            ("NUL in the query", "?x=%00", {}),
            ("a body too large", "", {"content": big, "headers": {"content-type": JSON}}),
            ("a body not JSON", "", {"content": b"{}", "headers": {"content-type": "text/plain"}}),
        ]
        missing: list[str] = []
        for path, ops in doc["paths"].items():
            for method, operation in ops.items():
                assert {"400", "429", "503"} <= operation["responses"].keys(), (method, path)
                tries = [(why, _filled(path, game) + q, kw) for why, q, kw in variants]
                if "{game_id}" in path:
                    upper = {**game, "id": game["id"].upper()}
                    tries.append(("the game id upper-cased", _filled(path, upper), {}))
                for why, url, kw in tries:
                    with client.stream(method.upper(), url, **kw) as answer:
                        status = answer.status_code
                    if str(status) not in operation["responses"]:
                        missing.append(f"{method.upper()} {path}: {why} -> {status}")
    assert not missing, missing


def test_405_names_the_allowed_methods(server: ServerProcess) -> None:
    with server.client() as client:
        r = client.delete("/v1/games")
        assert r.status_code == 405 and r.headers["allow"] == "GET, OPTIONS, POST"
        r = client.options("/v1/games")
        assert r.status_code == 204 and r.headers["allow"] == "GET, OPTIONS, POST"
        r = client.put("/v1/keys")
        assert r.status_code == 405 and r.headers["allow"] == "GET, OPTIONS"
        r = client.get("/v1/games/00000000-0000-0000-0000-000000000000/commands")
        assert r.status_code == 405 and r.headers["allow"] == "OPTIONS, POST"


@pytest.mark.parametrize(
    "phases",
    [
        "examples,coverage,stateful",
        # fuzzing after coverage (~40 s in all): CI's run, not the quick one
        pytest.param("examples,coverage,fuzzing,stateful", marks=pytest.mark.slow),
    ],
)
def test_schemathesis_finds_nothing(server: ServerProcess, phases: str) -> None:
    """Every check, every phase (examples, coverage, stateful: links from created games; and
    fuzzing too in the ``slow`` run), ``MAX_EXAMPLES`` per operation, a fixed seed; the server's
    quotas are out of the way (``serverproc``). Configuration and hooks:
    ``tests/integration/schemathesis/``."""
    assert httpx.get(server.url + "/schema/openapi.json", timeout=10).status_code == 200
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "hooks", "PYTHONPATH": str(HERE)}
    result = subprocess.run(
        [
            str(Path(sys.executable).with_name("schemathesis")),
            "--config-file",
            str(HERE / "schemathesis.toml"),
            "run",
            server.url + "/schema/openapi.json",
            "--checks",
            "all",
            "--max-examples",
            str(MAX_EXAMPLES),
            "--seed",
            "1",
            "--request-timeout",
            "5",
            "--generation-database",
            "none",
            "--phases",
            phases,
            "--no-color",
        ],
        cwd=HERE,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    tail = result.stdout[-6000:] + result.stderr[-2000:]
    assert result.returncode == 0, tail
    assert f"Tested: {len(openapi.OPERATIONS)}" in result.stdout, tail


def test_sentences_and_their_language_are_documented() -> None:
    """Issue 43: the events', replays' and replay positions' ``sentence`` (a ``Sentence``:
    id, lang, text, args) and the ``lang`` parameter of each history read are in the document."""
    doc = _document()
    schemas = doc["components"]["schemas"]
    assert set(schemas["Sentence"]["required"]) == {"id", "lang", "text", "args"}
    for game in ("JollyCargo", "CargoEmpire", "EmpireBuilder", "CuriousCargo"):
        for name in ("EventDocument", "ReplayView"):
            assert "sentence" in schemas[f"{game}.{name}"]["properties"], (game, name)
        assert "seat" in schemas[f"{game}.ReplayView"]["properties"], game
    for path in ("events", "replay/{n}", "replay", "stream"):
        operation = doc["paths"][f"/v1/games/{{game_id}}/{path}"]["get"]
        assert "lang" in {p["name"] for p in operation.get("parameters", [])}, path
