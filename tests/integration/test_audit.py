"""Audits, dispute files, export and offline verification, against the real server process,
PostgreSQL and Redis (issue 4, "Must show" 2 to 6).

One finished game is shared by the module (played through the real append path in-process,
one move sent over HTTP after a rejected one, one table message). Each tampering test changes
its stored events as a superuser would (``ALTER TABLE events DISABLE TRIGGER USER``), checks
what the audit says, and puts the original stream back, which the next audit confirms.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from domain.platform.table import game_document
from ledger.audit import receipt_matches
from ledger.exportfile import EXPORT_FORMAT as V1
from ledger.exportfile import decode_export
from ledger.merkle import leaf_hash, root_of, verify_inclusion
from ledger.receipts import receipt_message, verify_tree_head
from ledger.records import StoredEvent
from ledger.treeheads import verify_dispute
from service.http import schemas

from .apihelp import auth, commands_rows, game_doc, pg, tokens_of
from .historyhelp import (
    Folding,
    bot_command,
    create,
    delete_event,
    in_process,
    new_key,
    play_to_end,
    rechained,
    rewrite,
    set_data,
    swap_versions,
    tamper,
)
from .serverproc import ROOT, ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]


class Finished(msgspec.Struct):
    """The module's finished game and what its players were told along the way."""

    id: str
    events: list[StoredEvent]
    head: bytes
    #: The receipt of the game's last command (covers every event).
    final_receipt: dict[str, Any]
    #: The move sent over HTTP: its answer, what was sent, and the rejected try before it.
    move: dict[str, Any]
    move_seat: int
    move_key: str
    move_body: dict[str, Any]
    move_sent: tuple[datetime, datetime]
    rejected_body: dict[str, Any]


@pytest.fixture(scope="module")
def game(module_server: ServerProcess) -> Finished:
    return asyncio.run(_finished_game(module_server, random.Random(2026)))


async def _finished_game(server: ServerProcess, rng: random.Random) -> Finished:
    async with in_process(server) as manifest, server.async_client() as client:
        created = await create(manifest)
        game_id, tokens = created["id"], tokens_of(created)
        for _ in range(25):
            assert await bot_command(manifest, game_id, tokens, rng) is not None

        # Over HTTP: a rejected command, then a legal one by the same seat.
        doc = await game_doc(client, game_id)
        seat = doc["to_act"][0]
        rejected_body = {
            "command": {"type": "place_worker", "worker": "nobody", "square": "a1"},
            "expected_version": doc["version"],
        }
        r = await client.post(
            f"/v1/games/{game_id}/commands", json=rejected_body, headers=auth(tokens[seat])
        )
        assert r.status_code == 422, r.text
        legal = (await client.get(f"/v1/games/{game_id}/legal", headers=auth(tokens[seat]))).json()
        body = {"command": rng.choice(legal["commands"]), "expected_version": legal["version"]}
        key = new_key()
        sent_at = datetime.now(UTC)
        r = await client.post(
            f"/v1/games/{game_id}/commands",
            json=body,
            headers={**auth(tokens[seat]), "Idempotency-Key": key},
        )
        answered_at = datetime.now(UTC)
        assert r.status_code == 200, r.text
        move = r.json()

        last = await play_to_end(manifest, created, rng)
    async with pg(server.pg_dsn) as store:
        events = await store.read(game_id)
        row = await store.get_game(game_id)
        assert row is not None and row.status == "finished"
    assert last["version"] == len(events) and last["receipt"]["head"] == row.head.hex()
    return Finished(
        id=game_id,
        events=events,
        head=row.head,
        final_receipt=last["receipt"],
        move=move,
        move_seat=seat,
        move_key=key,
        move_body=body,
        move_sent=(sent_at, answered_at),
        rejected_body=rejected_body,
    )


