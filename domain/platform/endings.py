"""Ending a game other than by its rules: resign and abort (docs/api.md "Ending a game").

Both are platform commands, decided here once for every game, on the table (pure):

* ``{"type": "resign"}`` — any seat still in the game, at any time while the game is live, on
  its turn or not. ``game.resigned`` is appended. When at most one seat is left in the game,
  the game ends (``result.reason`` ``resigned``; the seat left, if any, wins). Otherwise the
  others play on: the resigned seat keeps what it holds and is never asked again — whenever
  the rules wait for it, the platform sends the game's own minimal legal command for it (the
  clock's expiry move, ``Game.expiry_command``), in the same decision as the command that
  made it due, so ``to_act`` never names it. When the game then ends by its rules, the
  resigned seats are ranked last: they are no winners (docs/rules/<game>.md, "Decision").
* ``{"type": "abort"}`` — any seat, until every seat has made its first move: the game is
  called off with no result (``game.aborted``, ``result.reason`` ``aborted``, no winners, no
  scores); afterwards ``rule.abort_too_late``.

The audit re-runs :func:`decide` for every command (``service.audit.adjudication``), so a
``game.resigned`` no seat sent, or the minimal moves made for a resigned seat, are checked like
any game event.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from domain.kernel import Outcome, Rng, RuleError

#: How many minimal moves one decision may make for resigned seats (a guard: a game whose
#: minimal move never ends a turn would otherwise loop).
MINIMAL_MOVES_LIMIT = 10_000


class Resign(msgspec.Struct, frozen=True, tag="resign", tag_field="type"):
    """A seat gives the game up."""


class Abort(msgspec.Struct, frozen=True, tag="abort", tag_field="type"):
    """A seat calls the game off before every seat has moved."""


Ending = Resign | Abort
COMMANDS = frozenset({"resign", "abort"})


class Resigned(msgspec.Struct, frozen=True, tag="game.resigned", tag_field="type"):
    seat: int


class Aborted(msgspec.Struct, frozen=True, tag="game.aborted", tag_field="type"):
    seat: int


def decode_command(rules: Any, raw: Mapping[str, Any] | bytes | str) -> Any:
    """A platform ending command, or the game's own command (``rules.decode_command``)."""
    if isinstance(raw, Mapping) and raw.get("type") in COMMANDS:
        return rules._decode(raw, Ending, "command.invalid")
    return rules.decode_command(raw)


def live(table: Any) -> bool:
    return table.state is not None and table.status == "active"


def abortable(table: Any) -> bool:
    """Whether the game may still be called off: live, and some seat has not moved yet."""
    return live(table) and len(set(table.moved)) < table.seats


def allowed(table: Any, seat: int) -> list[Any]:
    """The ending commands ``seat`` may send now (listed in ``/legal`` after the game's)."""
    if not live(table) or not 0 <= seat < table.seats or seat in table.resigned:
        return []
    return [Resign(), Abort()] if abortable(table) else [Resign()]


def decide(table: Any, seat: int, command: Any, rng: Rng) -> list[Any]:
    """The events ``command`` by ``seat`` causes on the live ``table``: an ending command's,
    or the game's own (``rules.decide``), each followed by the minimal moves the resigned
    seats are due."""
    rules = table.rules
    if isinstance(command, (Resign, Abort)):
        seats = table.seats
        if not 0 <= seat < seats:
            raise RuleError("rule.no_such_seat", f"this game has seats 0 to {seats - 1}")
        if not live(table):
            raise RuleError("rule.game_over", "the game is over")
        if seat in table.resigned:
            raise RuleError("rule.resigned", f"seat {seat} has resigned")
        if isinstance(command, Abort):
            if not abortable(table):
                raise RuleError(
                    "rule.abort_too_late", "every seat has moved: the game can no longer be aborted"
                )
            return [Aborted(seat)]
        resigned = [*table.resigned, seat]
        if len(remaining(seats, resigned)) <= 1:
            return [Resigned(seat)]
        return [Resigned(seat), *minimal_moves(rules, table.state, resigned, rng)]
    if seat in table.resigned:
        raise RuleError("rule.resigned", f"seat {seat} has resigned")
    events: list[Any] = rules.decide(table.state, seat, command, rng)
    if not table.resigned:
        return events
    after = rules.fold(events, table.state) if events else table.state
    return [*events, *minimal_moves(rules, after, table.resigned, rng)]


def remaining(seats: int, resigned: list[int]) -> list[int]:
    return [s for s in range(seats) if s not in resigned]


def minimal_moves(rules: Any, state: Any, resigned: list[int], rng: Rng) -> list[Any]:
    """The game's minimal legal commands for the resigned seats, while the rules wait for one
    of them (and the game is not over): their events."""
    events: list[Any] = []
    for _ in range(MINIMAL_MOVES_LIMIT):
        if rules.outcome(state) is not None:
            return events
        due = [s for s in rules.to_act(state) if s in resigned]
        if not due:
            return events
        produced = rules.decide(state, due[0], rules.expiry_command(state, due[0]), rng)
        events.extend(produced)
        state = rules.fold(produced, state) if produced else state
    raise RuleError("rule.stalled", "the resigned seats' minimal moves do not end")


# --- what the table says -----------------------------------------------------------------------
def outcome(table: Any) -> Outcome | None:
    """The table's result: the game's (resigned seats no winners), or the platform's ending."""
    if table.ended == "aborted":
        return Outcome(scores=[], winners=[], details={}, reason="aborted")
    if table.ended == "resigned":
        left = remaining(table.seats, table.resigned)
        return Outcome(
            scores=[1 if s in left else 0 for s in range(table.seats)],
            winners=left,
            details={"resigned": list(table.resigned)},
            reason="resigned",
        )
    if table.state is None:
        return None
    result: Outcome | None = table.rules.outcome(table.state)
    if result is None or not table.resigned:
        return result
    return ranked_last(result, table.resigned)


def ranked_last(result: Outcome, resigned: list[int]) -> Outcome:
    """A game's own result with the resigned seats ranked last: never winners (the best of the
    others by score win instead, if every winner had resigned)."""
    winners = [s for s in result.winners if s not in resigned]
    if not winners:
        others = [s for s in range(len(result.scores)) if s not in resigned]
        best = max((result.scores[s] for s in others), default=None)
        winners = [s for s in others if result.scores[s] == best]
    return msgspec.structs.replace(
        result, winners=winners, details={**result.details, "resigned": list(resigned)}
    )


def to_act(table: Any) -> list[int]:
    """The seats the table waits for: the game's, never a resigned seat, none once ended."""
    if table.state is None or table.ended is not None:
        return []
    waiting: list[int] = table.rules.to_act(table.state)
    return [s for s in waiting if s not in table.resigned]
