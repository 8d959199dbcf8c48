"""What a game is: one typed decider record, :class:`Game`, whose fields are the game's value
types, its metadata and its pure functions over plain values (msgspec Structs):

* ``start(options, seats, rng)`` and ``start_from_position(position, rng)`` produce the opening
  events; folding them gives the first state.
* ``decide(state, seat, command, rng)`` validates a command and returns the events it causes, or
  raises :class:`~domain.kernel.errors.RuleError` saying why it is illegal. A decision of
  several steps runs on a :class:`~domain.kernel.folding.Run` (each event applied as it is
  emitted), in every game.
* ``evolve(state, event)`` folds one event into the state: total, deterministic, no validation
  and no randomness, so a stored stream always folds.
* ``legal`` (with ``grammar`` where the commands are too many to list), ``view``,
  ``event_view``, ``to_act``, ``outcome`` and ``export_position`` answer questions about a
  state; ``outcome`` is each game's own typed function of its state.
* ``hidden(event)`` declares the event's hidden values (paths into its JSON data, and the seats
  that may read each while the game is live). The service puts only salted commitments to them
  into the hash chain and every public byte, and opens them to their seats — and to everyone
  once the game is over. A game with hidden information passes its own (the default hides
  nothing); see :mod:`domain.kernel.hidden` for how, and for the commitment construction.

A game's module builds its record once (``domain/<game>/game.py``)::

    CARGO_EMPIRE: Game[State, Command, ev.E, Options, Position] = Game(
        id="cargo-empire", title="Cargo Empire", min_seats=1, max_seats=5,
        state_type=State, ..., decide=rules.decide, evolve=evolve, outcome=outcome, ...)

The shared mechanics (decoding commands and options, folding, JSON schemas, the seat check of a
query) are the record's methods, written here once.
"""

from __future__ import annotations

import difflib
import re
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import msgspec

from . import bounds
from .errors import CommandError, RuleError
from .grammar import Rule
from .hidden import Secret
from .rng import Rng
from .svg import NO_NAMES, Players
from .typed import decoder, typed
from .viewers import Viewer, seat_of

S = TypeVar("S")  # state
C = TypeVar("C")  # command
E = TypeVar("E")  # event
O = TypeVar("O", bound=msgspec.Struct)  # options  # noqa: E741
P = TypeVar("P", bound=msgspec.Struct)  # position


class Outcome(msgspec.Struct, frozen=True):
    """The result of a finished game: a score per seat, the winning seats, and game detail."""

    scores: list[int]
    winners: list[int]
    details: dict[str, Any] = {}


#: The longest of a sender's own text (a name, a value) a detail echoes back, and the longest
#: detail: a 100 KB field name comes back cut, so a refusal costs no more than the hint.
_ECHO = 64
_DETAIL = 1_000


def _clip(text: str) -> str:
    return text if len(text) <= _ECHO else text[:_ECHO] + "…"


def _describe(error: msgspec.ValidationError | msgspec.DecodeError) -> str:
    text = str(error) or "the command is not well formed"
    # msgspec quotes the sent value ('…' - at `$.x`) or the unknown field (`…`) whole
    text = re.sub(r"(?s)'(.*)'(?= - at `)", lambda m: f"'{_clip(m.group(1))}'", text)
    text = re.sub(r"(?s)(unknown field `)(.*)(`)$", lambda m: m[1] + _clip(m[2]) + m[3], text)
    return text if len(text) <= _DETAIL else text[:_DETAIL] + "…"


#: What a refused type or field is called in a detail, by the error's code.
_WHAT = {"command.invalid": "command", "options.invalid": "option", "query.invalid": "query"}
_LEGAL = " (GET /v1/games/{id}/legal lists the commands you may send now)"


def _tags(target: Any) -> dict[str, Any]:
    """tag → Struct of a tagged union (or of one tagged Struct); empty for anything else."""
    out: dict[str, Any] = {}
    for member in typing.get_args(target) or (target,):
        info = msgspec.inspect.type_info(member)
        if isinstance(info, msgspec.inspect.StructType) and info.tag is not None:
            out[str(info.tag)] = member
    return out


def _fields(struct: Any) -> list[str]:
    info = msgspec.inspect.type_info(struct)
    if not isinstance(info, msgspec.inspect.StructType):
        return []
    return [f.encode_name for f in info.fields if f.encode_name != info.tag_field]


