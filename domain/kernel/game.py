"""What a game is: the decider protocol every game implements.

A game is a set of pure functions over plain values (msgspec Structs):

* ``start(options, seats, rng)`` and ``start_from_position(position, rng)`` produce the opening
  events; folding them gives the first state.
* ``decide(state, seat, command, rng)`` validates a command and returns the events it causes, or
  raises :class:`~domain.kernel.errors.RuleError` saying why it is illegal.
* ``evolve(state, event)`` folds one event into the state: total, deterministic, no validation
  and no randomness, so a stored stream always folds.
* ``legal`` (with ``grammar`` where the commands are too many to list), ``view``,
  ``event_view``, ``to_act``, ``outcome`` and ``export_position`` answer
  questions about a state.
* ``hidden(event)`` declares the event's hidden values (paths into its JSON data, and the seats
  that may read each while the game is live). The service puts only salted commitments to them
  into the hash chain and every public byte, and opens them to their seats — and to everyone
  once the game is over. A game with hidden information must override it (the default hides
  nothing); see :mod:`domain.kernel.hidden` for how, and for the commitment construction.

The shared mechanics (decoding commands and options, folding, JSON schemas) live here once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sized
from typing import Any, ClassVar, Generic, TypeVar

import msgspec

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


def _describe(error: msgspec.ValidationError | msgspec.DecodeError) -> str:
    return str(error) or "the command is not well formed"


class Game(ABC, Generic[S, C, E, O, P]):
    """Base class of every game's rules. Subclasses are stateless singletons."""

    id: ClassVar[str]
    title: ClassVar[str]
    min_seats: ClassVar[int]
    max_seats: ClassVar[int]
    # The game's value types (a :class:`WiredGame` takes them from its :class:`Wiring`):
    #: msgspec Struct type of the options, all fields defaulted.
    options_type: type[Any]
    #: Tagged union of the command Structs (``tag_field="type"``).
    command_type: Any
    #: Tagged union of the event Structs (``tag_field="type"``).
    event_type: Any
    #: msgspec Struct type of a position (the game's FEN).
    position_type: type[Any]
    #: msgspec Struct type of the state (so a state can be stored as JSON and read back).
    state_type: type[Any]
    #: Options (as JSON) the random bot plays with when given none: a game whose uniformly random
    #: play may never end (Empire Builder) names a turn limit here. None: the defaults.
    bot_options: ClassVar[dict[str, Any] | None] = None
    #: Whether games of it can be created and played to the end (``GET /v1/rules`` says so);
    #: False for a game catalogued while its rules are still being written.
    playable: ClassVar[bool] = True
    #: A game's static data by name (Empire Builder's ``map``), served once with an ETag at
    #: ``GET /v1/rules/{game}/assets/{name}``; views refer to it by hash.
    assets: ClassVar[dict[str, bytes]] = {}
    #: Tagged union of the query Structs (``tag_field="type"``) a game answers with ``ask``;
    #: None: the game answers no queries.
    query_type: ClassVar[Any] = None
    #: The loads whose supply cities :meth:`svg` can mark (``load``): Empire Builder's; none
    #: for a game whose picture marks none.
    picture_loads: ClassVar[frozenset[str]] = frozenset()
    #: msgspec Struct type of what :meth:`view` returns: one shape for every viewer (seat,
    #: spectator, auditor), the values a viewer may not see null. Published in the OpenAPI.
    view_type: ClassVar[type[msgspec.Struct]]
    #: Tagged union (``tag_field="type"``) of what :meth:`event_view` returns: the event
    #: Structs, and for an event with hidden values its redacted reading.
    event_view_type: ClassVar[Any]

    # --- the decider -----------------------------------------------------------------------
    @abstractmethod
    def start(self, options: O, seats: int, rng: Rng) -> list[E]:
        """The set-up events of a new game with ``seats`` players."""

    @abstractmethod
    def start_from_position(self, position: P, rng: Rng) -> list[E]:
        """The opening events of a game that starts from ``position``."""

    @abstractmethod
    def decide(self, state: S, seat: int, command: C, rng: Rng) -> list[E]:
        """The events ``command`` by ``seat`` causes, or a RuleError saying why it is illegal."""

    @abstractmethod
    def evolve(self, state: S | None, event: E) -> S:
        """Fold one event into the state (``None`` before the first event)."""

    # --- questions about a state -----------------------------------------------------------
    @abstractmethod
    def legal(self, state: S, seat: int) -> list[C]:
        """Commands ``seat`` may send now (empty when it is not theirs to act): every one, or,
        where :meth:`grammar` has rules, the ones those rules build on. A command is accepted
        exactly when it is listed or the grammar derives it (:mod:`domain.kernel.grammar`)."""

    def grammar(self, state: S, seat: int, listed: list[C]) -> list[Rule]:
        """The rules deriving the accepted commands ``legal`` does not list (``listed``: what
        it lists); none (the default): ``legal`` lists every command."""
        return []

    @abstractmethod
    def to_act(self, state: S) -> list[int]:
        """The seats whose command the game is waiting for."""

    @abstractmethod
    def outcome(self, state: S) -> Outcome | None:
        """Scores and winners once the game is finished, else None."""

    @abstractmethod
    def view(self, state: S, viewer: Viewer) -> Any:
        """What ``viewer`` may see of the state: a ``view_type`` Struct."""

    @abstractmethod
    def event_view(self, event: E, viewer: Viewer) -> Any:
        """An event as ``viewer`` may read it, hidden information redacted: an
        ``event_view_type`` value."""

    def hidden(self, event: E) -> list[Secret]:
        """The hidden values of ``event`` (:mod:`domain.kernel.hidden`); default: none."""
        return []

    def hidden_position(self, position: P) -> list[Secret]:
        """The hidden values of a position (paths into its JSON data): a game started from it
        carries it in ``lobby.created``, committed like an event's; default: none."""
        return []

    @abstractmethod
    def export_position(self, state: S) -> P:
        """The position of ``state`` in the documented position form."""

    @abstractmethod
    def position_seats(self, position: P) -> int:
        """How many seats a game started from ``position`` has."""

    def svg(self, view: Any, players: Players = NO_NAMES, load: str | None = None) -> str | None:
        """A picture of ``view`` (what :meth:`view` returned for some viewer) as an SVG
        document, its seats called by their ``players``' names, or None when the game has no
        picture. Pure, and shows only what the view holds, so hidden things stay hidden. With
        ``load`` (one of :attr:`picture_loads`) it marks the cities that supply that load.
        Games override this (``domain/<game>/svg.py``)."""
        return None

    # --- queries (optional) ----------------------------------------------------------------
    def ask(self, state: S, viewer: Viewer, query: Any) -> dict[str, Any]:
        """The answer to ``query`` (a ``query_type`` value) about ``state`` as ``viewer`` may
        ask it: pure, nothing is appended. A seat the game does not have is refused here
        (``rule.no_such_seat``), for every game, before the game's :meth:`answer` sees it; a
        question the game will not answer raises RuleError."""
        asker = seat_of(viewer)
        if asker is not None:
            seats = self.seats(state)
            if not 0 <= asker < seats:
                raise RuleError("rule.no_such_seat", f"this game has seats 0 to {seats - 1}")
        return self.answer(state, viewer, query)

    def answer(self, state: S, viewer: Viewer, query: Any) -> dict[str, Any]:
        """What :meth:`ask` answers once the viewer is known to be a spectator, an auditor or a
        seat of the game. A game with queries overrides this."""
        raise RuleError("query.unsupported", f"{self.title} answers no queries")

    def seats(self, state: S) -> int:
        """How many seats the game of ``state`` has: by default its ``players`` list (every
        game's state has one entry per seat there)."""
        held: Any = state
        return len(held.players)

    def decode_query(self, raw: Mapping[str, Any] | bytes | str) -> Any:
        if self.query_type is None:
            raise RuleError("query.unsupported", f"{self.title} answers no queries")
        return self._decode(raw, self.query_type, "query.invalid")

    # --- shared mechanics ------------------------------------------------------------------
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
        return options

    def decode_position(self, raw: Mapping[str, Any] | bytes | str) -> P:
        position: P = self._decode(raw, self.position_type, "position.invalid")
        return position

    def decode_event(self, raw: Mapping[str, Any] | bytes | str) -> E:
        event: E = self._decode(raw, self.event_type, "event.invalid")
        return event

    @staticmethod
    def _decode(raw: Mapping[str, Any] | bytes | str, target: Any, code: str) -> Any:
        try:
            return typed(raw, target)
        except (msgspec.ValidationError, msgspec.DecodeError) as error:
            raise CommandError(code, _describe(error)) from None

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


