"""Shared bits of the games' board pictures (``domain/<game>/svg.py``).

A game draws a *view* — the typed view (a msgspec Struct) its ``view`` returns for one viewer —
never a state, so a picture can show nothing the viewer may not see; the players' names come
beside it (:class:`Players`), never inside it. Pictures are plain SVG 1.1 text, pure and
deterministic: the same view gives the same bytes. Every drawn piece carries a ``class`` and
``data-*`` attributes naming what it is (``class="crate" data-colour="red"``) so that tests and
scripts can read a picture back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import msgspec

SVG_MEDIA_TYPE = "image/svg+xml"

#: Colours shared by the pictures: players' and cargo colours by name.
PALETTE: dict[str, str] = {
    "red": "#d1382f",
    "blue": "#2f6fd1",
    "green": "#2f9e4f",
    "yellow": "#e8c22a",
    "brown": "#8a5a2b",
    "white": "#f4f1ea",
    "grey": "#8c8f94",
    "orange": "#f08a24",
    "purple": "#8a4fc7",
    "black": "#2b2b2b",
}
#: The paper of side panels and notices, and its edge.
PAPER, PAPER_EDGE = "#f7f3ea", "#c9bfa8"
#: Colours of seats 0..4 where a game has no colours of its own.
SEAT_COLOURS: tuple[str, ...] = ("#d1382f", "#2f6fd1", "#2f9e4f", "#e8c22a", "#8a4fc7")


def _num(value: float) -> str:
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return text if text != "-0" else "0"


def _attrs(attrs: Mapping[str, Any]) -> str:
    out = []
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        name = key.rstrip("_").replace("_", "-")
        text = _num(value) if isinstance(value, float) else str(value)
        out.append(f" {name}={quoteattr(text)}")
    return "".join(out)


class Picture:
    """An SVG document built element by element; ``str(picture)`` is the document."""

    def __init__(self, width: float, height: float, title: str) -> None:
        self.width = width
        self.height = height
        self._parts: list[str] = [f"<title>{escape(title)}</title>"]

    def add(self, tag: str, text: str | None = None, **attrs: Any) -> None:
        if text is None:
            self._parts.append(f"<{tag}{_attrs(attrs)}/>")
        else:
            self._parts.append(f"<{tag}{_attrs(attrs)}>{escape(text)}</{tag}>")

    def open(self, tag: str, **attrs: Any) -> None:
        self._parts.append(f"<{tag}{_attrs(attrs)}>")

    def close(self, tag: str) -> None:
        self._parts.append(f"</{tag}>")

    def text(self, x: float, y: float, text: str, **attrs: Any) -> None:
        attrs.setdefault("text_anchor", "middle")
        self.add("text", text, x=float(x), y=float(y), **attrs)

    def __str__(self) -> str:
        w, h = _num(self.width), _num(self.height)
        return (
            '<svg xmlns="http://www.w3.org/2000/svg" version="1.1" '
            f'width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
            'font-family="DejaVu Sans, Verdana, sans-serif">' + "".join(self._parts) + "</svg>"
        )


def colour(name: str | None, default: str = "#999999") -> str:
    """The fill of a named colour (a player's or a cargo's)."""
    if name is None:
        return default
    return PALETTE.get(name, default)


def seat_colour(seat: int | None) -> str:
    if seat is None:
        return "#999999"
    return SEAT_COLOURS[seat % len(SEAT_COLOURS)]


class Players(msgspec.Struct, frozen=True):
    """Who sits at the table, as a picture names them: a view holds no names (the lobby
    does), and a picture that has them says "ann" where it would say "seat 0"."""

    #: The players' names by seat (None: an empty seat, or a name the caller does not know).
    names: tuple[str | None, ...] = ()

    def name(self, seat: int, limit: int = 16, unnamed: str = "seat {}") -> str:
        """A seat's player's name as the picture shows it (at most ``limit`` characters), or
        ``unnamed`` with the seat's number when there is no name for it.

        >>> players = Players(("ann", None, "a very long name indeed"))
        >>> players.name(0), players.name(1), players.name(2)
        ('ann', 'seat 1', 'a very long nam…')
        >>> NO_NAMES.name(3), NO_NAMES.name(3, unnamed="Seat {}")
        ('seat 3', 'Seat 3')
        """
        name = self.names[seat] if 0 <= seat < len(self.names) else None
        if not name:
            return unnamed.format(seat)
        return name if len(name) <= limit else name[: limit - 1] + "…"


#: A table whose names a picture does not know: every seat is "seat N".
NO_NAMES = Players()


def side_panel(pic: Picture, x: float) -> None:
    """The paper behind a picture's side panel, from ``x`` to the picture's right edge."""
    pic.add(
        "rect",
        x=x - 8,
        y=8,
        width=pic.width - x,
        height=pic.height - 16,
        rx=8,
        fill=PAPER,
        stroke=PAPER_EDGE,
    )


def notice(title: str, text: str) -> str:
    """A small picture saying there is nothing to draw yet (e.g. a game waiting for players)."""
    pic = Picture(420, 120, title)
    pic.add("rect", x=0, y=0, width=420, height=120, rx=10, fill=PAPER, stroke=PAPER_EDGE)
    pic.text(210, 52, title, font_size=18, font_weight="bold")
    pic.text(210, 80, text, font_size=13, fill="#555555")
    return str(pic)
