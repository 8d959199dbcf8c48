"""The appends, one family: one description of what an append writes and the SQL of its three
paths, every parameter bound by name.

An append moves a game from (``version``, ``head``) to (``new_version``, ``new_head``) and
inserts its events (:class:`Append`); a game command's append also records the command that
made them, accepted (:class:`CommandAppend`). The three paths write it:

- under the game's row lock (:class:`service.eventstore.locked.Locked`): :data:`INSERT_EVENTS`
  then :data:`MOVE_GAME`, in the lock's transaction;
- alone, in one compare-and-set statement (:mod:`service.eventstore.optimistic`):
  :data:`APPEND_COMMAND`;
- with the others of its loop turn, in one statement (:mod:`service.eventstore.batched`):
  :data:`APPEND_MANY`, whose parameters are the same fields as columns (one entry per append,
  or per event for the event fields).

The SQL names its parameters (``:game_id``); :class:`Named` numbers them for asyncpg (``$n``)
once, when the module is loaded, checks every name against the fields it is bound from, and
binds a record by field name — so a field added, removed or reordered cannot bind a value to
the wrong column. JSON is sent as text (``::text::jsonb``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from operator import attrgetter
from typing import Any

import msgspec

from service.eventstore.pgrows import GAME_COLS

_PARAMETER = re.compile(r"(?<![:\w]):([a-z_][a-z0-9_]*)")


class Named:
    """SQL with ``:name`` parameters, numbered ``$1 ...`` by first appearance (:attr:`sql`);
    :meth:`of` gives a record's values in that order by attribute name, :meth:`of_columns` a
    mapping's. A name that is none of ``names`` (the fields it is bound from) is refused when
    the statement is defined; so is a ``$n`` written by hand."""

    def __init__(self, text: str, names: Iterable[str]) -> None:
        if re.search(r"\$\d", text):
            raise ValueError("a Named statement names its parameters (:name), not $n")
        order: list[str] = []

        def number(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in order:
                order.append(name)
            return f"${order.index(name) + 1}"

        #: the statement as written (``:name``) and as sent (``$n``)
        self.text = text
        self.sql = _PARAMETER.sub(number, text)
        unknown = sorted(set(order) - set(names))
        if unknown:
            raise ValueError(f"parameters that are no field: {unknown}")
        self.names = tuple(order)
        getter = attrgetter(*order)
        self._get = getter if len(order) > 1 else lambda record: (getter(record),)

    def of(self, record: Any) -> tuple[Any, ...]:
        """The statement's arguments: ``record``'s attributes named by its parameters."""
        result: tuple[Any, ...] = self._get(record)
        return result

    def of_columns(self, columns: Mapping[str, Any]) -> tuple[Any, ...]:
        """The statement's arguments from ``columns`` (every name must be there)."""
        return tuple(columns[name] for name in self.names)


class Append(msgspec.Struct, frozen=True, kw_only=True):
    """One append: the game's move and its events, as columns (JSON as text). ``status``,
    ``result`` and ``players`` replace the game's when not None."""

    game_id: str  # asyncpg encodes a UUID from its text
    version: int
    head: bytes
    new_version: int
    new_head: bytes
    at: datetime
    status: str | None
    result: str | None
    seat: int | None
    command_id: str | None
    # one entry per event, in version order
    versions: list[int]
    types: list[str]
    data: list[str]
    prev_hashes: list[bytes]
    hashes: list[bytes]
    publics: list[str | None]
    #: Only the locked path sets the seats (lobby commands); a game command leaves them.
    players: str | None = None

    def __post_init__(self) -> None:
        n = len(self.versions)
        if not n or any(len(c) != n for c in (self.types, self.data, self.prev_hashes)):
            raise ValueError("an append has one entry per event in every event column")
        if len(self.hashes) != n or len(self.publics) != n:
            raise ValueError("an append has one entry per event in every event column")


class CommandAppend(Append, frozen=True, kw_only=True):
    """An append with the accepted command that made it, recorded by the same statement."""

    idempotency_key: str | None
    command_type: str
    body: str
    received_at: datetime
    response: str


#: The fields of an append that have one entry per event.
EVENT_FIELDS = ("versions", "types", "data", "prev_hashes", "hashes", "publics")

_APPEND_FIELDS = Append.__struct_fields__
_COMMAND_FIELDS = CommandAppend.__struct_fields__

INSERT_EVENTS = Named(
    """
INSERT INTO events (game_id, version, type, data, seat, command_id, recorded_at, prev_hash, hash,
                    public)
SELECT :game_id::uuid, u.v, u.t, u.d::jsonb, :seat::int, :command_id::uuid, :at::timestamptz,
       u.p, u.h, u.c::jsonb
FROM unnest(:versions::int[], :types::text[], :data::text[], :prev_hashes::bytea[],
            :hashes::bytea[], :publics::text[])
     AS u(v, t, d, p, h, c)
""",
    _APPEND_FIELDS,
)

MOVE_GAME = Named(
    "UPDATE games SET version = :new_version, head = :new_head, updated_at = :at, "
    "status = coalesce(:status, status), "
    "result = coalesce(:result::text::jsonb, result), "
    "players = coalesce(:players::text::jsonb, players) "
    f"WHERE id = :game_id RETURNING {GAME_COLS}",
    _APPEND_FIELDS,
)

