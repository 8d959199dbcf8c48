"""The SVG picture of a position is valid XML and shows what the position holds."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import msgspec

from domain.curious_cargo import CURIOUS_CARGO
from domain.curious_cargo.svg import render
from domain.kernel import AuditorViewer, SeatViewer, SpectatorViewer, Viewer

from .support import at, state

NS = "{http://www.w3.org/2000/svg}"


def test_the_svg_shows_lines_docks_trucks_goods_and_boards() -> None:
    t = at({"phase": "trucking", "players": [
        {"board": [{"tile": "S2r1", "at": "b3", "rot": 0},
                   {"tile": "C2t1", "at": "c5", "rot": 90}],
         "forklift": 1, "shipped": {"red": 2}, "received": {"teal": 1}, "cards": ["T17"],
         "shipping_lane": [{"card": "T10", "rear": 1, "goods": {"2": "red"}}]},
        {"receiving_lane": [{"card": "T04", "rear": 3, "goods": {"1": "teal"}}],
         "cards": ["T22"]},
    ]})
    svg = render(state(t))
    root = ET.fromstring(svg)
    assert root.tag == f"{NS}svg"
    seats = root.findall(f"{NS}g[@data-seat]")
    assert [g.get("data-seat") for g in seats] == ["0", "1"]
    squares = {g.get("data-square"): g for g in seats[0].iter(f"{NS}g") if g.get("data-square")}
    assert sorted(squares) == ["b3", "c3", "c4", "c5"]
    assert squares["b3"].get("data-piece") == "S2r1" and squares["c5"].get("data-height") == "1"
    colours = {p.get("data-colour") for p in squares["c4"].iter(f"{NS}path")}
    assert colours == {"teal"}
    docks = {r.get("data-dock"): r.get("data-active") for r in seats[0].iter(f"{NS}rect")
             if r.get("data-dock")}
    assert len(docks) == 12 and [d for d, a in docks.items() if a == "true"] == ["S3"]
    trucks = {g.get("data-truck"): g for s in seats for g in s.iter(f"{NS}g")
              if g.get("data-truck")}
    assert trucks["T10"].get("data-lane") == "shipping"
    assert trucks["T04"].get("data-lane") == "receiving" and trucks["T04"].get("data-rear") == "3"
    goods = [(c.get("data-good"), c.get("data-slot")) for c in trucks["T10"].iter(f"{NS}circle")]
    assert goods == [("red", "2")]
    shipped = [c for c in seats[0].iter(f"{NS}circle") if c.get("data-shipped") == "true"]
    assert [(c.get("data-shipping"), c.get("data-value")) for c in shipped] == [
        ("red", "1"), ("red", "2")]
    filled = [c.get("data-receiving") for c in seats[0].iter(f"{NS}circle")
              if c.get("data-filled") == "true"]
    assert filled == ["teal"]
    # Cards in hand are hidden information: only their count is drawn.
    assert "T17" not in svg and "T22" not in svg and "cards: 1" in svg


#: The position drawn in docs/curious-cargo.svg (README and rules page).
SAMPLE = {"phase": "trucking", "players": [
    {"board": [{"tile": "S2r1", "at": "b3", "rot": 0}, {"tile": "C2t1", "at": "b5", "rot": 0},
               {"tile": "S3t1", "at": "b8", "rot": 0}, {"tile": "X2r1", "at": "f3", "rot": 0}],
     "forklift": 3, "shipped": {"red": 2, "teal": 1}, "tokens": {"construction": 1},
     "shipping_lane": [{"card": "T17", "rear": 1, "goods": {"2": "red"}},
                       {"card": "T10", "rear": 6, "goods": {"2": "teal"}}]},
    {"board": [{"tile": "S3t2", "at": "e3", "rot": 0}, {"tile": "S2r2", "at": "f8", "rot": 0}],
     "forklift": 2, "received": {"teal": 2},
     "receiving_lane": [{"card": "T01", "rear": 1, "goods": {"0": "teal"}}]},
]}


def test_the_documented_picture_is_current() -> None:
    """Regenerate with: render(at(SAMPLE).state) + "\\n" into docs/curious-cargo.svg."""
    path = Path(__file__).parents[3] / "docs" / "curious-cargo.svg"
    assert path.read_text("utf-8") == render(state(at(SAMPLE))) + "\n"


def test_the_hook_draws_each_viewers_view_and_hides_what_it_hides() -> None:
    """``CURIOUS_CARGO.svg(view)`` draws the view as served (JSON round trip into the game's
    ``view_type``): a seat sees its own truck cards by name, the other seat and a spectator only
    the count of them."""
    t = at({"phase": "trucking", "players": [
        {"cards": ["T17", "T05"], "board": [{"tile": "S2r1", "at": "b3", "rot": 0}], "forklift": 1,
         "shipping_lane": [{"card": "T10", "rear": 1, "goods": {"2": "red"}}]},
        {"cards": ["T22"], "receiving_lane": [{"card": "T04", "rear": 3, "goods": {"1": "teal"}}]},
    ]})
    s = state(t)

    def picture(viewer: Viewer) -> str:
        served = msgspec.json.decode(
            msgspec.json.encode(CURIOUS_CARGO.view(s, viewer)), type=CURIOUS_CARGO.view_type
        )
        out = CURIOUS_CARGO.svg(served)
        assert out is not None
        ET.fromstring(out)
        return out

    spectator = picture(SpectatorViewer())
    assert spectator == render(s)
    seat0, seat1, auditor = picture(SeatViewer(0)), picture(SeatViewer(1)), picture(AuditorViewer())
    for card in ("T17", "T05", "T22"):
        assert card not in spectator
    assert "cards: T17, T05" in seat0 and "T22" not in seat0 and "cards: 1" in seat0
    assert "cards: T22" in seat1 and "T17" not in seat1 and "cards: 2" in seat1
    assert "cards: T17, T05" in auditor and "cards: T22" in auditor
    # what is public is in every picture: boards, trucks and their goods
    for out in (spectator, seat0, seat1):
        root = ET.fromstring(out)
        trucks = [g.get("data-truck") for g in root.iter(f"{NS}g") if g.get("data-truck")]
        assert sorted(trucks) == ["T04", "T10"]
        goods = sorted(c.get("data-good") or "" for c in root.iter(f"{NS}circle")
                       if c.get("data-good"))
        assert goods == ["red", "teal"]
        assert [g.get("data-square") for g in root.iter(f"{NS}g") if g.get("data-square")] == [
            "b3", "c3"]
