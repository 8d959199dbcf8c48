"""What a game is, as its author writes it: two records, and a header that ties them together.

* :class:`Decider` (8 members): the rules. ``start(options, seats, rng)`` gives the opening
  events; ``decide(state, seat, command, rng)`` the events a command causes, or a
  :class:`~domain.kernel.errors.RuleError` saying why it is illegal (several steps run on a
  :class:`~domain.kernel.folding.Run`); ``evolve(state, event)`` folds one event (total,
  deterministic, no validation, no randomness: a stored stream always folds); ``legal`` with
  its ``grammar`` says what a seat may send; ``to_act`` who is asked; ``outcome`` the result once
  finished; ``hidden(event)`` the event's hidden values (:mod:`domain.kernel.hidden`).
* :class:`Presentation` (12 members): what viewers read and what stands in for players — the
  typed ``view`` and ``event_view``, the picture (``draw``), the position form
  (:class:`PositionForm`: import and export), queries, assets, and the clock's moves
  (``timeout``: the expiry's command types and the sitting-in greedy bot).
* :class:`Game`: the header — id, title, seat range, the value types, ``seats(state)`` and
  ``out_of_turn`` — with the two records (``decider``, ``presentation``). The rules every game
  shares are checked here once (:meth:`Game.check`: a seat the game does not have, a finished
  game, a seat not to act), before the game's ``decide`` sees a command. The service and the
  projections read a game only through this record (``domain.registry``); its read-only
  properties pass the two records' members through.

A game's module builds its record once (``domain/<game>/game.py``; the smallest whole example is
docs/adding-a-game.md)::

    CARGO_EMPIRE = Game(
        id="cargo-empire", title="Cargo Empire", min_seats=1, max_seats=5,
        state_type=State, command_type=Command, event_type=ev.Event, options_type=Options,
        seats=lambda state: state.seats,
        decider=Decider(start=rules.start, decide=rules.decide, evolve=evolve, ...),
        presentation=Presentation(view_type=CargoEmpireView, view=view, ...))
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
from .timeouts import Bot, FirstLegal, Timeout, minimal
from .typed import typed
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
    #: Why the game ended, when not by its rules: ``resigned``, ``aborted`` (absent: by the
    #: rules — as in every game finished before reasons were recorded; docs/api.md "Ending a
    #: game").
    reason: str | msgspec.UnsetType = msgspec.UNSET


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


def never(state: Any, seat: int, command: Any) -> bool:
    """No seat acts out of turn."""
    return False


def no_picture(view: Any, players: Players, load: str | None = None) -> str | None:
    """No picture of a view."""
    return None


@dataclass(frozen=True, kw_only=True, eq=False)
class Decider(Generic[S, C, E, O]):
    """A game's rules: 8 members, pure functions over plain values (msgspec Structs)."""

    #: The set-up events of a new game with ``seats`` players.
    start: Callable[[O, int, Rng], list[E]]
    #: The events ``command`` by ``seat`` causes, or a RuleError saying why it is illegal.
    #: Called through :meth:`Game.decide`, after the checks every game shares (the seat is one
    #: of the game's, the game is not over, the seat is to act), so a game writes none of them.
    decide: Callable[[S, int, C, Rng], list[E]]
    #: Fold one event into the state (``None`` before the first event).
    evolve: Callable[[S | None, E], S]
    #: Commands ``seat`` may send now (empty when it is not theirs to act): every one, or, where
    #: ``grammar`` has rules, the ones those rules build on. A command is accepted exactly when
    #: it is listed or the grammar derives it (:mod:`domain.kernel.grammar`).
    legal: Callable[[S, int], list[C]]
    #: The rules deriving the accepted commands ``legal`` does not list (``listed``: what it
    #: lists); none: ``legal`` lists every command.
    grammar: Callable[[S, int, list[C]], list[Rule]] = no_grammar
    #: The seats whose command the game is waiting for.
    to_act: Callable[[S], list[int]]
    #: Scores, winners and details once the game is finished, else None.
    outcome: Callable[[S], Outcome | None]
    #: The hidden values of an event (:mod:`domain.kernel.hidden`).
    hidden: Callable[[E], list[Secret]] = nothing_hidden