def _players_listed(position: Any) -> int:
    """The seats of a position that lists its players (every game's position does)."""
    players: Sized = position.players
    return len(players)


class Wiring(msgspec.Struct, Generic[S, C, E, O, P], frozen=True, kw_only=True):
    """A game's value types and decider functions, from its own modules, in the protocol's
    order; the optional ones default to the :class:`Game` base's behaviour."""

    state_type: type[S]
    command_type: Any
    event_type: Any
    options_type: type[O]
    position_type: type[P]
    start: Callable[[O, int, Rng], list[E]]
    start_from_position: Callable[[P, Rng], list[E]]
    decide: Callable[[S, int, C, Rng], list[E]]
    evolve: Callable[[S | None, E], S]
    legal: Callable[[S, int], list[C]]
    view: Callable[[S, Viewer], Any]
    event_view: Callable[[E, Viewer], Any]
    export_position: Callable[[S], P]
    #: ``svg(view, players)``, or ``svg(view, players, load)`` for a game with picture loads.
    svg: Callable[..., str | None] | None = None
    grammar: Callable[[S, int, list[C]], list[Rule]] | None = None
    hidden: Callable[[E], list[Secret]] | None = None
    hidden_position: Callable[[P], list[Secret]] | None = None
    position_seats: Callable[[P], int] = _players_listed


