"""Rules editions (docs/api.md "Rules editions"): a stored game is re-adjudicated by the rules
of the edition recorded in its ``lobby.created`` (absent = 1). A Curious Cargo game played under
edition 1 — before D28's trucking cleanup (docs/rules/curious-cargo.md "Rules editions") — is
stored here the way the service stores games, and the audit's re-adjudication finds it clean;
the same events claimed as edition 2 are flagged, which is why the edition is recorded. One such
game was recorded by the code of that time (commit 3f3d370, before D28 changed):
``data/curious_cargo_edition1.json`` holds its seed, options, opening and every command with
the events it produced then."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from domain.curious_cargo import CURIOUS_CARGO, EDITIONS
from domain.curious_cargo import commands as cmd
from domain.curious_cargo import events as ev
from domain.curious_cargo.greedy import GreedyBot
from domain.curious_cargo.legal import legal
from domain.curious_cargo.options import Options
from domain.curious_cargo.state import State
from domain.kernel import Rng, seed_commitment
from domain.platform.events import LobbyCreated, LobbyJoined, SeedRevealed
from domain.registry import current_edition, get_game
from ledger.adjudication import check_adjudication
from ledger.evidence import Case, Evidence
from ledger.records import CommandRecord, StoredEvent

GAME_ID = "00000000-0000-0000-0000-000000000028"
AT = datetime(2026, 11, 27, tzinfo=UTC)


class DiscardingBot:
    """The greedy bot, but in trucking it often discards a card for tiles, so phases end with
    tiles in hand (what edition 2 changed)."""

    def __init__(self, rng: Rng) -> None:
        self.greedy = GreedyBot(rng)
        self.rng = rng

    def choose(self, state: State, seat: int) -> cmd.Command:
        discards = [c for c in legal(state, seat) if isinstance(c, cmd.DiscardForTiles)]
        if discards and self.rng.below(2) == 0:
            return discards[0]
        return self.greedy.choose(state, seat)


def _event(version: int, data: Any, seat: int | None, command_id: str | None) -> StoredEvent:
    body = msgspec.to_builtins(data)
    return StoredEvent(GAME_ID, version, body["type"], body, seat, command_id, AT, b"", b"")


def store(
    seed: bytes, options: Any, opening: list[Any], played: list[tuple[int, Any, list[Any]]]
) -> tuple[list[StoredEvent], list[CommandRecord]]:
    """A game as the service stores it: creation (no ``edition``, as before editions), joins,
    the opening, each command's events, the seed revealed with the last."""
    created = LobbyCreated("curious-cargo", 2, options, seed_commitment(seed), canonical=2)
    events = [_event(1, created, None, None)]
    events += [_event(2 + i, LobbyJoined(i, f"p{i}"), None, None) for i in (0, 1)]
    events += [_event(4 + i, e, None, None) for i, e in enumerate(opening)]
    commands: list[CommandRecord] = []
    for n, (seat, command, produced) in enumerate(played):
        first = len(events) + 1
        cid = f"c{n}"
        group = [_event(first + i, e, seat, cid) for i, e in enumerate(produced)]
        if n == len(played) - 1:
            group.append(_event(first + len(group), SeedRevealed(seed.hex()), seat, cid))
        events += group
        body = {"command": msgspec.to_builtins(command)}
        commands.append(
            CommandRecord(
                cid,
                GAME_ID,
                seat,
                None,
                body["command"]["type"],
                body,
                AT,
                "accepted",
                None,
                None,
                first,
                first + len(group) - 1,
                None,
            )
        )
    return events, commands