def _audit(server: ServerProcess, game_id: str) -> dict[str, Any]:
    with server.client() as client:
        r = client.get(f"/v1/games/{game_id}/audit")
        assert r.status_code == 200, r.text
        report: dict[str, Any] = r.json()
        msgspec.convert(report, schemas.AuditReport, strict=True)  # the documented shape
        # The server's own bookkeeping of refusals past the cap (not part of an export, so not
        # of ``manifest audit``/``verify``): none in these games.
        assert report.pop("rejected")["unrecorded"] == {}
        return report


def _read(server: ServerProcess, game_id: str) -> list[StoredEvent]:
    async def read() -> list[StoredEvent]:
        async with pg(server.pg_dsn) as store:
            return await store.read(game_id)

    return asyncio.run(read())


def _restore(server: ServerProcess, game: Finished) -> None:
    """Put the original stream and head back; the audit is clean again."""
    asyncio.run(tamper(server.pg_dsn, *rewrite(game.id, game.events)))
    assert _read(server, game.id) == game.events
    assert _audit(server, game.id)["ok"] is True


def _cli_audit(server: ServerProcess, game_id: str) -> tuple[int, dict[str, Any]]:
    done = server.run_cli("audit", game_id)
    return done.returncode, json.loads(done.stdout)


def _receipt_holds(events: list[StoredEvent], receipt: dict[str, Any]) -> bool:
    return receipt_matches(events, receipt["version"], receipt["head"])


# --- 4 (part). a clean game audits ok -----------------------------------------------------------
def test_clean_finished_game_audits_ok(server: ServerProcess, game: Finished) -> None:
    """The untouched finished game: ``GET /audit`` is ok — the chain holds up to the recorded
    head, every accepted command (moves and the table message) re-adjudicates to exactly its
    stored events, the revealed seed hashes to the commitment; ``manifest audit`` agrees (exit
    0). Both receipts the players were given match the stored chain."""
    report = _audit(server, game.id)
    assert report["ok"] is True, report["problems"]
    assert report["problems"] == []
    version = len(game.events)
    assert report["chain"] == {
        "ok": True,
        "events": version,
        "head": game.head.hex(),
        "first_bad": None,
        "unverified": [],
    }
    # Every face-down crate's commitment opens with the salt from the revealed seed; the one
    # private message opens with the game's message key (the server holds it).
    crates = sum(1 for e in game.events if e.type == "crate_placed")
    assert crates > 0
    assert report["commitments"] == {
        "canonical": 2,
        "ok": True,
        "opened": crates + 1,
        "sealed": 0,
        "first_bad": None,
    }
    accepted = asyncio.run(_accepted_commands(server, game.id))
    assert accepted > 25
    assert report["adjudication"] == {"ok": True, "commands": accepted, "first_bad": None}
    seed = report["seed"]
    assert seed["ok"] is True and seed["revealed"] is True
    assert seed["commitment"] == game.events[0].data["seed_commitment"]
    assert hashlib.sha256(bytes.fromhex(seed["seed"])).hexdigest() == seed["commitment"]

    code, cli = _cli_audit(server, game.id)
    assert code == 0 and cli == report

    assert _receipt_holds(game.events, game.final_receipt)
    assert _receipt_holds(game.events, game.move["receipt"])


async def _accepted_commands(server: ServerProcess, game_id: str) -> int:
    async with pg(server.pg_dsn) as store:
        rows = await commands_rows(store, game_id)
    return sum(1 for r in rows if r["outcome"] == "accepted")


def test_live_game_audits_ok_without_revealing_the_seed(server: ServerProcess) -> None:
    """A game still being played audits ok (chain and re-adjudication); its seed is neither
    revealed nor reported, and appears nowhere in the audit."""

    async def body() -> tuple[str, bytes]:
        async with in_process(server) as manifest:
            created = await create(manifest)
            rng = random.Random(5)
            for _ in range(10):
                await bot_command(manifest, created["id"], tokens_of(created), rng)
            return created["id"], await manifest.store.seed(created["id"])

    game_id, secret = asyncio.run(body())
    report = _audit(server, game_id)
    assert report["ok"] is True, report["problems"]
    assert report["chain"]["ok"] is True and report["adjudication"]["ok"] is True
    assert report["seed"]["revealed"] is False and report["seed"]["ok"] is None
    assert "seed" not in report["seed"]
    assert secret.hex() not in json.dumps(report)


