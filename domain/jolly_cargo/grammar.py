"""What ``legal`` does not list (:mod:`domain.kernel.grammar`): a stack of Dockhands moving
together (``move`` with several ``workers``) names them in any order; ``legal`` lists one."""

from __future__ import annotations

from domain.kernel.grammar import AnyOrder, Rule

from . import commands as cmd
from .state import State


def grammar(state: State, seat: int, listed: list[cmd.Command]) -> list[Rule]:
    if any(isinstance(c, cmd.Move) and len(c.workers) > 1 for c in listed):
        return [AnyOrder("move", "workers")]
    return []