APPEND_COMMAND = Named(
    """
WITH moved AS (
    UPDATE games
       SET version = :new_version, head = :new_head, updated_at = :at,
           status = coalesce(:status, status), result = coalesce(:result::text::jsonb, result)
     WHERE id = :game_id AND version = :version AND head = :head
 RETURNING id
), appended AS (
    INSERT INTO events (game_id, version, type, data, seat, command_id, recorded_at, prev_hash,
                        hash, public)
    SELECT moved.id, u.v, u.t, u.d::jsonb, :seat::int, :command_id::uuid, :at::timestamptz,
           u.p, u.h, u.c::jsonb
      FROM moved, unnest(:versions::int[], :types::text[], :data::text[], :prev_hashes::bytea[],
                         :hashes::bytea[], :publics::text[])
           AS u(v, t, d, p, h, c)
    RETURNING 1
), recorded AS (
    INSERT INTO commands (id, game_id, seat, idempotency_key, type, body, received_at, outcome,
                          first_version, last_version, response)
    SELECT :command_id::uuid, moved.id, :seat::int, :idempotency_key, :command_type,
           :body::text::jsonb, :received_at::timestamptz, 'accepted', :version + 1,
           :new_version, :response::text::jsonb
      FROM moved
    RETURNING 1
)
SELECT (SELECT count(*) FROM moved) AS moved,
       (SELECT count(*) FROM appended) AS appended,
       (SELECT count(*) FROM recorded) AS recorded
""",
    _COMMAND_FIELDS,
)

APPEND_MANY = Named(
    """
WITH batch AS (
    SELECT * FROM unnest(:member::int[], :game_id::uuid[], :version::int[], :head::bytea[],
                         :new_version::int[], :new_head::bytea[], :at::timestamptz[],
                         :status::text[], :result::text[], :seat::int[], :command_id::uuid[],
                         :idempotency_key::text[], :command_type::text[], :body::text[],
                         :received_at::timestamptz[], :response::text[])
           AS b(i, id, v, h, nv, nh, at, st, res, seat, cid, ikey, ctype, body, recv, resp)
), locked AS (
    SELECT b.* FROM batch b JOIN games g ON g.id = b.id AND g.version = b.v AND g.head = b.h
     WHERE b.ikey IS NULL OR NOT EXISTS (
           SELECT 1 FROM commands c
            WHERE c.game_id = b.id AND coalesce(c.seat, -1) = coalesce(b.seat, -1)
              AND c.idempotency_key = b.ikey)
       FOR NO KEY UPDATE OF g SKIP LOCKED
), moved AS (
    UPDATE games g
       SET version = l.nv, head = l.nh, updated_at = l.at,
           status = coalesce(l.st, g.status), result = coalesce(l.res::jsonb, g.result)
      FROM locked l
     WHERE g.id = l.id AND g.version = l.v AND g.head = l.h
 RETURNING l.*
), appended AS (
    INSERT INTO events (game_id, version, type, data, seat, command_id, recorded_at, prev_hash,
                        hash, public)
    SELECT m.id, u.v, u.t, u.d::jsonb, m.seat, m.cid, m.at, u.p, u.h, u.c::jsonb
      FROM moved m
      JOIN unnest(:event_member::int[], :versions::int[], :types::text[], :data::text[],
                  :prev_hashes::bytea[], :hashes::bytea[], :publics::text[])
           AS u(i, v, t, d, p, h, c) ON u.i = m.i
    RETURNING 1
), recorded AS (
    INSERT INTO commands (id, game_id, seat, idempotency_key, type, body, received_at, outcome,
                          first_version, last_version, response)
    SELECT m.cid, m.id, m.seat, m.ikey, m.ctype, m.body::jsonb, m.recv, 'accepted', m.v + 1,
           m.nv, m.resp::jsonb
      FROM moved m
    RETURNING 1
)
SELECT array(SELECT i FROM moved) AS moved,
       (SELECT count(*) FROM appended) AS appended,
       (SELECT count(*) FROM recorded) AS recorded
""",
    (*_COMMAND_FIELDS, "member", "event_member"),
)

#: The fields the batch statement takes one entry of per append (``member``: its index).
_PER_APPEND = tuple(
    n for n in APPEND_MANY.names if n not in EVENT_FIELDS and n not in ("member", "event_member")
)
_PER_EVENT = tuple(n for n in APPEND_MANY.names if n in EVENT_FIELDS)
if set(_PER_APPEND) | set(_PER_EVENT) != set(_COMMAND_FIELDS) - {"players"}:
    raise ValueError("the batch statement must take every field of a command's append")


def batch_arguments(batch: list[CommandAppend]) -> tuple[Any, ...]:
    """:data:`APPEND_MANY`'s arguments: each per-append field as a column with one entry per
    append, each event field as a column with one entry per event, the members' indexes
    beside them (``member``, ``event_member``)."""
    columns: dict[str, Any] = {name: [getattr(a, name) for a in batch] for name in _PER_APPEND}
    columns["member"] = list(range(len(batch)))
    for name in _PER_EVENT:
        columns[name] = [value for a in batch for value in getattr(a, name)]
    columns["event_member"] = [i for i, a in enumerate(batch) for _ in a.versions]
    return APPEND_MANY.of_columns(columns)
