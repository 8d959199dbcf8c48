"""Every game's views are typed (issue 26): what a viewer reads — the view, each event, the game
document — decodes strictly into the game's ``view_type`` / ``event_view_type`` /
``GameDocument[view_type]`` and encodes back to the same bytes (so the type holds every field
the wire carries, with its exact values), for every viewer, over whole bot games of every game;
and the pictures draw from the typed view a client decodes exactly what they draw from the
server's own."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from domain.kernel import AUDITOR, SPECTATOR, Viewer, play_random_game, seat
from domain.kernel.svg import Players
from domain.platform.table import GameDocument, Table, game_document, viewer_keys
from domain.registry import all_games, get_game

GAME_IDS = [g.id for g in all_games()]
_encoder = msgspec.json.Encoder()


def _seats(game: Any) -> int:
    return max(game.min_seats, 2) if game.max_seats > 1 else 1


def _viewers(seats: int) -> list[Viewer]:
    return [SPECTATOR, AUDITOR, *(seat(i) for i in range(seats))]


def _round_trips(value: Any, target: Any) -> Any:
    raw = _encoder.encode(value)
    decoded = msgspec.json.decode(raw, type=target, strict=True)
    assert _encoder.encode(decoded) == raw, target
    return decoded


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_every_game_names_its_view_types(game_id: str) -> None:
    game = get_game(game_id)
    assert issubclass(game.view_type, msgspec.Struct)
    assert game.view_type.__struct_config__.frozen
    # both have JSON schemas (the OpenAPI publishes them as named components)
    msgspec.json.schema_components([game.view_type, game.event_view_type])
    assert game.view_type.__name__.endswith("View")


@pytest.mark.parametrize("game_id", GAME_IDS)
@pytest.mark.parametrize("seed", [21, 22])
def test_views_events_and_documents_decode_into_their_types_for_every_viewer(
    game_id: str, seed: int
) -> None:
    game = get_game(game_id)
    seats = _seats(game)
    played, _ = play_random_game(game, bytes([seed]) * 32, seats)
    table = Table(
        game_id="typed", game=game_id, seats=seats, options={}, version=1, status="active",
        names=[f"p{i}" for i in range(seats)], messages=[],
    )
    document_type: Any = GameDocument[game.view_type]
    last = played.records[-1].number
    state = None
    for record in played.records:
        state = game.evolve(state, record.event)
        for viewer in _viewers(seats):
            _round_trips(game.event_view(record.event, viewer), game.event_view_type)
        # every view: the first and last events, and a sample in between (views cost more)
        if record.number % 7 and record.number not in (1, last):
            continue
        table.state, table.version = state, record.number
        table.status = "finished" if record.number == last else "active"
        for viewer in _viewers(seats):
            view = game.view(state, viewer)
            assert isinstance(view, game.view_type)
            _round_trips(view, game.view_type)
        for key in viewer_keys(table):
            document = _round_trips(game_document(table, key), document_type)
            assert isinstance(document.view, game.view_type)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_pictures_draw_the_typed_view_a_client_decodes(game_id: str) -> None:
    """A view decoded from its JSON draws the very picture the server's own view draws, with
    and without the players' names."""
    game = get_game(game_id)
    seats = _seats(game)
    played, _ = play_random_game(game, bytes([23]) * 32, seats)
    names = Players(tuple(f"player {i}" for i in range(seats)))
    for n in sorted({1, len(played.records) // 2, len(played.records)}):
        state = game.fold(r.event for r in played.records[:n])
        for viewer in _viewers(seats):
            view = game.view(state, viewer)
            decoded = msgspec.json.decode(_encoder.encode(view), type=game.view_type)
            drawn = game.svg(view, names)
            assert drawn is not None and drawn == game.svg(decoded, names)
            assert "player 0" in drawn
            assert game.svg(decoded) == game.svg(view)


def test_a_missing_or_mistyped_field_does_not_decode() -> None:
    """The types are strict: a view with a field of the wrong type, or without a field, is
    refused (a client generated from them would notice a changed wire shape)."""
    game = get_game("jolly-cargo")
    played, _ = play_random_game(game, bytes([24]) * 32, 2)
    raw: dict[str, Any] = msgspec.to_builtins(game.view(played.state, SPECTATOR))
    msgspec.convert(raw, game.view_type)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({**raw, "turn": "7"}, game.view_type)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({k: v for k, v in raw.items() if k != "crates"}, game.view_type)