@dataclass(frozen=True, kw_only=True, eq=False)
class PositionForm(Generic[S, E, P]):
    """A game's position form (its FEN, docs/rules): a state written out and a game started
    from one."""

    #: msgspec Struct type of a position.
    type: type[P]
    #: The opening events of a game that starts from a position (import).
    start: Callable[[P, Rng], list[E]]
    #: The position of a state (export).
    export: Callable[[S], P]
    #: How many seats a game started from a position has.
    seats: Callable[[P], int]
    #: The hidden values of a position: a game started from it carries it in
    #: ``lobby.created``, committed like an event's.
    hidden: Callable[[P], list[Secret]] = nothing_hidden


@dataclass(frozen=True, kw_only=True, eq=False)
class Presentation(Generic[S, E, P]):
    """What viewers read of a game and what stands in for its players: 12 members."""

    #: msgspec Struct type of what ``view`` returns: one shape for every viewer (seat,
    #: spectator, auditor), the values a viewer may not see null. Published in the OpenAPI.
    view_type: Any
    #: What a viewer may see of the state: a ``view_type`` Struct.
    view: Callable[[S, Viewer], Any]
    #: Tagged union (``tag_field="type"``) of what ``event_view`` returns: the event Structs,
    #: and for an event with hidden values its redacted reading.
    event_view_type: Any
    #: An event as a viewer may read it, hidden information redacted.
    event_view: Callable[[E, Viewer], Any]
    #: ``draw(view, players)`` (``draw(view, players, load)`` for a game with picture loads):
    #: the game's picture, called through :meth:`Game.svg`.
    draw: Callable[..., str | None] = no_picture
    #: The loads whose supply cities the picture can mark (``load``): Empire Builder's.
    picture_loads: frozenset[str] = frozenset()
    #: The position form: import and export.
    position: PositionForm[S, E, P]
    #: What a turn clock's expiry sends for a seat, and the greedy bot that sits in
    #: (:mod:`domain.kernel.timeouts`); default: the first legal command, by the first-legal bot.
    timeout: Timeout = field(default_factory=Timeout)
    #: Tagged union of the query Structs (``tag_field="type"``) a game answers with ``ask``;
    #: None: the game answers no queries.
    query_type: Any = None
    #: The answer to a query once the asker is known to be a spectator, an auditor or a seat of
    #: the game (:meth:`Game.ask` checks that); None: the game answers no queries.
    answer: Callable[[S, Viewer, Any], dict[str, Any]] | None = None
    #: A game's static data by name (Empire Builder's ``map``), served once with an ETag at
    #: ``GET /v1/rules/{game}/assets/{name}``; views refer to it by hash.
    assets: dict[str, bytes] = field(default_factory=dict)
    #: Options (as JSON) the random bot plays with when given none: a game whose uniformly random
    #: play may never end (Empire Builder) names a turn limit here. None: the defaults.
    bot_options: dict[str, Any] | None = None


