"""The OpenAPI document tells the truth (issue 10): every route with its answer's schema, every
status it can answer with the problem schema, the bearer scheme, ``Idempotency-Key``; ``Allow``
on 405; ``docs/api.md`` names every path; and Schemathesis, run against the live server with a
bounded budget and every check, finds nothing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from domain.registry import all_games
from service.http import nulfree, openapi
from service.http.app import create_app
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
    body = schemas["CommandBody"]
    assert body.get("additionalProperties") is False
    version = body["properties"]["expected_version"]
    assert {"type": "integer", "minimum": 0} in version["anyOf"], version
    games = sorted(g.id for g in all_games())
    assert schemas["CreateGame"]["properties"]["game"]["enum"] == games


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
    for name in ("CreateGame", "JoinGame", "CommandBody", "MessageBody", "QueryBody"):
        places += _strings(schemas[name], name)
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            for param in op.get("parameters", []):
                places += _strings(param["schema"], f"{method} {path} {param['name']}")
    places += _strings(schemas["NulFreeJson"], "NulFreeJson")
    assert len(places) > 20
    pattern = re.compile(nulfree.NUL_FREE)
    for where, schema in places:
        if schema["type"] == "string":
            if "enum" in schema:
                continue
            assert "pattern" in schema, where
            assert not re.fullmatch(schema["pattern"], "a\x00b"), where
        elif "properties" not in schema:
            assert schema["propertyNames"] == {"pattern": nulfree.NUL_FREE}, where
            assert schema["additionalProperties"] == {"$ref": "#/components/schemas/NulFreeJson"}
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
