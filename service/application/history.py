"""A game's history: its events, replay at any event, the audit, the export, dispute files
(built by :mod:`service.application.disputes`) and live changes, each redacted for its caller
(:mod:`service.application.redaction`). Reads the event store and the projections; writes
nothing but replay snapshots."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import msgspec

from domain.kernel import AUDITOR, SPECTATOR, Viewer
from domain.kernel import seat as seat_viewer
from domain.kernel.messages import DEFAULT
from domain.platform.table import SNAPSHOT_EVERY, Table, fold_stream, game_document
from domain.registry import AnyGame
from ledger.adjudication import Progress
from ledger.answers import Receipt
from ledger.audit import audit
from ledger.commitments import Keys, shown
from ledger.evidence import Evidence
from ledger.exportfile import EXPORT_FORMAT, ExportedGame, ExportFile, Opening
from ledger.receipts import Signer
from ledger.records import CommandRecord, StoredEvent
from ledger.treeheads import inclusion
from service.application.answers import DisputeFile, EventsPage, Inclusion, ReplayView
from service.application.changes import LiveChanges
from service.application.disputes import TreeCache, dispute_file, disputed
from service.application.documents import Documents
from service.application.errors import NotFound
from service.application.gameplay import Manifest
from service.application.projection import Projection, ProjectionDown, Replay, replayer
from service.application.redaction import (
    key_of,
    redacted_command,
    secret_commands,
    sentence_at,
    templates_used,
)
from service.application.redaction import (
    told_event as told,
)
from service.application.seats import Grant, Seats
from service.application.tables import Tables, check_game_id
from service.eventstore.port import EventLog
from service.eventstore.records import GameRow

MAX_PAGE = 1000
#: A replay line carries the view after its event every KEYFRAME_EVERY events (and on the
#: game's last event): docs/api.md, "Replay". The replay snapshots' spacing, so a page that
#: starts after a keyframe seeks from a snapshot without folding.
KEYFRAME_EVERY = SNAPSHOT_EVERY
#: events folded (a view counts as KEYFRAME_EVERY) between two turns given to the event loop
YIELD_EVERY = 16


class ReplayPlan(msgspec.Struct, frozen=True):
    """A replay as one caller reads it: the game's version and head when asked, the caller's
    seat and document key, whether everything is shown (a finished game)."""

    game_id: str
    seat: int | None
    key: str
    everything: bool
    finished: bool
    version: int
    head: bytes
    #: the language its lines' sentences are told in
    lang: str = DEFAULT


def _has_private_talk(lines: list[bytes]) -> bool:
    """Whether a replay's lines hold a private table message (one not ``to`` everyone)."""
    for raw in lines:
        if b'"type":"table.message"' in raw:
            data = msgspec.json.decode(raw)["event"]["data"]
            if data.get("to") != "all":
                return True
    return False


def _viewer(plan: ReplayPlan) -> Viewer:
    """Who reads a replay's events: an auditor (everything shown), a spectator or a seat."""
    if plan.everything:
        return AUDITOR
    return SPECTATOR if plan.seat is None else seat_viewer(plan.seat)


