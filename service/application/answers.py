"""The application's answers, as msgspec Structs: what
:class:`service.application.gameplay.Manifest` and :class:`service.application.history.History`
return, and what the HTTP handlers send as they are (:mod:`service.http.schemas` re-uses
them for the OpenAPI document).

Field order is the order the answers were always written in, so the bytes on the wire are what
they were. A field that an answer recorded by an older server may lack (``Receipt.key_id``,
``EventDocument.openings``) is ``UNSET`` by default: absent stays absent, ``None`` stays
``null``. The fields listed are the contract (``docs/api.md``)."""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from domain.kernel.grammar import Rule
from domain.kernel.messages import Sentence
from domain.platform.table import ClockDocument
from ledger.answers import EventDocument, Receipt

#: One rule of a legal document's ``grammar`` (:mod:`domain.kernel.grammar`).
GrammarRule = Rule


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


class MessageAnswer(msgspec.Struct):
    version: int
    head: str
    receipt: Receipt


class EventsPage(msgspec.Struct):
    events: list[EventDocument]
    next: int | None


class ReplayView(msgspec.Struct, omit_defaults=True):
    """``GET /v1/games/{id}/replay/{n}``: the caller's view after event ``n``; ``folded``:
    how many events were folded onto a snapshot to answer; ``clock``: every seat's clock
    after event ``n``, in a game with a turn clock (absent in one without)."""

    version: int
    status: str
    to_act: list[int]
    view: Any
    result: dict[str, Any] | None
    folded: int
    clock: ClockDocument | None = None
    #: event ``n`` told as a sentence for the caller (docs/api.md, "Sentences")
    sentence: Sentence | UnsetType = UNSET
    #: the seat the caller's token holds (null: a spectator), so a viewer can say whose view
    seat: int | UnsetType | None = UNSET


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
    #: A refusal's whole body: the SHA-256 (hex) and length of its canonical JSON (keys sorted,
    #: no spaces); null for an accepted command (its ``body`` is whole) and for a refusal
    #: stored before bodies were bounded, or hidden from the caller.
    body_sha256: str | None
    body_size: int | None
    #: true: the body was longer than ``MANIFEST_REFUSAL_BODY_PREFIX`` bytes; ``body`` is null
    #: and ``body_prefix`` holds its first bytes (of the canonical JSON)
    body_truncated: bool
    body_prefix: str | None


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
