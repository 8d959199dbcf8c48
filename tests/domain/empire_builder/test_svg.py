"""The picture hook: ``EMPIRE_BUILDER.svg(view)`` draws what a view holds — every seat's track
sections, trains with their loads, money — over the shipped map, valid XML, and the same picture
for the position form (``render_position``)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import msgspec
import pytest

from domain.empire_builder import EMPIRE_BUILDER, render
from domain.empire_builder.board import LOADS, MAP, edge_ends
from domain.empire_builder.position import state_from_position
from domain.empire_builder.views import EmpireBuilderView, MapRef
from domain.kernel import AuditorViewer, SeatViewer, SpectatorViewer

NS = "{http://www.w3.org/2000/svg}"

#: Seat 0 built from 812 through 813 to 814 and stands on 813; seat 1 carries Coal and Wine.
POSITION = {
    "players": [
        {"money": 48, "cards": [0, 1, 2], "track": [[812, 813, 814]], "turns": 4, "train": 813},
        {"money": 60, "cards": [3, 4, 5], "loads": ["Coal", "Wine"], "train": 1206,
         "speed": 12, "turns": 3},
        {"money": 35, "cards": [6, 7, 8], "turns": 0},
    ],
    "first": 0,
    "turn_number": 7,
}


def _served(viewer: object) -> EmpireBuilderView:
    """The view as a client reads it: its JSON decoded into the game's view type."""
    state = state_from_position(EMPIRE_BUILDER.decode_position(json.dumps(POSITION).encode()))
    view = EMPIRE_BUILDER.view(state, viewer)  # type: ignore[arg-type]
    return msgspec.json.decode(msgspec.json.encode(view), type=EmpireBuilderView)


def test_the_picture_holds_the_views_tracks_trains_and_loads() -> None:
    view = _served(SpectatorViewer())
    svg = EMPIRE_BUILDER.svg(view)
    assert svg is not None
    root = ET.fromstring(svg)
    assert root.tag == f"{NS}svg"
    tracks = [e for e in root.iter(f"{NS}line") if e.get("class") == "track"]
    owned = sorted((e.get("data-seat"), e.get("data-from"), e.get("data-to")) for e in tracks)
    assert owned == [("0", "812", "813"), ("0", "813", "814")]
    assert all(e.get("stroke") == render.PLAYER_COLOURS[0] for e in tracks)
    trains = {e.get("data-seat"): e for e in root.iter(f"{NS}rect") if e.get("class") == "train"}
    assert sorted(trains) == ["0", "1"]  # seat 2 has not placed its train
    assert trains["0"].get("data-milepost") == "813" and trains["0"].get("data-loads") == ""
    assert trains["1"].get("data-milepost") == "1206"
    assert trains["1"].get("data-loads") == "Coal,Wine"
    loads = [e for e in root.iter(f"{NS}text") if e.get("class") == "loads"]
    assert [(e.get("data-seat"), e.text) for e in loads] == [("1", "Coal, Wine")]
    panel = [e.text for e in root.iter(f"{NS}text") if e.get("class") == "panel"]
    assert panel[:3] == ["Seat 0: 48M, loads: -", "Seat 1: 60M, loads: Coal, Wine",
                         "Seat 2: 35M, loads: -, train not placed"]
    # every city of the map is named
    names = {e.text for e in root.iter(f"{NS}text")}
    assert set(MAP.cities) <= names
    # the position form draws through the same code
    assert render.render_position(json.dumps(POSITION).encode()) == svg


def test_every_viewer_gets_the_same_public_picture_and_another_map_none() -> None:
    """Nothing in an Empire Builder view is hidden but the deck, which is never drawn."""
    pictures = {EMPIRE_BUILDER.svg(_served(v))
                for v in (SpectatorViewer(), SeatViewer(0), SeatViewer(1), AuditorViewer())}
    assert len(pictures) == 1
    view = msgspec.structs.replace(
        _served(SpectatorViewer()), map=MapRef(hash="0" * 64, asset="elsewhere")
    )
    assert EMPIRE_BUILDER.svg(view) is None


def test_sections_of_every_seat_are_drawn_in_their_colour() -> None:
    a, b = edge_ends(next(iter(sorted(MAP.river))))
    view = msgspec.structs.replace(_served(SpectatorViewer()), tracks=[[], [], [[a, b]]])
    svg = EMPIRE_BUILDER.svg(view)
    assert svg is not None
    tracks = [e for e in ET.fromstring(svg).iter(f"{NS}line") if e.get("class") == "track"]
    assert [(e.get("data-seat"), e.get("stroke")) for e in tracks] == [
        ("2", render.PLAYER_COLOURS[2])]


def _supply(svg: str) -> list[tuple[str | None, str | None]]:
    root = ET.fromstring(svg)
    return sorted(
        (e.get("data-load"), e.get("data-city"))
        for e in root.iter(f"{NS}circle")
        if e.get("class") == "supply"
    )


def test_a_load_marks_the_cities_that_supply_it_and_only_then() -> None:
    """The manual shows a load's supply cities when the load is clicked: ``load`` rings every
    city of the load's supply list (and no other), at the city's milepost; without it, none."""
    view = _served(SpectatorViewer())
    plain = EMPIRE_BUILDER.svg(view)
    assert plain is not None and _supply(plain) == []
    for load in ("Coal", "Wine", sorted(LOADS)[-1]):
        svg = EMPIRE_BUILDER.svg(view, load=load)
        assert svg is not None
        assert _supply(svg) == sorted((load, city) for city in LOADS[load].supply), load
        assert f"{load} is supplied at {', '.join(sorted(LOADS[load].supply))}" in svg
        rings = [e for e in ET.fromstring(svg).iter(f"{NS}circle") if e.get("class") == "supply"]
        for ring in rings:
            x, y = render._xy(MAP.cities[str(ring.get("data-city"))].mileposts[0])
            assert (float(ring.get("cx") or 0), float(ring.get("cy") or 0)) == (x, y)
    # an unknown load is refused, not drawn
    with pytest.raises(ValueError):
        EMPIRE_BUILDER.svg(view, load="Kryptonite")