class History:
    """A game's past and its live changes, over the application's shared collaborators."""

    def __init__(
        self,
        store: EventLog,
        tables: Tables,
        seats: Seats,
        documents: Documents,
        projector: Projection,
        signer: Signer,
        replayer: Replay,
    ) -> None:
        self.store = store
        self.tables = tables
        self.seats = seats
        self.documents = documents
        self.projector = projector
        self.signer = signer
        self.replayer = replayer
        self.trees = TreeCache()
        #: the caller's document after every change, one read shared per change
        self.live = LiveChanges(seats, documents, projector)

    @classmethod
    def of(cls, manifest: Manifest) -> History:
        """History over ``manifest``; its replay seeks read the replica when there is one."""
        store = manifest.store

        async def read_range(game_id: str, after: int, limit: int | None) -> list[StoredEvent]:
            # A seek asks only for events it knows exist (n ≤ the primary's version).
            if limit is None:
                return await store.read(game_id, after=after)
            return await store.read_history(
                game_id, after=after, limit=limit, through=after + limit
            )

        return cls(
            store,
            manifest.tables,
            manifest.seats,
            manifest.documents,
            manifest.projector,
            manifest.signer,
            replayer(manifest.projector, read_range),
        )

    async def _caller(self, game_id: str, token: str | None) -> tuple[GameRow, int | None, Viewer]:
        seat = await self.seats.viewer(game_id, token)
        row = await self.store.get_game(game_id)
        if row is None:
            raise NotFound("game.not_found", f"no game {game_id}")
        if row.status == "finished":
            return row, seat, AUDITOR  # a finished game replays everything
        return row, seat, SPECTATOR if seat is None else seat_viewer(seat)

    # --- events and replay -------------------------------------------------------------------
    async def events(
        self, game_id: str, token: str | None, after: int, limit: int, lang: str = DEFAULT
    ) -> EventsPage:
        row, seat, viewer = await self._caller(game_id, token)
        limit = max(1, min(limit, MAX_PAGE))
        after = max(0, after)
        events = await self.store.read_history(
            game_id, after=after, limit=limit, through=row.version
        )
        table = await self._table_for_redaction(game_id)
        keys = await self.tables.keys(game_id)
        finished = row.status == "finished"
        page = [told(table, e, seat, finished, keys, viewer, lang) for e in events]
        last = events[-1].version if events else after
        return EventsPage(events=page, next=last if last < row.version else None)

    async def _table_for_redaction(self, game_id: str) -> Table:
        """Any table of the game (redaction needs only its rules): this process's, the
        projection's, or (Redis failing) folded from PostgreSQL."""
        try:
            table = await self.projector.load(game_id)
        except ProjectionDown:
            table = None
        if table is None:
            _, table = await self.tables.current(game_id)
        return table

    async def replay(self, game_id: str, token: str | None, n: int, lang: str = "en") -> ReplayView:
        row, seat, viewer = await self._caller(game_id, token)
        if not 1 <= n <= row.version:
            detail = f"the game has events 1 to {row.version}, not {n}"
            raise NotFound("replay.no_such_event", detail)
        table, folded = await self.replayer.table_at(game_id, n)
        doc = game_document(table, key_of(seat), everything=viewer == AUDITOR)
        return ReplayView(
            version=n,
            status=doc.status,
            to_act=doc.to_act,
            view=doc.view,
            result=None if doc.result is None else msgspec.to_builtins(doc.result),
            folded=folded,
            clock=doc.clock,
            sentence=await sentence_at(self.store, table, n, viewer, seat, lang),
            seat=seat,
        )

    async def replay_plan(self, game_id: str, token: str | None, lang: str = DEFAULT) -> ReplayPlan:
        """What ``GET /replay`` of ``game_id`` is for this caller: checks the caller (401, 403,
        404) and names the state replayed, without reading a single event."""
        row, seat, viewer = await self._caller(game_id, token)
        return ReplayPlan(
            game_id=game_id,
            seat=seat,
            key=key_of(seat),
            everything=viewer == AUDITOR,
            finished=row.status == "finished",
            version=row.version,
            head=bytes(row.head),
            lang=lang,
        )

    async def replay_lines(
        self, plan: ReplayPlan, start: int = 1, last: int | None = None
    ) -> AsyncIterator[bytes]:
        """Lines ``start``..``last`` (default: the plan's version) of the game's NDJSON replay
        (docs/api.md, "Replay"): every line ``{"version", "event"}``, and the view after the
        event (``"view"``) on the keyframes — every :data:`KEYFRAME_EVERY`-th event and the
        game's last (``plan.version``). Folds cooperatively: the loop gets a turn after every
        :data:`YIELD_EVERY` events, so a long replay is many small slices of work between which
        commands are answered, never one blocking computation."""
        game_id = plan.game_id
        last = plan.version if last is None else min(last, plan.version)
        if start > last:
            return
        keys = await self.tables.keys(game_id)
        table: Table | None = None
        if start > 1:  # from the snapshot at or below, folding at most 99 events
            table, _ = await self.replayer.table_at(game_id, start - 1)
        after = start - 1
        folded = 0
        who = _viewer(plan)  # who reads the lines' sentences
        while after < last:
            # read KEYFRAME_EVERY at a time: decoding the rows is one slice of work too
            events = await self.store.read_history(
                game_id, after=after, limit=min(KEYFRAME_EVERY, last - after), through=last
            )
            if not events:
                break
            for event in events:
                table = fold_stream(table, [event], game_id)
                line: dict[str, Any] = {
                    "version": event.version,
                    "event": told(table, event, plan.seat, plan.everything, keys, who, plan.lang),
                }
                if event.version % KEYFRAME_EVERY == 0 or event.version == plan.version:
                    doc = game_document(table, plan.key, everything=plan.everything)
                    line["view"] = doc.view
                    if doc.clock is not None:  # a clocked game's keyframes carry the clock
                        line["clock"] = doc.clock
                    folded += KEYFRAME_EVERY  # a view costs about as much as many folds
                yield msgspec.json.encode(line) + b"\n"
                folded += 1
                if folded >= YIELD_EVERY:
                    folded = 0
                    await asyncio.sleep(0)  # let the loop answer what is waiting
            after = events[-1].version

    async def replay_body(
        self, plan: ReplayPlan, start: int = 1, last: int | None = None
    ) -> tuple[bytes, bool]:
        """Lines ``start``..``last`` as one body, and whether the game has private table talk
        (then the lines depend on who reads them: :mod:`service.application.kept`)."""
        parts: list[bytes] = []
        async for line in self.replay_lines(plan, start, last):
            parts.append(line)
        body = b"".join(parts)
        return body, b'"type":"table.message"' in body and _has_private_talk(parts)

    # --- audit -------------------------------------------------------------------------------
    async def _material(
        self, game_id: str
    ) -> tuple[GameRow, list[StoredEvent], list[CommandRecord], bytes]:
        """The game's row, events, commands and seed as of one moment (``store.snapshot``): a
        document built from them shows an accepted command only with its events, so what they
        hide its body hides too. The rules and keys read besides never change once the game
        exists, so they agree with any snapshot. A game id in another spelling than the one the
        server issues names no game, for the CLI as for the API (``check_game_id``)."""
        check_game_id(game_id)
        snapshot = await self.store.snapshot(game_id)
        if snapshot is None:
            raise NotFound("game.not_found", f"no game {game_id}")
        return snapshot.row, snapshot.events, snapshot.commands, snapshot.seed

    async def audit(self, game_id: str, progress: Progress | None = None) -> dict[str, Any]:
        row, events, commands, seed = await self._material(game_id)
        keys = await self.tables.keys(game_id)
        evidence = Evidence(game_id, events, commands, seed, row.head, keys.messages)
        # pure Python (~0.1 s for 1,600 events): in a thread, the loop keeps its GIL turns
        return await asyncio.to_thread(audit, evidence, progress)

    async def export(
        self, game_id: str, token: str | None = None, progress: Progress | None = None
    ) -> ExportFile:
        """The whole game as the caller may read it (``token``: a seat's; None: anyone's):
        the events' public forms, their data with what the caller may read in the clear and
        its openings, the commands redacted alike, and the seed once revealed."""
        seat = await self.seats.viewer(game_id, token)
        row, events, commands, seed = await self._material(game_id)
        rules = (await self._table_for_redaction(game_id)).rules if events else None
        keys = await self.tables.keys(game_id)
        # pure Python (~80 ms for 1,600 events): in a thread, the loop keeps its GIL turns
        return await asyncio.to_thread(
            _export_file, row, events, commands, seed, rules, keys, seat, progress
        )

    async def dispute(self, game_id: str, n: int, token: str | None = None) -> DisputeFile:
        """The dispute file of event ``n`` (:mod:`service.application.disputes`), redacted for
        the caller (``token``: a seat's; None: anyone) as its events are."""
        caller = await self.seats.viewer(game_id, token)
        row, events, commands, seed = await self._material(game_id)
        if not 1 <= n <= len(events):
            raise NotFound("audit.no_such_event", f"the game has events 1 to {len(events)}")
        of = disputed(commands, events[n - 1])
        before = (await self.replayer.table_at(game_id, of.first - 1))[0] if of.first > 1 else None
        rules = (await self._table_for_redaction(game_id)).rules
        keys = await self.tables.keys(game_id)
        live = row.status != "finished"
        tree = self.trees.tree(game_id, [bytes(e.hash) for e in events])
        # event n's O(log n) inclusion proof under a signed tree head (ledger.treeheads)
        proof = inclusion(self.signer, game_id, tree, n, bytes(events[-1].hash))
        receipt = Receipt(**self.signer.receipt(game_id, row.version, row.head.hex()))
        # pure, and over the whole game's events and commands: in a thread, as the audit
        return await asyncio.to_thread(
            dispute_file,
            n,
            events,
            commands,
            seed,
            of,
            before,
            rules,
            keys,
            caller,
            live,
            msgspec.convert(proof, Inclusion),
            receipt,
        )

    # --- live --------------------------------------------------------------------------------
    def changes(self, grant: Grant) -> AsyncGenerator[bytes, None]:
        """The grant's game document now, then after every change while the grant holds
        (:mod:`.changes`)."""
        return self.live.changes(grant)