def _choices(wrong: str, valid: Iterable[str], kind: str) -> str:
    """The nearest of ``valid`` to ``wrong`` suggested (difflib), then ``valid`` listed."""
    names = sorted(valid)
    # (a name sent 60 KB long is no near miss: difflib is quadratic in it)
    near = difflib.get_close_matches(wrong, names, n=1) if 0 < len(wrong) <= 64 else []
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    return f"{hint}; the valid {kind}: {', '.join(names)}"


def _values(struct: Any, name: str) -> list[str]:
    """The values a field of ``struct`` may take, when they are a fixed few (a Literal, an
    Enum); empty otherwise."""
    info = msgspec.inspect.type_info(struct)
    if not isinstance(info, msgspec.inspect.StructType):
        return []
    for f in info.fields:
        if f.encode_name == name:
            kinds = f.type.types if isinstance(f.type, msgspec.inspect.UnionType) else (f.type,)
            out: list[str] = []
            for t in kinds:
                if isinstance(t, msgspec.inspect.LiteralType):
                    out += [str(v) for v in t.values]
                elif isinstance(t, msgspec.inspect.EnumType):
                    out += [str(m.value) for m in t.cls]
            return out
    return []


def helpful(
    error: msgspec.ValidationError | msgspec.DecodeError, target: Any, raw: Any, code: str
) -> str:
    """The detail of a command, options or query that does not decode, saying what to send
    instead: an unknown type or field lists the valid ones and suggests the nearest
    (``plase_post``: "did you mean 'place_post'?"); a command's points at ``/legal``."""
    text = _describe(error)
    what = _WHAT.get(code)
    if what is None:
        return text
    legal = _LEGAL if what == "command" else ""
    tags = _tags(target)
    if tags:
        if m := re.fullmatch(r"Invalid value '(.*)' - at `\$\.type`", text, re.DOTALL):
            wrong = m.group(1)
            shown = wrong if len(wrong) <= 64 else wrong[:64] + "…"
            return f"unknown {what} type {shown!r}{_choices(wrong, tags, 'types')}{legal}"
        if text == "Object missing required field `type`":
            return f"a {what} needs a type{_choices('', tags, 'types')}{legal}"
    struct = target
    if tags:
        struct = tags.get(str(raw.get("type"))) if isinstance(raw, Mapping) else None
    if struct is None:
        return text
    of = f" of a {raw['type']!r} {what}" if tags and isinstance(raw, Mapping) else ""
    if m := re.fullmatch(r"Object contains unknown field `([^`]*)`", text):
        known = _fields(struct)
        if known:
            name = "field" if tags else what
            return f"unknown {name} {m.group(1)!r}{of}{_choices(m.group(1), known, name + 's')}"
    if m := re.fullmatch(r"Invalid (?:enum )?value '(.*)' - at `\$\.([a-z_0-9]+)`", text):
        values = _values(struct, m.group(2))
        if values:
            field = f"{m.group(2)!r}{of}"
            return f"{m.group(1)!r} is no value of {field}{_choices(m.group(1), values, 'values')}"
    return text


# --- the defaults of the optional functions -------------------------------------------------
def no_grammar(state: Any, seat: int, listed: list[Any]) -> list[Rule]:
    """No grammar rules: ``legal`` lists every command."""
    return []


def nothing_hidden(value: Any) -> list[Secret]:
    """No hidden values (in an event or a position)."""
    return []


def no_picture(view: Any, players: Players, load: str | None = None) -> str | None:
    """No picture of a view."""
    return None