# --- 2. tampering is caught -------------------------------------------------------------------
def _expect_chain_break(
    server: ServerProcess, game: Finished, first_bad: int, code: str
) -> dict[str, Any]:
    report = _audit(server, game.id)
    assert report["ok"] is False
    assert report["chain"]["ok"] is False
    assert report["chain"]["first_bad"] == first_bad, report["chain"]
    named = [p for p in report["problems"] if p["check"] == "chain"]
    assert named and named[0]["version"] == first_bad and named[0]["code"] == code, named
    stored = _read(server, game.id)
    assert not _receipt_holds(stored, game.final_receipt)  # the players' receipt exposes it
    cli_code, cli = _cli_audit(server, game.id)
    assert cli_code == 1 and cli["chain"]["first_bad"] == first_bad
    return report


def _tampering_case(
    server: ServerProcess, game: Finished, statements: list[tuple[str, tuple[Any, ...]]]
) -> None:
    assert _receipt_holds(_read(server, game.id), game.final_receipt)
    asyncio.run(tamper(server.pg_dsn, *statements))


def test_altered_event_is_caught(server: ServerProcess, game: Finished) -> None:
    """One stored event's data changed in PostgreSQL: the audit fails at that event
    (``chain.bad_hash``), the final receipt no longer matches the chain, ``manifest audit``
    exits 1. A receipt for a version before the change still matches."""
    victim = _pick(game, "workers_moved", after=game.move["version"] + 5)
    data = {**victim.data, "points": [p + 3 for p in victim.data["points"]]}
    try:
        _tampering_case(server, game, [set_data(game.id, victim.version, data)])
        _expect_chain_break(server, game, victim.version, "chain.bad_hash")
        assert _receipt_holds(_read(server, game.id), game.move["receipt"])
    finally:
        _restore(server, game)


@pytest.mark.parametrize("where", ["middle", "last"])
def test_deleted_event_is_caught(server: ServerProcess, game: Finished, where: str) -> None:
    """One event deleted: the audit names the first missing version — a gap in the middle
    (``chain.gap``), or the last event, which ``games.head`` still names
    (``chain.head_mismatch``)."""
    last = len(game.events)
    victim = last // 2 if where == "middle" else last
    try:
        _tampering_case(server, game, [delete_event(game.id, victim)])
        code = "chain.gap" if where == "middle" else "chain.head_mismatch"
        report = _expect_chain_break(server, game, victim, code)
        if where == "middle":
            assert str(victim) in report["problems"][0]["detail"]
    finally:
        _restore(server, game)


def test_swapped_events_are_caught(server: ServerProcess, game: Finished) -> None:
    """Two events trade versions (each keeps its data and hashes): the audit names the first
    of them (``chain.broken_link``)."""
    a = len(game.events) // 3
    try:
        _tampering_case(server, game, swap_versions(game.id, a, a + 3))
        stored = _read(server, game.id)
        assert stored[a - 1].hash == game.events[a + 2].hash  # really swapped
        _expect_chain_break(server, game, a, "chain.broken_link")
    finally:
        _restore(server, game)


def test_swapped_event_data_is_caught(server: ServerProcess, game: Finished) -> None:
    """Two events' data swapped (their rows otherwise untouched): the first of them is named."""
    a, b = _pick(game, "workers_moved", after=40), _pick(game, "workers_moved", after=80)
    assert a.data != b.data
    swap = [set_data(game.id, a.version, b.data), set_data(game.id, b.version, a.data)]
    try:
        _tampering_case(server, game, swap)
        _expect_chain_break(server, game, a.version, "chain.bad_hash")
    finally:
        _restore(server, game)