def _export_file(
    row: GameRow,
    events: list[StoredEvent],
    commands: list[CommandRecord],
    seed: bytes,
    rules: AnyGame | None,
    keys: Keys,
    seat: int | None,
    progress: Progress | None,
) -> ExportFile:
    """The export file of one snapshot as ``seat`` may read it (:meth:`History.export`)."""
    finished = row.status == "finished"
    out: list[StoredEvent] = []
    openings: list[Opening] = []
    withheld: list[int] = []
    for e in events:
        data, opened = (e.data, []) if rules is None else shown(rules, e, seat, finished, keys)
        if e.public is None and data != e.data:
            withheld.append(e.version)  # canonical form 1: the bytes hashed are not shown
        out.append(msgspec.structs.replace(e, data=data))
        openings += [Opening(e.version, o["path"], o["salt"]) for o in opened]
        if progress is not None:  # manifest export's bar
            progress(e.version, len(events))
    by_id = {e.command_id: e for e in out if e.command_id is not None}
    secret = secret_commands(events, rules, seat, finished)
    used = {} if rules is None else templates_used(rules, {e.type for e in events})
    return ExportFile(
        format=EXPORT_FORMAT,
        game=ExportedGame(row.id, row.game, row.seats, row.status, row.version, row.head),
        events=out,
        commands=[redacted_command(c, seat, finished, by_id, secret) for c in commands],
        seed=seed if finished else None,
        openings=openings,
        withheld=withheld,
        messages=used,
    )
