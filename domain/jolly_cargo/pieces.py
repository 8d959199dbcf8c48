"""Workers: four kinds with different strength, named ``<colour>-<kind><n>`` (``red-D3``)."""

from __future__ import annotations

from typing import Literal

from .board import COLOURS, Colour

Kind = Literal["dockhand", "burly", "mule", "elephant"]

#: Steps in one action, crates a push may move, whether it can pull.
STEPS: dict[Kind, int] = {"dockhand": 1, "burly": 1, "mule": 2, "elephant": 2}
PUSH: dict[Kind, int] = {"dockhand": 1, "burly": 2, "mule": 1, "elephant": 2}
PULLS: dict[Kind, bool] = {"dockhand": False, "burly": False, "mule": True, "elephant": True}

_LETTER: dict[str, Kind] = {"D": "dockhand", "B": "burly", "M": "mule", "E": "elephant"}


_CREWS: dict[Colour, tuple[str, ...]] = {
    c: (*(f"{c}-D{i}" for i in range(1, 5)), f"{c}-B", f"{c}-M", f"{c}-E") for c in COLOURS
}


def crew(colour: Colour) -> list[str]:
    """The seven workers of one colour: four Dockhands, a Burly Worker, a Mule, an Elephant."""
    return list(_CREWS[colour])


ALL_WORKERS: frozenset[str] = frozenset(w for c in COLOURS for w in crew(c))


def _parsed_kind(worker: str) -> Kind:
    return _LETTER[worker.split("-", 1)[1][0]]


#: Every worker's kind, looked up instead of parsed (legal-command generation asks often).
_KIND: dict[str, Kind] = {w: _parsed_kind(w) for w in ALL_WORKERS}


def kind(worker: str) -> Kind:
    found = _KIND.get(worker)
    return _parsed_kind(worker) if found is None else found


def colour_of(worker: str) -> Colour:
    colour = worker.split("-", 1)[0]
    for known in COLOURS:
        if known == colour:
            return known
    raise ValueError(f"{worker!r} is not a worker id")


def is_dockhand(worker: str) -> bool:
    found = _KIND.get(worker)
    return worker.split("-", 1)[1][0] == "D" if found is None else found == "dockhand"
