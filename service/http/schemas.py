"""The shapes of the API's answers, as msgspec Structs: the handlers' return types, hence the
OpenAPI document's response schemas (:mod:`service.http.openapi`).

A handler answering JSON built from a dict returns one of these (the application layer still
builds dicts: :func:`answer` converts them at the edge). Answers served as stored bytes (the
game and legal documents from the projections, the cached audit report, the export file) are
described by these types too, in the OpenAPI table. Field order is the order the application
writes, so the bytes on the wire are what they were as dicts. A field that an answer recorded by
an older server may lack (``Receipt.key_id``, ``EventDocument.openings``) is ``UNSET`` by
default: absent stays absent, ``None`` stays ``null``. Fields that other parts of an answer may
grow are open (extra properties allowed); the fields listed are the contract
(``docs/api.md``)."""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from service.audit.evidence import Finding

T = TypeVar("T")


def answer(value: Any, shape: type[T]) -> T:
    """``value`` (builtins, as the application layer answers) as the Struct ``shape``. A field
    missing or of the wrong type is an error; a field the Struct lacks would be dropped, which
    ``tests/integration/test_answer_structs.py`` catches by comparing the bytes."""
    return msgspec.convert(value, shape)


class ProblemDocument(msgspec.Struct):
    """RFC 9457 problem details with a stable machine ``code``."""

    type: str
    title: str
    status: int
    detail: str
    code: str
    instance: str | None = None


class RuleEntry(msgspec.Struct):
    """``GET /v1/rules``: one game this server hosts, its options and the JSON Schemas of its
    options, positions and commands."""

    game: str
    title: str
    min_seats: int
    max_seats: int
    playable: bool
    options: dict[str, Any]
    position: dict[str, Any]
    commands: dict[str, Any] | None


class SeatSlot(msgspec.Struct):
    seat: int
    name: str | None
    token: str | None


class CreatedGame(msgspec.Struct):
    """``POST /v1/games``: the game, its host token and invite code; with players named, the
    seats' tokens, who acts and the game as the host (no seat) sees it."""

    id: str
    game: str
    status: str
    version: int
    host_token: str
    invite_code: str
    seats: list[SeatSlot]
    #: when the game started at once (players given): who acts, and the spectator's view
    to_act: list[int]
    view: Any


class GameSummary(msgspec.Struct):
    id: str
    game: str
    status: str
    seats: int
    players: list[str | None]
    #: the game's options: its terms (Empire Builder's money to win, ...)
    options: dict[str, Any] | None
    version: int
    created_at: str


class GameList(msgspec.Struct):
    """``GET /v1/games``: one page, newest first; ``next`` is the cursor of the page after."""

    games: list[GameSummary]
    next: str | None


class Joined(msgspec.Struct):
    game: str
    seat: int
    token: str
    status: str


class Started(msgspec.Struct):
    id: str
    status: str
    version: int


class SeatRemoved(msgspec.Struct):
    """``DELETE /v1/games/{id}/seats/{n}``: the seat reopened."""

    id: str
    seat: int
    status: str
    version: int


class QueryAnswer(msgspec.Struct):
    """``POST /v1/games/{id}/queries``: the game's answer, at the version it was asked."""

    version: int
    answer: dict[str, Any]


class SeatName(msgspec.Struct):
    seat: int
    name: str | None


class GameDocument(msgspec.Struct):
    """``GET /v1/games/{id}`` (served as the projection's stored bytes)."""

    id: str
    game: str
    status: str
    version: int
    seats: list[SeatName]
    to_act: list[int]
    view: Any
    result: dict[str, Any] | None
    messages: list[Any] = []
    #: only in the host token's answer: the code players join with
    invite_code: str | UnsetType = UNSET


class LegalDocument(msgspec.Struct):
    """``GET /v1/games/{id}/legal`` (served as the projection's stored bytes)."""

    version: int
    commands: list[dict[str, Any]]


class Receipt(msgspec.Struct, kw_only=True):
    game: str
    version: int
    head: str
    #: the signing key's id (``GET /v1/keys``); absent from answers recorded before keys had ids
    key_id: str | UnsetType | None = UNSET
    signature: str


