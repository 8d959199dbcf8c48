"""The legal contract: what ``legal`` promises, and the grammar of what it does not list.

``legal(state, seat)`` lists commands the seat may send now. Where a game can list every
command it does (``complete``); where the commands are too many to list (a multi-step path, an
ordering of tiles), ``grammar(state, seat)`` adds rules saying which further commands are
accepted (given the listed commands, so they are computed once), each a :data:`Rule` naming
the command ``type`` it widens. The promise, checked
both ways by ``tests/domain/test_legal_contract.py`` for every registered game: a command is
accepted exactly when it is listed or a rule derives it from the listed ones.

The rules (``form`` is the tag):

* ``steps``: a command of ``type`` whose list ``field`` holds several steps is the listed
  one-step commands of that type sent in turn: windows of ``window`` consecutive entries of
  ``field`` (1: each entry is a step, as a ``move`` path's mileposts; 2: each pair is a step, as
  a ``build`` path's sections), each listed once the steps before it are played. ``total``:
  a field the command may give as the sum of its steps' own (a ``build``'s ``cost``) or leave
  out.
* ``any_order``: a listed command of ``type`` with the entries of its list ``field`` in any
  order.
* ``assignment``: a command of ``type`` whose list ``field`` holds each of ``items`` once, in
  any order, each as ``{item: <one of items>, choice: <one of choices>}``.
* ``range``: a listed command of ``type`` with its integer ``field`` any of ``minimum`` to
  ``maximum``.
* ``one_of``: ``{"type": type, field: <one of values>}``, accepted now though not listed (a
  cosmetic choice any seat may make at any time, kept out of the list bots pick from).
"""

from __future__ import annotations

from typing import Any

import msgspec


class Steps(msgspec.Struct, frozen=True, tag="steps", tag_field="form"):
    type: str
    field: str
    window: int
    total: str | None = None


class AnyOrder(msgspec.Struct, frozen=True, tag="any_order", tag_field="form"):
    type: str
    field: str


class Assignment(msgspec.Struct, frozen=True, tag="assignment", tag_field="form"):
    type: str
    field: str
    item: str
    items: list[str]
    choice: str
    choices: list[int]


class Range(msgspec.Struct, frozen=True, tag="range", tag_field="form"):
    type: str
    field: str
    minimum: int
    maximum: int


class OneOf(msgspec.Struct, frozen=True, tag="one_of", tag_field="form"):
    type: str
    field: str
    values: list[str]


#: One rule of a legal document's ``grammar``.
Rule = Steps | AnyOrder | Assignment | Range | OneOf


def legal_answer(commands: list[Any], grammar: list[Rule]) -> dict[str, Any]:
    """The ``commands``/``complete``/``grammar`` part of a legal document."""
    return {"commands": commands, "complete": not grammar, "grammar": grammar}