@dataclass(frozen=True, kw_only=True, eq=False)
class Game(Generic[S, C, E, O, P]):
    """A game as the kernel holds it: its header, its :class:`Decider` and its
    :class:`Presentation`. Built once per game; the fields are read, never replaced."""

    id: str
    title: str
    min_seats: int
    max_seats: int
    #: msgspec Struct type of the state (so a state can be stored as JSON and read back).
    state_type: type[S]
    #: Tagged union of the command Structs (``tag_field="type"``).
    command_type: Any
    #: Tagged union of the event Structs (``tag_field="type"``).
    event_type: Any
    #: msgspec Struct type of the options, all fields defaulted.
    options_type: type[O]
    #: How many seats the game of a state has.
    seats: Callable[[S], int]
    #: Whether ``seat``, not in ``to_act``, may still send ``command`` (the game then accepts
    #: or refuses it itself): Empire Builder's cosmetic ``choose_face``, the Jolly CARGO mover
    #: told to wait for a placement. Default: never (``rule.not_your_turn``).
    out_of_turn: Callable[[S, int, C], bool] = never
    decider: Decider[S, C, E, O]
    presentation: Presentation[S, E, P]

    # --- the two records' members, read through the game --------------------------------------
    @property
    def start(self) -> Callable[[O, int, Rng], list[E]]:
        return self.decider.start

    @property
    def evolve(self) -> Callable[[S | None, E], S]:
        return self.decider.evolve

    @property
    def legal(self) -> Callable[[S, int], list[C]]:
        return self.decider.legal

    @property
    def grammar(self) -> Callable[[S, int, list[C]], list[Rule]]:
        return self.decider.grammar

    @property
    def to_act(self) -> Callable[[S], list[int]]:
        return self.decider.to_act

    @property
    def outcome(self) -> Callable[[S], Outcome | None]:
        return self.decider.outcome

    @property
    def hidden(self) -> Callable[[E], list[Secret]]:
        return self.decider.hidden

    @property
    def view(self) -> Callable[[S, Viewer], Any]:
        return self.presentation.view

    @property
    def event_view(self) -> Callable[[E, Viewer], Any]:
        return self.presentation.event_view

    @property
    def position_type(self) -> type[P]:
        return self.presentation.position.type

    @property
    def start_from_position(self) -> Callable[[P, Rng], list[E]]:
        return self.presentation.position.start

    @property
    def export_position(self) -> Callable[[S], P]:
        return self.presentation.position.export

    @property
    def position_seats(self) -> Callable[[P], int]:
        return self.presentation.position.seats

    @property
    def hidden_position(self) -> Callable[[P], list[Secret]]:
        return self.presentation.position.hidden

    @property
    def view_type(self) -> Any:
        return self.presentation.view_type

    @property
    def event_view_type(self) -> Any:
        return self.presentation.event_view_type

    @property
    def picture_loads(self) -> frozenset[str]:
        return self.presentation.picture_loads

    @property
    def query_type(self) -> Any:
        return self.presentation.query_type

    @property
    def assets(self) -> dict[str, bytes]:
        return self.presentation.assets

    @property
    def bot_options(self) -> dict[str, Any] | None:
        return self.presentation.bot_options

    @property
    def cosmetic_events(self) -> frozenset[str]:
        return self.presentation.timeout.cosmetic_events

    # --- the clock's moves ------------------------------------------------------------------
    def expiry_command(self, state: S, seat: int) -> C:
        """The command an expiry sends for ``seat`` (repeated until its turn ends): the
        game's minimal legal one (:func:`domain.kernel.timeouts.minimal`)."""
        command: C = minimal(self, state, seat)
        return command

    def sitting_in(self, seat: int, version: int) -> Bot:
        """The bot that sits in for ``seat`` for its move at ``version``."""
        bot = self.presentation.timeout.bot
        return FirstLegal(self.legal) if bot is None else bot(seat, version)

    # --- the picture ------------------------------------------------------------------------
    def svg(self, view: Any, players: Players = NO_NAMES, load: str | None = None) -> str | None:
        """A picture of ``view`` (what ``view`` returned for some viewer) as an SVG document,
        its seats called by their ``players``' names, or None when the game has no picture.
        Pure, and shows only what the view holds, so hidden things stay hidden. With ``load``
        (one of :attr:`picture_loads`) it marks the cities that supply that load."""
        if load is None:
            picture: str | None = self.presentation.draw(view, players)
            return picture
        if load not in self.picture_loads:
            raise ValueError(f"{self.title} pictures mark no load {load!r}")
        marked: str | None = self.presentation.draw(view, players, load)
        return marked

    # --- deciding ---------------------------------------------------------------------------
    def decide(self, state: S, seat: int, command: C, rng: Rng) -> list[E]:
        """The events ``command`` by ``seat`` causes, or a RuleError: the common rules checked
        here once, for every game (:meth:`check`), then the game's own ``decide``."""
        self.check(state, seat, command)
        return self.decider.decide(state, seat, command, rng)

    def check(self, state: S, seat: int, command: C) -> None:
        """The rules every game shares, in this order: a seat the game does not have is
        ``rule.no_such_seat``, a finished game ``rule.game_over``, a seat the game is not
        waiting for ``rule.not_your_turn`` (unless the game's ``out_of_turn`` lets it send
        ``command``)."""
        seats = self.seats(state)
        if not 0 <= seat < seats:
            raise RuleError("rule.no_such_seat", f"this game has seats 0 to {seats - 1}")
        if self.outcome(state) is not None:
            raise RuleError("rule.game_over", "the game is over")
        waiting = self.to_act(state)
        if seat not in waiting and not self.out_of_turn(state, seat, command):
            raise RuleError("rule.not_your_turn", f"seat {seat} is not to act now", to_act=waiting)

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
        answer = self.presentation.answer
        if answer is None:
            raise RuleError("query.unsupported", f"{self.title} answers no queries")
        return answer(state, viewer, query)

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