def stored_game(edition: int, seed: bytes) -> tuple[list[StoredEvent], list[CommandRecord], int]:
    """A whole game between two bots under ``edition``'s rules, stored as the service stores
    one (each command decided with ``Rng(seed, its first version)``), and how many trucking
    phases ended with tiles in hand."""
    rules = EDITIONS[edition]
    options = Options(first_player=0, draft=False)
    opening = rules.start(options, 2, Rng(seed, 4))
    state = rules.fold(opening)
    bots = [DiscardingBot(Rng(seed, 1_000_000 + k)) for k in (0, 1)]
    played: list[tuple[int, Any, list[Any]]] = []
    version = 3 + len(opening)
    held_tiles = 0
    while rules.outcome(state) is None:
        seat = rules.to_act(state)[0]
        command = bots[seat].choose(state, seat)
        produced = rules.decide(state, seat, command, Rng(seed, version + 1))
        ended_trucking = state.phase == "trucking" and any(
            isinstance(e, ev.PhaseStarted) and e.phase == "construction" for e in produced
        )
        state = rules.fold(produced, state)
        held_tiles += ended_trucking and any(p.hand for p in state.players)
        played.append((seat, command, produced))
        version += len(produced)
    events, commands = store(seed, msgspec.to_builtins(options), opening, played)
    return events, commands, held_tiles


def _audit(events: list[StoredEvent], commands: list[CommandRecord]) -> dict[str, Any]:
    return check_adjudication(Case(Evidence(GAME_ID, events, commands, None)))


def _claiming(events: list[StoredEvent], edition: int) -> list[StoredEvent]:
    created = msgspec.structs.replace(events[0], data={**events[0].data, "edition": edition})
    return [created, *events[1:]]


def test_an_edition_1_curious_cargo_game_still_audits_clean() -> None:
    seed = hashlib.sha256(b"curious-cargo/edition-1").digest()
    events, commands, held = stored_game(1, seed)
    # the game reaches what changed: trucking phases that ended with tiles in hand (edition 2
    # stores them in a cleanup first)
    assert held > 0
    assert "edition" not in events[0].data  # stored before editions were recorded
    report = _audit(events, commands)
    assert report == {"ok": True, "commands": len(commands), "first_bad": None}
    # the same game claimed as edition 2 is re-run by today's rules, which differ there
    flagged = _audit(_claiming(events, 2), commands)
    assert flagged["ok"] is False


def test_a_game_recorded_by_the_old_code_still_audits_clean() -> None:
    recorded = json.loads((Path(__file__).parent / "data/curious_cargo_edition1.json").read_text())
    played = [(c["seat"], c["command"], c["events"]) for c in recorded["commands"]]
    events, commands = store(
        bytes.fromhex(recorded["seed"]), recorded["options"], recorded["opening"], played
    )
    # it ended trucking phases with tiles in hand, which edition 2 would have stored
    table = EDITIONS[1].fold(EDITIONS[1].decode_event(e) for e in recorded["opening"])
    held = 0
    for _, _, produced in played:
        was = table.phase
        table = EDITIONS[1].fold((EDITIONS[1].decode_event(e) for e in produced), table)
        held += (
            was == "trucking"
            and table.phase == "construction"
            and any(p.hand for p in table.players)
        )
    assert held == 3
    assert _audit(events, commands) == {"ok": True, "commands": 334, "first_bad": None}
    assert _audit(_claiming(events, 2), commands)["ok"] is False


def test_an_edition_2_game_audits_clean_and_new_games_record_it() -> None:
    seed = hashlib.sha256(b"curious-cargo/edition-2").digest()
    events, commands, _ = stored_game(2, seed)
    assert _audit(_claiming(events, 2), commands)["ok"] is True
    assert current_edition("curious-cargo") == 2
    assert get_game("curious-cargo", 2) is CURIOUS_CARGO
    assert get_game("curious-cargo") is CURIOUS_CARGO


def test_an_edition_the_server_no_longer_implements_is_not_re_adjudicated() -> None:
    seed = hashlib.sha256(b"curious-cargo/edition-9").digest()
    events, commands, _ = stored_game(2, seed)
    report = _audit(_claiming(events, 9), commands)
    assert report["ok"] is None and "rules edition 9" in report["reason"]
    # Empire Builder keeps only its edition 2 (docs/rules/empire-builder.md "Rules editions")
    assert current_edition("empire-builder") == 2
    assert get_game("empire-builder", 1) is get_game("empire-builder")
