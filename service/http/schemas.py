"""The shapes of the API's answers, as msgspec Structs: the OpenAPI document's response schemas
(:mod:`service.http.openapi`). Handlers build their answers as builtins or encoded bytes (the hot
paths never convert); these types say what those answers are, and the Schemathesis test checks
every answer it provokes against them. Fields that other parts of an answer may grow are open
(extra properties allowed); the fields listed are the contract (``docs/api.md``)."""

from __future__ import annotations

from typing import Any

import msgspec


class ProblemDocument(msgspec.Struct):
    """RFC 9457 problem details with a stable machine ``code``."""

    type: str
    title: str
    status: int
    detail: str
    code: str
    instance: str | None = None


class RuleEntry(msgspec.Struct):
    game: str
    title: str
    min_seats: int
    max_seats: int
    playable: bool
    options: dict[str, Any]
    position: dict[str, Any]
    commands: dict[str, Any] | None = None


class SeatSlot(msgspec.Struct):
    seat: int
    name: str | None
    token: str | None


class CreatedGame(msgspec.Struct):
    id: str
    game: str
    status: str
    version: int
    host_token: str
    invite_code: str
    seats: list[SeatSlot]
    #: when the game started at once (players given): who acts, and the spectator's view
    to_act: list[int] = []
    view: Any = None


class GameSummary(msgspec.Struct):
    id: str
    game: str
    status: str
    seats: int
    players: list[str | None]
    version: int
    created_at: str
    #: the game's options: its terms (Empire Builder's money to win, ...)
    options: dict[str, Any] | None = None


class GameList(msgspec.Struct):
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
    invite_code: str | None = None


class LegalDocument(msgspec.Struct):
    version: int
    commands: list[dict[str, Any]]


class Receipt(msgspec.Struct):
    game: str
    version: int
    head: str
    signature: str
    key_id: str | None = None


class EventDocument(msgspec.Struct):
    version: int
    type: str
    seat: int | None
    at: str
    data: Any
    hash: str
    prev_hash: str
    #: (path, salt) of each hidden value put back in ``data`` in the clear
    openings: list[dict[str, Any]] = []


class CommandAnswer(msgspec.Struct):
    version: int
    events: list[EventDocument]
    head: str
    receipt: Receipt
    to_act: list[int] = []
    legal: list[dict[str, Any]] = []


class MessageAnswer(msgspec.Struct):
    version: int
    head: str
    receipt: Receipt


class EventsPage(msgspec.Struct):
    events: list[EventDocument]
    next: int | None


class ReplayView(msgspec.Struct):
    version: int
    view: Any
    status: str | None = None
    to_act: list[int] = []
    result: dict[str, Any] | None = None
    folded: int | None = None


class Rejected(msgspec.Struct):
    cap_per_seat: int
    unrecorded: dict[str, int]


class AuditReport(msgspec.Struct):
    ok: bool
    game: str
    version: int
    chain: dict[str, Any]
    adjudication: dict[str, Any]
    seed: dict[str, Any]
    problems: list[dict[str, Any]]
    rejected: Rejected


class DisputeFile(msgspec.Struct):
    game: str
    version: int
    command: dict[str, Any] | None
    events: list[EventDocument]
    chain: dict[str, Any]
    receipt: Receipt


class PublicKey(msgspec.Struct):
    id: str
    alg: str
    public_key: str


class Keys(msgspec.Struct):
    keys: list[PublicKey]


class Health(msgspec.Struct):
    status: str
