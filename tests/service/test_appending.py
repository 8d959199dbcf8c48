"""service/eventstore/appending.py: the three append paths share one description of an append,
and their SQL binds it by name — a field added, dropped or moved cannot bind a value to the
wrong column (no database: what PostgreSQL does with the statements is in
tests/integration/test_store.py and test_batched_appends.py)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import msgspec
import pytest

from service.eventstore.appending import (
    APPEND_COMMAND,
    APPEND_MANY,
    EVENT_FIELDS,
    INSERT_EVENTS,
    MOVE_GAME,
    Append,
    CommandAppend,
    Named,
    batch_arguments,
)

AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def _append(game: str, events: int, **fields: object) -> CommandAppend:
    n = range(1, events + 1)
    values: dict[str, object] = {
        "game_id": game,
        "version": 0,
        "head": b"h0" + game.encode(),
        "new_version": events,
        "new_head": b"hN" + game.encode(),
        "at": AT,
        "status": "finished",
        "result": '{"winners":[0]}',
        "seat": 1,
        "command_id": f"c-{game}",
        "versions": list(n),
        "types": [f"t{i}" for i in n],
        "data": [f'{{"i":{i}}}' for i in n],
        "prev_hashes": [b"p%d" % i for i in n],
        "hashes": [b"h%d" % i for i in n],
        "publics": [None for _ in n],
        "idempotency_key": f"k-{game}",
        "command_type": "move",
        "body": '{"type":"move"}',
        "received_at": AT,
        "response": '{"ok":true}',
        **fields,
    }
    return CommandAppend(**values)  # type: ignore[arg-type]


def _renumbered(named: Named) -> str:
    return re.sub(r"\$(\d+)", lambda m: ":" + named.names[int(m.group(1)) - 1], named.sql)


@pytest.mark.parametrize("named", [INSERT_EVENTS, MOVE_GAME, APPEND_COMMAND, APPEND_MANY])
def test_each_dollar_parameter_is_the_name_written_there(named: Named) -> None:
    """Putting the names back where their numbers are gives the statement as written: every
    ``$n`` is bound from the field named at its place, casts (``::text``) left alone."""
    assert _renumbered(named) == named.text
    assert len(set(named.names)) == len(named.names)
    assert "::" in named.sql and not re.search(r"(?<![:\w]):[a-z]", named.sql)


def test_the_arguments_follow_the_names_not_the_fields_order() -> None:
    append = _append("g", 2)
    args = APPEND_COMMAND.of(append)
    assert len(args) == len(APPEND_COMMAND.names)
    for name, value in zip(APPEND_COMMAND.names, args, strict=True):
        assert value == getattr(append, name), name

    class Reordered(msgspec.Struct):  # the same fields, in another order
        response: str
        game_id: str
        version: int

    named = Named("SELECT :game_id, :version, :response, :game_id", Reordered.__struct_fields__)
    assert named.sql == "SELECT $1, $2, $3, $1"
    assert named.of(Reordered(response="r", game_id="g", version=7)) == ("g", 7, "r")
    assert named.of_columns({"version": 1, "response": 2, "game_id": 3}) == (3, 1, 2)


def test_a_name_that_is_no_field_or_a_hand_written_number_is_refused() -> None:
    with pytest.raises(ValueError, match="no field"):
        Named("UPDATE games SET version = :new_verison", Append.__struct_fields__)
    with pytest.raises(ValueError, match=r"\$n"):
        Named("UPDATE games SET version = $1 WHERE id = :game_id", Append.__struct_fields__)


def test_every_field_of_an_append_is_written_by_every_path() -> None:
    """A field added to the description must be written by each path (or named here as one it
    leaves): the game's seats only by the locked path; under the lock the version is checked
    by the lock, not by the statement."""
    commands = set(CommandAppend.__struct_fields__)
    assert commands - set(APPEND_COMMAND.names) == {"players"}
    assert commands - set(APPEND_MANY.names) == {"players"}
    assert set(APPEND_MANY.names) - commands == {"member", "event_member"}
    locked = set(INSERT_EVENTS.names) | set(MOVE_GAME.names)
    assert set(Append.__struct_fields__) - locked == {"version", "head"}
    assert set(EVENT_FIELDS) <= set(INSERT_EVENTS.names)


def test_an_append_has_one_entry_per_event_in_every_event_column() -> None:
    with pytest.raises(ValueError, match="one entry per event"):
        _append("g", 2, hashes=[b"h1"])
    with pytest.raises(ValueError, match="one entry per event"):
        _append("g", 0)


def test_a_batch_is_columns_by_name_with_its_members_indexes() -> None:
    a, b = _append("a", 1), _append("b", 2, status=None, idempotency_key=None)
    args = dict(zip(APPEND_MANY.names, batch_arguments([a, b]), strict=True))
    assert args["member"] == [0, 1]
    assert args["event_member"] == [0, 1, 1]
    for name in set(APPEND_MANY.names) - {"member", "event_member"}:
        if name in EVENT_FIELDS:
            assert args[name] == getattr(a, name) + getattr(b, name), name
        else:
            assert args[name] == [getattr(a, name), getattr(b, name)], name
    assert args["status"] == ["finished", None]
    assert args["idempotency_key"] == ["k-a", None]
