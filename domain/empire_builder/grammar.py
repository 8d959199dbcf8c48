"""What ``legal`` does not list (:mod:`domain.kernel.grammar`): a ``move`` or ``build`` of
several steps (any chain of the listed steps: a move's mileposts one by one, a build's sections
pair by pair, its ``cost`` the sum of theirs or left out), any ``borrow`` amount up to the one
listed, and a ``choose_face``, which any seat may send at any time while the game is on."""

from __future__ import annotations

from domain.kernel.grammar import OneOf, Range, Rule, Steps

from . import commands as cmd
from .board import FACES
from .state import State


def grammar(state: State, seat: int, listed: list[cmd.Command]) -> list[Rule]:
    if state.phase == "finished":
        return []
    rules: list[Rule] = [OneOf("choose_face", "face", list(FACES))]
    if any(isinstance(c, cmd.Move) for c in listed):
        rules.append(Steps("move", "path", 1))
    if any(isinstance(c, cmd.Build) for c in listed):
        rules.append(Steps("build", "path", 2, total="cost"))
    for c in listed:
        if isinstance(c, cmd.Borrow):
            rules.append(Range("borrow", "amount", 1, c.amount))
    return rules