@dataclass(frozen=True, kw_only=True, eq=False)
class Game(Generic[S, C, E, O, P]):
    """A game's rules: its value types, metadata and decider functions, as one record. Built once
    per game; the fields are read, never replaced."""

    # --- metadata ---------------------------------------------------------------------------
    id: str
    title: str
    min_seats: int
    max_seats: int
    #: Options (as JSON) the random bot plays with when given none: a game whose uniformly random
    #: play may never end (Empire Builder) names a turn limit here. None: the defaults.
    bot_options: dict[str, Any] | None = None
    #: Whether games of it can be created and played to the end (``GET /v1/rules`` says so);
    #: False for a game catalogued while its rules are still being written.
    playable: bool = True
    #: A game's static data by name (Empire Builder's ``map``), served once with an ETag at
    #: ``GET /v1/rules/{game}/assets/{name}``; views refer to it by hash.
    assets: dict[str, bytes] = field(default_factory=dict)

    # --- value types ------------------------------------------------------------------------
    #: msgspec Struct type of the state (so a state can be stored as JSON and read back).
    state_type: type[S]
    #: Tagged union of the command Structs (``tag_field="type"``).
    command_type: Any
    #: Tagged union of the event Structs (``tag_field="type"``).
    event_type: Any
    #: msgspec Struct type of the options, all fields defaulted.
    options_type: type[O]
    #: msgspec Struct type of a position (the game's FEN).
    position_type: type[P]
    #: Tagged union of the query Structs (``tag_field="type"``) a game answers with ``ask``;
    #: None: the game answers no queries.
    query_type: Any = None
    #: msgspec Struct type of what ``view`` returns: one shape for every viewer (seat,
    #: spectator, auditor), the values a viewer may not see null. Published in the OpenAPI.
    view_type: Any
    #: Tagged union (``tag_field="type"``) of what ``event_view`` returns: the event Structs,
    #: and for an event with hidden values its redacted reading.
    event_view_type: Any
    #: The tags of the events that change nothing of the game's progress (a cosmetic choice:
    #: Empire Builder's ``face_chosen``): a command whose events are all of these (or none) is
    #: no *move* of a turn clock — it neither starts, stops, charges nor credits a clock
    #: (``domain.platform.clocks.is_move``). Such an event must leave ``to_act``, ``legal``
    #: and ``outcome`` as they were (``tests/domain/test_clocks.py`` checks every game).
    cosmetic_events: frozenset[str] = frozenset()
    #: The loads whose supply cities :meth:`svg` can mark (``load``): Empire Builder's; none
    #: for a game whose picture marks none.
    picture_loads: frozenset[str] = frozenset()

    # --- the decider ------------------------------------------------------------------------
    #: The set-up events of a new game with ``seats`` players.
    start: Callable[[O, int, Rng], list[E]]
    #: The opening events of a game that starts from ``position``.
    start_from_position: Callable[[P, Rng], list[E]]
    #: The events ``command`` by ``seat`` causes, or a RuleError saying why it is illegal.
    decide: Callable[[S, int, C, Rng], list[E]]
    #: Fold one event into the state (``None`` before the first event).
    evolve: Callable[[S | None, E], S]

    # --- questions about a state --------------------------------------------------------------
    #: Commands ``seat`` may send now (empty when it is not theirs to act): every one, or, where
    #: ``grammar`` has rules, the ones those rules build on. A command is accepted exactly when
    #: it is listed or the grammar derives it (:mod:`domain.kernel.grammar`).
    legal: Callable[[S, int], list[C]]
    #: The seats whose command the game is waiting for.
    to_act: Callable[[S], list[int]]
    #: Scores, winners and details once the game is finished, else None.
    outcome: Callable[[S], Outcome | None]
    #: How many seats the game of a state has.
    seats: Callable[[S], int]
    #: What a viewer may see of the state: a ``view_type`` Struct.
    view: Callable[[S, Viewer], Any]
    #: An event as a viewer may read it, hidden information redacted: an ``event_view_type``
    #: value.
    event_view: Callable[[E, Viewer], Any]
    #: The position of a state in the documented position form.
    export_position: Callable[[S], P]
    #: How many seats a game started from a position has.
    position_seats: Callable[[P], int]
    #: The rules deriving the accepted commands ``legal`` does not list (``listed``: what it
    #: lists); none: ``legal`` lists every command.
    grammar: Callable[[S, int, list[C]], list[Rule]] = no_grammar
    #: The hidden values of an event (:mod:`domain.kernel.hidden`).
    hidden: Callable[[E], list[Secret]] = nothing_hidden
    #: The hidden values of a position: a game started from it carries it in
    #: ``lobby.created``, committed like an event's.
    hidden_position: Callable[[P], list[Secret]] = nothing_hidden
    #: ``draw(view, players)`` (``draw(view, players, load)`` for a game with picture loads):
    #: the game's picture, called through :meth:`svg`.
    draw: Callable[..., str | None] = no_picture
    #: The answer to a query once the asker is known to be a spectator, an auditor or a seat of
    #: the game (``ask`` checks that); None: the game answers no queries.
    answer: Callable[[S, Viewer, Any], dict[str, Any]] | None = None

    # --- the picture ------------------------------------------------------------------------
    def svg(self, view: Any, players: Players = NO_NAMES, load: str | None = None) -> str | None:
        """A picture of ``view`` (what ``view`` returned for some viewer) as an SVG document,
        its seats called by their ``players``' names, or None when the game has no picture.
        Pure, and shows only what the view holds, so hidden things stay hidden. With ``load``
        (one of :attr:`picture_loads`) it marks the cities that supply that load."""
        if load is None:
            picture: str | None = self.draw(view, players)
            return picture
        if load not in self.picture_loads:
            raise ValueError(f"{self.title} pictures mark no load {load!r}")
        marked: str | None = self.draw(view, players, load)
        return marked

    # --- queries ----------------------------------------------------------------------------
    def ask(self, state: S, viewer: Viewer, query: Any) -> dict[str, Any]:
        """The answer to ``query`` (a ``query_type`` value) about ``state`` as ``viewer`` may
        ask it: pure, nothing is appended. A seat the game does not have is refused here
        (``rule.no_such_seat``), for every game, before the game's ``answer`` sees it; a
        question the game will not answer raises RuleError."""
        asker = seat_of(viewer)
        if asker is not None:
            seats = self.seats(state)
            if not 0 <= asker < seats:
                raise RuleError("rule.no_such_seat", f"this game has seats 0 to {seats - 1}")
        if self.answer is None:
            raise RuleError("query.unsupported", f"{self.title} answers no queries")
        return self.answer(state, viewer, query)

    def decode_query(self, raw: Mapping[str, Any] | bytes | str) -> Any:
        if self.query_type is None:
            raise RuleError("query.unsupported", f"{self.title} answers no queries")
        return self._decode(raw, self.query_type, "query.invalid")

    # --- shared mechanics ---------------------------------------------------------------------
    def fold(self, events: Iterable[E], state: S | None = None) -> S:
        for event in events:
            state = self.evolve(state, event)
        if state is None:
            raise ValueError("cannot fold an empty event stream")
        return state

    def decode_command(self, raw: Mapping[str, Any] | bytes | str) -> C:
        """A typed command from JSON (bytes/str) or already-parsed JSON, or CommandError."""
        command: C = self._decode(raw, self.command_type, "command.invalid")
        return command

    def decode_options(self, raw: Mapping[str, Any] | bytes | str | None) -> O:
        options: O = self._decode({} if raw is None else raw, self.options_type, "options.invalid")
        try:
            bounds.check(options)
        except bounds.OutOfRange as error:
            raise CommandError("options.invalid", str(error), field=error.field) from None
        return options

    def decode_position(self, raw: Mapping[str, Any] | bytes | str) -> P:
        """A typed position, or CommandError: ``position.out_of_range`` for a number outside
        its field's documented range (:mod:`domain.kernel.bounds`), else ``position.invalid``."""
        position: P = self._decode(raw, self.position_type, "position.invalid")
        try:
            bounds.check(position)
        except bounds.OutOfRange as error:
            raise CommandError(
                "position.out_of_range", str(error), field=error.field, **error.bound
            ) from None
        return position

    def decode_event(self, raw: Mapping[str, Any] | bytes | str) -> E:
        event: E = self._decode(raw, self.event_type, "event.invalid")
        return event

    @staticmethod
    def _decode(raw: Mapping[str, Any] | bytes | str, target: Any, code: str) -> Any:
        try:
            return typed(raw, target)
        except (msgspec.ValidationError, msgspec.DecodeError) as error:
            parsed: Any = raw
            if isinstance(raw, bytes | str):
                try:
                    parsed = msgspec.json.decode(raw)
                except msgspec.DecodeError:
                    parsed = None
            raise CommandError(code, helpful(error, target, parsed, code)) from None

    def encode_state(self, state: S) -> bytes:
        return msgspec.json.encode(state)

    def decode_state(self, raw: bytes) -> S:
        state: S = decoder(self.state_type).decode(raw)
        return state

    @staticmethod
    def to_builtins(value: Any) -> Any:
        """JSON-able builtins of a Struct (commands, events, positions)."""
        return msgspec.to_builtins(value)

    def options_schema(self) -> dict[str, Any]:
        return msgspec.json.schema(self.options_type)

    def position_schema(self) -> dict[str, Any]:
        return msgspec.json.schema(self.position_type)

    def command_schema(self) -> dict[str, Any]:
        return msgspec.json.schema(self.command_type)