class EventDocument(msgspec.Struct, kw_only=True):
    version: int
    type: str
    seat: int | None
    at: str
    data: Any
    #: (path, salt) of each hidden value put back in ``data`` in the clear
    openings: list[dict[str, Any]] | UnsetType = UNSET
    hash: str
    prev_hash: str


#: The seat's legal commands, as the projection stored them (encoded once, sent as they are).
LegalCommands = Annotated[
    msgspec.Raw,
    msgspec.Meta(extra_json_schema={"type": "array", "items": {"type": "object"}}),
]


class CommandAnswer(msgspec.Struct):
    """``POST /v1/games/{id}/commands``: the events as the seat may read them, the new head
    and its receipt; who acts now and the seat's legal commands."""

    version: int
    events: list[EventDocument]
    head: str
    receipt: Receipt
    to_act: list[int]
    legal: LegalCommands


class MessageAnswer(msgspec.Struct):
    version: int
    head: str
    receipt: Receipt


class EventsPage(msgspec.Struct):
    events: list[EventDocument]
    next: int | None


class ReplayView(msgspec.Struct):
    """``GET /v1/games/{id}/replay/{n}``: the caller's view after event ``n``; ``folded``:
    how many events were folded onto a snapshot to answer."""

    version: int
    status: str
    to_act: list[int]
    view: Any
    result: dict[str, Any] | None
    folded: int


class Rejected(msgspec.Struct):
    cap_per_seat: int
    unrecorded: dict[str, int]


class AuditReport(msgspec.Struct):
    """``GET /v1/games/{id}/audit`` (served as the cached report's bytes)."""

    ok: bool
    game: str
    version: int
    chain: dict[str, Any]
    adjudication: dict[str, Any]
    seed: dict[str, Any]
    commitments: dict[str, Any]
    problems: list[Finding]
    rejected: Rejected


class CommandDocument(msgspec.Struct):
    """A recorded command as the caller may read it (a dispute file's ``command`` and
    ``rejected_before``)."""

    id: str
    seat: int | None
    type: str
    body: Any
    received_at: str
    idempotency_key: str | None
    outcome: str
    error_code: str | None
    error_detail: str | None
    first_version: int | None
    last_version: int | None


class StateBefore(msgspec.Struct):
    """The state before the disputed command: as the seat that sent it saw it (while the game
    is live, to that seat only), as the caller sees it, and whole once the game is over."""

    version: int
    seat: int | None
    as_seat_saw_it: Any
    as_you_see_it: Any
    full: Any


class Check(msgspec.Struct):
    check: str
    ok: bool
    detail: str


class ChainProof(msgspec.Struct):
    construction: str
    canonical: str | None
    prev_hash: str
    hash: str
    recomputed: str
    ok: bool


class TreeHead(msgspec.Struct):
    game: str
    size: int
    root: str
    head: str
    key_id: str | None
    signature: str


class Inclusion(msgspec.Struct):
    construction: str
    leaf_index: int
    tree_size: int
    leaf_hash: str
    path: list[str]
    tree_head: TreeHead


class DisputeFile(msgspec.Struct):
    """``GET /v1/games/{id}/audit/{n}``: everything needed to judge event ``n`` offline."""

    game: str
    version: int
    command: CommandDocument | None
    state_before: StateBefore
    checks: list[Check]
    events: list[EventDocument]
    chain: ChainProof
    inclusion: Inclusion
    receipt: Receipt
    rejected_before: list[CommandDocument]


class PublicKey(msgspec.Struct):
    id: str
    alg: str
    status: str
    public_key: str
    pem: str
    first_used: str | None


class Keys(msgspec.Struct):
    keys: list[PublicKey]


class Health(msgspec.Struct):
    status: str


class Readiness(msgspec.Struct):
    """``GET /readyz``: each check by name (:mod:`service.http.readiness`)."""

    status: str
    checks: dict[str, Any]


#: Every answer type (the OpenAPI components are msgspec's own schemas of these).
ANSWERS: list[Any] = [
    ProblemDocument,
    list[RuleEntry],
    CreatedGame,
    GameList,
    Joined,
    Started,
    SeatRemoved,
    QueryAnswer,
    GameDocument,
    LegalDocument,
    CommandAnswer,
    MessageAnswer,
    EventsPage,
    ReplayView,
    AuditReport,
    DisputeFile,
    Keys,
]
