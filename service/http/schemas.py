"""The shapes of the API's answers, as msgspec Structs: the handlers' return types, hence the
OpenAPI document's response schemas (:mod:`service.http.openapi`).

The answers the application builds are its own Structs (:mod:`service.application.answers`,
re-exported here); this module adds the edge's own (problems, rules, health) and the documents
served as stored bytes (the game and legal documents from the projections, the cached audit
report), described by these types in the OpenAPI table."""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from domain.platform.table import ClockDocument
from ledger.answers import CommandAnswer, EventDocument, LegalCommands, Receipt
from ledger.evidence import Finding
from service.application.answers import (
    ChainProof,
    Check,
    CommandDocument,
    CreatedGame,
    DisputeFile,
    EventsPage,
    GameList,
    GameSummary,
    GrammarRule,
    Inclusion,
    Joined,
    MessageAnswer,
    QueryAnswer,
    ReplayView,
    SeatRemoved,
    SeatSlot,
    Started,
    StateBefore,
    TreeHead,
)
from service.eventstore.keys import PublicKey

__all__ = [
    "ChainProof",
    "Check",
    "CommandAnswer",
    "CommandDocument",
    "CreatedGame",
    "DisputeFile",
    "EventDocument",
    "EventsPage",
    "Finding",
    "GameList",
    "GameSummary",
    "GrammarRule",
    "Inclusion",
    "Joined",
    "LegalCommands",
    "MessageAnswer",
    "PublicKey",
    "QueryAnswer",
    "Receipt",
    "ReplayView",
    "SeatRemoved",
    "SeatSlot",
    "Started",
    "StateBefore",
    "TreeHead",
]


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
    #: the names of its static data served at ``/v1/rules/{game}/assets/{name}``
    assets: list[str] = []


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
    #: only in a game created with a turn clock
    clock: ClockDocument | UnsetType = UNSET


class LegalDocument(msgspec.Struct):
    """``GET /v1/games/{id}/legal`` (served as the projection's stored bytes): the listed
    commands, whether they are every accepted command (``complete``), and else the ``grammar``
    rules deriving the rest (docs/api.md "The legal contract")."""

    version: int
    commands: list[dict[str, Any]]
    complete: bool
    grammar: list[GrammarRule]
    #: the platform's commands ending the game the seat may send now (resign, abort; docs/api.md
    #: "Ending a game"), on its turn or not; absent: none
    endings: list[dict[str, Any]] | UnsetType = UNSET


class Rejected(msgspec.Struct):
    cap_per_seat: int
    #: refusals counted but not recorded (past the cap or a storage budget), by seat
    unrecorded: dict[str, int]
    #: of those, the ones not recorded because a storage budget was spent (issue 25)
    over_budget: dict[str, int] = {}


class ChainCheck(msgspec.Struct, forbid_unknown_fields=True):
    """The hash chain: every link and hash recomputed (``unverified``: withheld events)."""

    ok: bool
    events: int
    head: str | None
    first_bad: int | None
    unverified: list[int]


class AdjudicationCheck(msgspec.Struct, forbid_unknown_fields=True):
    """Every command decided again from the seed: ``ok`` null with a ``reason`` while the seed
    is secret (a live game), else the commands checked and the first bad event."""

    ok: bool | None
    reason: str | UnsetType = UNSET
    commands: int | UnsetType = UNSET
    first_bad: int | UnsetType | None = UNSET


class SeedCheck(msgspec.Struct, forbid_unknown_fields=True):
    """The revealed seed (hex, once revealed) against the commitment in ``lobby.created``."""

    commitment: str | None
    revealed: bool
    ok: bool | None
    seed: str | UnsetType = UNSET


class CommitmentsCheck(msgspec.Struct, forbid_unknown_fields=True):
    """Hidden values: commitments opened and still sealed (canonical form 2; null before)."""

    canonical: int
    opened: int
    sealed: int
    ok: bool | None
    first_bad: int | UnsetType | None = UNSET


class AuditReport(msgspec.Struct, forbid_unknown_fields=True):
    """``GET /v1/games/{id}/audit`` (served as the cached report's bytes; the tests decode
    every report they fetch strictly into this type)."""

    ok: bool
    game: str
    version: int
    chain: ChainCheck
    adjudication: AdjudicationCheck
    seed: SeedCheck
    commitments: CommitmentsCheck
    problems: list[Finding]
    rejected: Rejected


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