def _pick(game: Finished, type: str, after: int) -> StoredEvent:
    """The first ``type`` event after version ``after`` that begins its command's events."""
    for prev, event in zip(game.events, game.events[1:], strict=False):
        if event.version > after and event.type == type and prev.command_id != event.command_id:
            return event
    raise AssertionError(f"no {type} after {after}")


# --- 3. re-adjudication catches a forged, re-chained event ---------------------------------------
def test_forged_and_rechained_event_is_caught_by_readjudication(
    server: ServerProcess, game: Finished
) -> None:
    """A ``workers_moved`` event rewritten to something the rules would not produce (more
    points), with every link from it recomputed and ``games.head`` updated — so the chain
    holds: the audit's ``chain.ok`` is true, but ``adjudication.ok`` is false with
    ``first_bad`` at the forged event; the players' final receipt no longer matches."""
    victim = _pick(game, "workers_moved", after=game.move["version"])
    data = {**victim.data, "points": [p + 3 for p in victim.data["points"]]}
    forged = rechained(game.events, {victim.version: data})
    try:
        asyncio.run(tamper(server.pg_dsn, *rewrite(game.id, forged)))
        report = _audit(server, game.id)
        assert report["chain"]["ok"] is True, report["chain"]
        assert report["chain"]["head"] == forged[-1].hash.hex()
        assert report["ok"] is False
        assert report["adjudication"]["ok"] is False
        assert report["adjudication"]["first_bad"] == victim.version
        first = next(p for p in report["problems"] if p["check"] == "adjudication")
        assert first["version"] == victim.version and first["code"] == "adjudication.mismatch"
        assert report["seed"]["ok"] is True
        assert not _receipt_holds(forged, game.final_receipt)
        assert _receipt_holds(forged, game.move["receipt"])  # before the forgery
        dispute = _dispute(server, game.id, victim.version)
        rules = next(c for c in dispute["checks"] if c["check"] == "rules")
        assert rules["ok"] is False
        code, _ = _cli_audit(server, game.id)
        assert code == 1
    finally:
        _restore(server, game)


# --- 4. a revealed seed that does not match its commitment ------------------------------------
def test_revealed_seed_not_matching_the_commitment_is_reported(
    server: ServerProcess, game: Finished
) -> None:
    """``seed.revealed`` rewritten to another seed (and re-chained): ``seed.ok`` is false with
    a ``seed.mismatch`` problem naming that event; the chain holds."""
    reveal = next(e for e in game.events if e.type == "seed.revealed")
    other = hashlib.sha256(b"not the seed").hexdigest()
    forged = rechained(game.events, {reveal.version: {**reveal.data, "seed": other}})
    try:
        asyncio.run(tamper(server.pg_dsn, *rewrite(game.id, forged)))
        report = _audit(server, game.id)
        assert report["chain"]["ok"] is True
        assert report["ok"] is False
        assert report["seed"]["ok"] is False and report["seed"]["seed"] == other
        mismatch = [p for p in report["problems"] if p["code"] == "seed.mismatch"]
        assert [p["version"] for p in mismatch] == [reveal.version]
        assert mismatch[0]["check"] == "seed"
        # The events are still those of the committed seed (the server holds it).
        assert report["adjudication"]["ok"] is True, report["problems"]
        assert [p["check"] for p in report["problems"]] == ["seed"]
    finally:
        _restore(server, game)


# --- 5. the dispute file ---------------------------------------------------------------------
def _dispute(server: ServerProcess, game_id: str, n: int) -> dict[str, Any]:
    with server.client() as client:
        r = client.get(f"/v1/games/{game_id}/audit/{n}")
        assert r.status_code == 200, r.text
        body: dict[str, Any] = r.json()
        return body