class WiredGame(Game[S, C, E, O, P]):
    """A :class:`Game` whose types and decider are a :class:`Wiring` of its modules, so a game's
    class only adds what is its own (``to_act``, the final scores and details, the metadata)::

        CARGO_EMPIRE = CargoEmpire(Wiring(state_type=State, ..., start=rules.start, ...))
    """

    def __init__(self, wiring: Wiring[S, C, E, O, P]) -> None:
        self.wiring = wiring
        self.state_type = wiring.state_type
        self.command_type = wiring.command_type
        self.event_type = wiring.event_type
        self.options_type = wiring.options_type
        self.position_type = wiring.position_type

    def start(self, options: O, seats: int, rng: Rng) -> list[E]:
        return self.wiring.start(options, seats, rng)

    def start_from_position(self, position: P, rng: Rng) -> list[E]:
        return self.wiring.start_from_position(position, rng)

    def decide(self, state: S, seat: int, command: C, rng: Rng) -> list[E]:
        return self.wiring.decide(state, seat, command, rng)

    def evolve(self, state: S | None, event: E) -> S:
        return self.wiring.evolve(state, event)

    def legal(self, state: S, seat: int) -> list[C]:
        return self.wiring.legal(state, seat)

    def grammar(self, state: S, seat: int, listed: list[C]) -> list[Rule]:
        rules = self.wiring.grammar
        return [] if rules is None else rules(state, seat, listed)

    def view(self, state: S, viewer: Viewer) -> Any:
        return self.wiring.view(state, viewer)

    def event_view(self, event: E, viewer: Viewer) -> Any:
        return self.wiring.event_view(event, viewer)

    def export_position(self, state: S) -> P:
        return self.wiring.export_position(state)

    def svg(self, view: Any, players: Players = NO_NAMES, load: str | None = None) -> str | None:
        draw = self.wiring.svg
        if draw is None:
            return None
        if load is None:
            picture: str | None = draw(view, players)
            return picture
        if load not in self.picture_loads:
            raise ValueError(f"{self.title} pictures mark no load {load!r}")
        marked: str | None = draw(view, players, load)
        return marked

    def hidden(self, event: E) -> list[Secret]:
        secrets = self.wiring.hidden
        return [] if secrets is None else secrets(event)

    def hidden_position(self, position: P) -> list[Secret]:
        secrets = self.wiring.hidden_position
        return [] if secrets is None else secrets(position)

    def position_seats(self, position: P) -> int:
        return self.wiring.position_seats(position)

    def outcome(self, state: S) -> Outcome | None:
        """Once the state's ``phase`` is ``finished``: the game's final scores, the state's
        ``winners`` and the game's details (every game's state has ``phase`` and ``winners``)."""
        ended: Any = state
        if ended.phase != "finished":
            return None
        return Outcome(
            scores=self.final_scores(state),
            winners=list(ended.winners),
            details=self.final_details(state),
        )

    @abstractmethod
    def final_scores(self, state: S) -> list[int]:
        """A score per seat, of a finished game."""

    def final_details(self, state: S) -> dict[str, Any]:
        """What else the outcome says (a breakdown of the scores, why the game ended)."""
        return {}
