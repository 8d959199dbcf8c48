"""Hidden values (``domain.kernel.hidden``): the commitment construction byte for byte, and
every registered game declaring (``Game.hidden``) at least what its ``event_view`` hides."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import msgspec
import pytest

from domain.cargo_empire import events as ce
from domain.jolly_cargo import JOLLY_CARGO
from domain.jolly_cargo.events import CratePlaced
from domain.kernel import AUDITOR, SPECTATOR, Secret, play_random_game, seat
from domain.kernel.hidden import (
    commitment,
    declared_paths,
    get_at,
    is_sealed,
    matches,
    public_form,
    salt,
    sealed,
    set_at,
)
from domain.kernel.localgame import LocalGame
from domain.registry import all_games, get_game

SEED = bytes(range(32))


def test_salt_and_commitment_are_the_documented_bytes() -> None:
    message = b"hide" + (7).to_bytes(8, "big") + b'["cards",0]'
    expected_salt = hmac.new(SEED, message, hashlib.sha256).digest()
    assert salt(SEED, 7, ("cards", 0)) == expected_salt
    value = {"b": 1, "a": "ship"}
    expected = hashlib.sha256(expected_salt + b'{"a":"ship","b":1}').hexdigest()
    assert commitment(expected_salt, value) == expected


def test_public_form_replaces_only_the_hidden_values() -> None:
    data = {"type": "cards_drawn", "seat": 1, "cards": ["ship", "truck"]}
    secrets = [Secret(("cards", 0), (1,)), Secret(("cards", 1), (1,))]
    public = public_form(data, secrets, 9, SEED)
    assert data["cards"] == ["ship", "truck"]  # untouched
    assert public["seat"] == 1 and public["type"] == "cards_drawn"
    for i, card in enumerate(data["cards"]):
        mark = get_at(public, ("cards", i))
        assert is_sealed(mark)
        assert mark == sealed(commitment(salt(SEED, 9, ("cards", i)), card))
    # different salts per path and per version: equal values do not give equal commitments
    again = public_form({**data, "cards": ["ship", "ship"]}, secrets, 9, SEED)
    assert again["cards"][0] != again["cards"][1]
    assert public_form(data, secrets, 10, SEED)["cards"][0] != public["cards"][0]
    assert set_at(public, ("cards", 0), "ship")["cards"][0] == "ship"


def test_cargo_declares_face_down_crates_for_nobody() -> None:
    assert JOLLY_CARGO.hidden(CratePlaced(0, "c3", "red")) == [Secret(("colour",))]


def test_cargo_empire_declares_a_delivery_bonus_end_for_the_deliverer_only() -> None:
    game = get_game("cargo-empire")
    raw = {
        "type": "delivered",
        "seat": 2,
        "origin": "Lisboa",
        "destination": "Porto",
        "cargo": "brown",
        "route": [],
        "moves": {},
        "bonus": {},
        "bonus_for": ["perfect_upgrade", "origin"],
    }
    event = game.decode_event(raw)
    assert isinstance(event, ce.Delivered)
    assert game.hidden(event) == [Secret(("bonus_for", 1), (2,))]


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, (*path, k))]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, (*path, i))]
    return [(path, value)]


def _read(value: Any, path: tuple[Any, ...]) -> Any:
    try:
        return get_at(value, path)
    except (KeyError, IndexError, TypeError):
        return KeyError


@pytest.mark.parametrize("game_id", [g.id for g in all_games()])
@pytest.mark.parametrize("seed", [5, 6])
def test_every_value_event_view_hides_is_declared_hidden(game_id: str, seed: int) -> None:
    """What a viewer cannot read in ``event_view`` is under a path ``hidden`` names, for a
    seat not among its readers: so commitments hide at least what redaction hid."""
    game = get_game(game_id)
    seats = max(game.min_seats, 2) if game.max_seats > 1 else 1
    table, _ = play_random_game(game, bytes([seed]) * 32, seats)
    hidden_somewhere = redacted_somewhere = 0
    for record in table.records:
        full = msgspec.to_builtins(record.event)
        secrets = game.hidden(record.event)
        hidden_somewhere += bool(secrets)
        for s in secrets:
            _ = get_at(full, s.path)  # every declared path exists
        for viewer in (SPECTATOR, *(seat(i) for i in range(seats))):
            shown = msgspec.to_builtins(game.event_view(record.event, viewer))
            redacted_somewhere += shown != full
            who = getattr(viewer, "seat", None)
            unreadable = [s.path for s in secrets if who not in s.seats]
            for path, value in _leaves(full):
                if _read(shown, path) != value:
                    assert any(path[: len(p)] == p for p in unreadable), (record.event, path)
        assert msgspec.to_builtins(game.event_view(record.event, AUDITOR)) == full
    # a game whose events redact something declares something (Empire Builder hides nothing:
    # its demand cards are public, the deck never enters an event)
    assert hidden_somewhere > 0 or not redacted_somewhere


@pytest.mark.parametrize("game_id", [g.id for g in all_games()])
def test_every_hidden_path_is_declared_on_its_event_type(game_id: str) -> None:
    """The OpenAPI document says where an event as a caller reads it may hold a commitment
    instead of a value (``service.http.gameschemas``) from the patterns each event type
    declares (``domain.kernel.hidden.HIDDEN_PATHS``): every path ``hidden`` returns — in a
    random game and in a game started from a position taken halfway through one — matches a
    pattern of its event's type, and every declared pattern is met somewhere."""
    game = get_game(game_id)
    seats = max(game.min_seats, 2) if game.max_seats > 1 else 1
    table, _ = play_random_game(game, bytes([9]) * 32, seats)
    events = [r.event for r in table.records]
    halfway = game.fold(events[: len(events) // 2])
    loaded = LocalGame.from_position(game, bytes([10]) * 32, game.export_position(halfway))
    declared = {
        type(e): declared_paths(type(e)) for e in [*events, *(r.event for r in loaded.records)]
    }
    met: set[tuple[type, str]] = set()
    for event in [*events, *(r.event for r in loaded.records)]:
        for secret in game.hidden(event):
            found = [p for p in declared[type(event)] if matches(p, secret.path)]
            assert found, (type(event).__name__, secret.path, declared[type(event)])
            met.add((type(event), found[0]))
    unmet = {(t.__name__, p) for t, paths in declared.items() for p in paths} - {
        (t.__name__, p) for t, p in met
    }
    assert not unmet, unmet


def test_a_hidden_path_pattern_matches_list_indices_only_where_it_says() -> None:
    assert matches("cards.*", ("cards", 3)) and not matches("cards.*", ("cards",))
    assert matches("position.players.*.hand", ("position", "players", 1, "hand"))
    assert not matches("position.players.*.hand", ("position", "players", "x", "hand"))
    assert not matches("colour", ("cards", 0)) and matches("colour", ("colour",))