def test_dispute_file_of_an_accepted_move(server: ServerProcess, game: Finished) -> None:
    """``GET /audit/{n}`` for the move sent over HTTP: the command as sent (seat, time,
    Idempotency-Key, body); the state before it, in full and as the seat saw it, equal to the
    reference folds; every check ok; exactly the command's stored events; the chain proof
    (``sha256(prev_hash ‖ canonical) == hash``, links up to the game's head) with a valid fresh
    receipt; and the rejected command the seat sent just before."""
    events = game.events
    versions = [e["version"] for e in game.move["events"]]
    n = versions[-1]
    dispute = _dispute(server, game.id, n)
    assert dispute["game"] == game.id and dispute["version"] == n

    command = dispute["command"]
    assert command["seat"] == game.move_seat
    assert command["idempotency_key"] == game.move_key
    assert command["body"] == game.move_body
    assert command["outcome"] == "accepted"
    assert (command["first_version"], command["last_version"]) == (versions[0], n)
    received = datetime.fromisoformat(command["received_at"].replace("Z", "+00:00"))
    assert game.move_sent[0] <= received <= game.move_sent[1]

    ref = Folding(game.id)
    for event in events[: versions[0] - 1]:
        ref.push(event)
    assert ref.table is not None
    before = dispute["state_before"]
    assert before["version"] == versions[0] - 1
    assert before["full"] == ref.document(everything=True)["view"]
    seat_doc = game_document(ref.table, f"seat:{game.move_seat}")
    assert before["as_seat_saw_it"] == msgspec.to_builtins(seat_doc.view)

    checks = {c["check"]: c for c in dispute["checks"]}
    assert set(checks) == {"version", "to_act", "rules", "listed_as_legal"}
    assert all(c["ok"] is True for c in checks.values()), checks

    stored = events[versions[0] - 1 : n]
    assert [e["version"] for e in dispute["events"]] == versions
    for got, event in zip(dispute["events"], stored, strict=True):
        assert got["data"] == event.data and got["hash"] == event.hash.hex()

    chain = dispute["chain"]
    prev = bytes.fromhex(chain["prev_hash"])
    assert prev == events[n - 2].hash
    digest = hashlib.sha256(prev + chain["canonical"].encode()).digest()
    assert digest.hex() == chain["hash"] == chain["recomputed"] == events[n - 1].hash.hex()
    assert chain["ok"] is True
    canonical = json.loads(chain["canonical"])
    assert canonical["version"] == n and canonical["game"] == game.id
    assert canonical["data"] == events[n - 1].data and canonical["seat"] == game.move_seat
    # the inclusion proof: an RFC 9162 audit path to the signed root over every event hash
    proof = dispute["inclusion"]
    head = proof["tree_head"]
    assert (proof["leaf_index"], proof["tree_size"]) == (n - 1, len(events))
    assert (head["game"], head["size"], head["head"]) == (game.id, len(events), game.head.hex())
    assert head["root"] == root_of([e.hash for e in events]).hex()
    path = [bytes.fromhex(h) for h in proof["path"]]
    assert len(path) <= (len(events) - 1).bit_length()
    assert verify_inclusion(
        n - 1, len(events), leaf_hash(events[n - 1].hash), path, root_of([e.hash for e in events])
    )

    receipt = dispute["receipt"]
    assert (receipt["version"], receipt["head"]) == (len(events), game.head.hex())
    with server.client() as client:
        keys = client.get("/v1/keys").json()
    key = keys["keys"][0]
    assert key["status"] == "current" and key["id"] == receipt["key_id"] == head["key_id"]
    public = Ed25519PublicKey.from_public_bytes(base64.b64decode(key["public_key"]))
    public.verify(
        base64.b64decode(receipt["signature"]),
        receipt_message(game.id, receipt["version"], receipt["head"]),
    )
    assert verify_tree_head(public, head)
    assert verify_dispute(dispute, keys)["ok"] is True

    rejected = dispute["rejected_before"]
    assert len(rejected) == 1, rejected
    assert rejected[0]["seat"] == game.move_seat and rejected[0]["outcome"] == "rejected"
    assert rejected[0]["body"] == game.rejected_body and rejected[0]["error_code"]

    with server.client() as client:
        for bad in (0, len(events) + 1):
            assert client.get(f"/v1/games/{game.id}/audit/{bad}").status_code == 404


