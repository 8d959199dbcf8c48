"""Hidden information stays hidden while a game is live, against a hostile third-party client
on the live server: a kept draft card named by the recorded command, and the number of a seat's
legal commands in a dispute file."""

from __future__ import annotations

import msgspec
import pytest

from domain.curious_cargo.evolve import evolve
from domain.curious_cargo.position import position_of
from domain.kernel import Rng
from domain.registry import get_game

from .apihelp import auth
from .serverproc import ServerProcess

pytestmark = [pytest.mark.integration, pytest.mark.shared_server]


def test_a_kept_draft_card_stays_hidden_in_the_recorded_command(server: ServerProcess) -> None:
    """Curious Cargo: the card a seat keeps in the draft is hidden (``card_kept.card``), but
    the accepted ``keep_card`` command that chose it names it too. Its body must not reach a
    spectator or the other seat through the export or the dispute file while the game is
    live."""
    with server.client() as client:
        r = client.post(
            "/v1/games", json={"game": "curious-cargo", "seats": 2, "players": ["a", "b"]}
        )
        assert r.status_code == 201, r.text
        created = r.json()
        base = f"/v1/games/{created['id']}"
        tokens = [s["token"] for s in created["seats"]]
        legal = client.get(base + "/legal", headers=auth(tokens[0])).json()
        keep = next(c for c in legal["commands"] if c["type"] == "keep_card")
        r = client.post(
            base + "/commands",
            headers=auth(tokens[0]),
            json={"command": keep, "expected_version": legal["version"]},
        )
        assert r.status_code == 200, r.text
        kept_at = r.json()["version"]
        secret = f'"{keep["card"]}"'
        for who in (None, tokens[1]):
            for path in ("/export", f"/audit/{kept_at}", "/events", ""):
                r = client.get(base + path, headers=auth(who))
                assert r.status_code == 200, r.text
                assert secret not in r.text, (who is None, path)
        # the seat itself still reads its own command
        mine = client.get(base + "/export", headers=auth(tokens[0])).text
        assert secret in mine


def _trucking_position() -> object:
    """A Curious Cargo position at the start of a trucking phase, hands dealt."""
    rules = get_game("curious-cargo")
    state = None
    for event in rules.start(rules.decode_options({"draft": False}), 2, Rng(b"\x01" * 32, 1)):
        state = evolve(state, event)
    assert state is not None
    return msgspec.to_builtins(msgspec.structs.replace(position_of(state), phase="trucking"))


def test_a_live_dispute_file_does_not_count_the_seats_legal_commands(
    server: ServerProcess,
) -> None:
    """The dispute file's ``listed_as_legal`` check said "one of N legal commands": in Curious
    Cargo's trucking phase N counts the distinct truck cards in hand and those the AP left pay
    for (two targets each, one discard each): hidden information, for anyone while live."""
    with server.client() as client:
        r = client.post(
            "/v1/games",
            json={
                "game": "curious-cargo",
                "seats": 2,
                "players": ["a", "b"],
                "position": _trucking_position(),
            },
        )
        assert r.status_code == 201, r.text
        created = r.json()
        base = f"/v1/games/{created['id']}"
        seat = created["to_act"][0]
        token = created["seats"][seat]["token"]
        legal = client.get(base + "/legal", headers=auth(token)).json()
        assert any(c["type"] == "play_truck" for c in legal["commands"])
        r = client.post(
            base + "/commands",
            headers=auth(token),
            json={"command": {"type": "end_turn"}, "expected_version": legal["version"]},
        )
        assert r.status_code == 200, r.text
        for who in (None, created["seats"][1 - seat]["token"]):
            dispute = client.get(f"{base}/audit/{r.json()['version']}", headers=auth(who)).json()
            listed = next(c for c in dispute["checks"] if c["check"] == "listed_as_legal")
            assert listed["ok"] is True
            assert str(len(legal["commands"])) not in listed["detail"], listed


def test_another_seats_refused_commands_show_no_error_code_while_live(
    server: ServerProcess,
) -> None:
    """A refusal's code can describe a hidden hand (Cargo Empire's ``rule.cards_not_in_hand``
    says the route's cards are not all in it). While the game is live, the export and the
    dispute files show another seat's — or a spectator's — refused commands with no
    ``error_code`` (nor body or detail); the seat itself still reads its own code. (Before, the
    code was shown to anyone.)"""
    with server.client() as client:
        r = client.post(
            "/v1/games", json={"game": "cargo-empire", "seats": 2, "players": ["a", "b"]}
        )
        assert r.status_code == 201, r.text
        created = r.json()
        base = f"/v1/games/{created['id']}"
        tokens = [s["token"] for s in created["seats"]]
        seat = created["to_act"][0]
        mover = auth(tokens[seat])
        legal = client.get(base + "/legal", headers=mover).json()
        refused = client.post(
            base + "/commands",
            headers=mover,
            json={"command": {"type": "gather"}, "expected_version": legal["version"]},
        )
        assert refused.status_code == 422, refused.text
        code = refused.json()["code"]
        r = client.post(
            base + "/commands",
            headers=mover,
            json={"command": legal["commands"][0], "expected_version": legal["version"]},
        )
        assert r.status_code == 200, r.text
        accepted_at = r.json()["version"]

        def rejected(who: str | None) -> list[dict[str, object]]:
            export = client.get(base + "/export", headers=auth(who)).json()
            dispute = client.get(base + f"/audit/{accepted_at}", headers=auth(who))
            assert dispute.status_code == 200, dispute.text
            found = [c for c in export["commands"] if c["outcome"] != "accepted"]
            found += [c for c in dispute.json()["rejected_before"] if c["outcome"] != "accepted"]
            assert len(found) == 2, found  # the one refusal, in the export and the dispute file
            return found

        for other in (None, tokens[1 - seat]):
            for command in rejected(other):
                assert command["error_code"] is None, (other is None, command)
                assert command["body"] is None and command["error_detail"] is None
        for command in rejected(tokens[seat]):
            assert command["error_code"] == code