# --- 6. export, then verify offline -------------------------------------------------------------
def test_export_then_verify_offline(server: ServerProcess, game: Finished) -> None:
    """``manifest export`` writes the game to a file; ``manifest verify`` with no database
    configured (no PG_DSN, no REDIS_URL, an empty MANIFEST_DATA_DIR) reaches the server's
    audit (exit 0) without starting PostgreSQL; the file with one event's data changed fails
    (exit 1) naming that event."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "game.json"
        done = server.run_cli("export", game.id, "-o", str(path))
        assert done.returncode == 0, done.stderr
        exported = json.loads(path.read_bytes())
        assert exported["format"] == "manifest.export.v3"
        assert len(exported["events"]) == len(game.events)
        assert exported["seed"] is not None  # finished: the seed is in the file
        # Hashes and the seed in the API's encoding (hex), event for event.
        api: list[dict[str, Any]] = []
        with server.client() as client:
            while len(api) < len(game.events):
                page = client.get(f"/v1/games/{game.id}/events?after={len(api)}&limit=1000")
                api += page.json()["events"]
            revealed = next(e for e in api if e["type"] == "seed.revealed")["data"]["seed"]
        assert [(e["prev_hash"], e["hash"]) for e in exported["events"]] == [
            (e["prev_hash"], e["hash"]) for e in api
        ]
        assert exported["game"]["head"] == game.head.hex() == api[-1]["hash"]
        assert exported["seed"] == revealed

        # A file of the base64 formats (v1, v2: msgspec's base64 bytes) still verifies.
        v1 = Path(tmp) / "v1.json"
        decoded = decode_export(path.read_bytes())
        v1.write_bytes(msgspec.json.encode(msgspec.structs.replace(decoded, format=V1)))
        assert json.loads(v1.read_bytes())["game"]["head"] == base64.b64encode(game.head).decode()
        assert _verify(v1, Path(tmp))[0] == 0

        data_dir = Path(tmp) / "data"
        data_dir.mkdir()
        code, report = _verify(path, data_dir)
        assert code == 0, report
        server_report = _audit(server, game.id)
        # The export is anyone's: the private message stays sealed in it, nothing else differs.
        assert report["commitments"]["sealed"] == 1
        assert report["commitments"]["opened"] == server_report["commitments"]["opened"] - 1
        for part in ("ok", "chain", "adjudication", "seed", "problems"):
            assert report[part] == server_report[part], part
        assert list(data_dir.iterdir()) == []  # no embedded PostgreSQL was started

        victim = _pick(game, "workers_moved", after=60).version
        exported["events"][victim - 1]["data"]["points"][0] += 1
        tampered = Path(tmp) / "tampered.json"
        tampered.write_text(json.dumps(exported))
        code, report = _verify(tampered, data_dir)
        assert code == 1
        assert report["ok"] is False and report["chain"]["first_bad"] == victim
        assert report["problems"][0]["version"] == victim
        assert list(data_dir.iterdir()) == []


def _verify(path: Path, data_dir: Path) -> tuple[int, dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if k not in ("PG_DSN", "REDIS_URL")}
    env["MANIFEST_DATA_DIR"] = str(data_dir)
    done = subprocess.run(
        [sys.executable, "-m", "service.cli", "verify", str(path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "postgres" not in done.stderr.lower(), done.stderr
    return done.returncode, json.loads(done.stdout)
