"""A game's history: its events, replay at any event, audit and dispute files, export, and live
changes. Reads the event store and the projections; writes nothing but replay snapshots."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import msgspec

from domain.kernel import AUDITOR, SPECTATOR, Rng, RuleError, Viewer
from domain.kernel import seat as seat_viewer
from domain.platform.events import is_platform
from domain.platform.table import Table, fold_stream, game_document
from domain.registry import AnyGame
from projections.replay import SNAPSHOT_EVERY, Replayer
from projections.store import StoreUnavailable
from service.application.gameplay import Manifest
from service.application.ruling import event_json
from service.audit.audit import EXPORT_FORMAT, ExportedGame, ExportFile, Opening, audit
from service.audit.commitments import MESSAGE, Keys, shown, withholds
from service.audit.treeheads import TreeCache, inclusion
from service.eventstore.chain import canonical_of, format_at, link
from service.eventstore.records import CommandRecord, GameRow, StoredEvent
from service.problems import Problem

MAX_PAGE = 1000


class History:
    def __init__(self, manifest: Manifest, replayer: Replayer) -> None:
        self.manifest = manifest
        self.store = manifest.store
        self.replayer = replayer
        self.trees = TreeCache()

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

        return cls(manifest, Replayer(manifest.replayer.store, read_range, SNAPSHOT_EVERY))

    async def _caller(self, game_id: str, token: str | None) -> tuple[GameRow, int | None, Viewer]:
        seat = await self.manifest.viewer(game_id, token)
        row = await self.store.get_game(game_id)
        if row is None:
            raise Problem(404, "game.not_found", f"no game {game_id}")
        if row.status == "finished":
            return row, seat, AUDITOR  # a finished game replays everything
        return row, seat, SPECTATOR if seat is None else seat_viewer(seat)

    # --- events and replay -------------------------------------------------------------------
    async def events(
        self, game_id: str, token: str | None, after: int, limit: int
    ) -> dict[str, Any]:
        row, seat, _ = await self._caller(game_id, token)
        limit = max(1, min(limit, MAX_PAGE))
        after = max(0, after)
        events = await self.store.read_history(
            game_id, after=after, limit=limit, through=row.version
        )
        table = await self._table_for_redaction(game_id)
        keys = await self.manifest.keys(game_id)
        finished = row.status == "finished"
        page = [_json(table.rules, e, seat, finished, keys) for e in events]
        last = events[-1].version if events else after
        return {"events": page, "next": last if last < row.version else None}

    async def _table_for_redaction(self, game_id: str) -> Table:
        """Any table of the game (redaction needs only its rules): this process's, the
        projection's, or (Redis failing) folded from PostgreSQL."""
        try:
            table = await self.manifest.projector.load(game_id)
        except StoreUnavailable:
            table = None
        if table is None:
            _, table = await self.manifest.current(game_id)
        return table

    async def replay(self, game_id: str, token: str | None, n: int) -> dict[str, Any]:
        row, seat, viewer = await self._caller(game_id, token)
        if not 1 <= n <= row.version:
            raise Problem(
                404, "replay.no_such_event", f"the game has events 1 to {row.version}, not {n}"
            )
        table, folded = await self.replayer.table_at(game_id, n)
        doc = game_document(table, _key(seat), everything=viewer == AUDITOR)
        return {
            "version": n,
            "status": doc["status"],
            "to_act": doc["to_act"],
            "view": doc["view"],
            "result": doc["result"],
            "folded": folded,
        }

    async def replay_lines(self, game_id: str, token: str | None) -> AsyncIterator[bytes]:
        """The whole game as NDJSON: one line per event, with the view after it."""
        row, seat, viewer = await self._caller(game_id, token)
        key = _key(seat)
        everything = viewer == AUDITOR
        keys = await self.manifest.keys(game_id)
        table: Table | None = None
        after = 0
        while after < row.version:
            events = await self.store.read_history(
                game_id, after=after, limit=500, through=row.version
            )
            if not events:
                break
            for event in events:
                table = fold_stream(table, [event], game_id)
                doc = game_document(table, key, everything=everything)
                line = {
                    "version": event.version,
                    "event": _json(table.rules, event, seat, everything, keys),
                    "view": doc["view"],
                }
                yield msgspec.json.encode(line) + b"\n"
            after = events[-1].version

    # --- audit -------------------------------------------------------------------------------
    async def _material(
        self, game_id: str
    ) -> tuple[GameRow, list[StoredEvent], list[CommandRecord], bytes]:
        row = await self.store.get_game(game_id)
        if row is None:
            raise Problem(404, "game.not_found", f"no game {game_id}")
        events = await self.store.read_history(game_id, through=row.version)
        commands = await self.store.commands(game_id)
        seed = await self.store.seed(game_id)
        return row, events, commands, seed

    async def audit(self, game_id: str) -> dict[str, Any]:
        row, events, commands, seed = await self._material(game_id)
        keys = await self.manifest.keys(game_id)
        return audit(game_id, events, commands, seed, head=row.head, message_key=keys.messages)

    async def export(self, game_id: str, token: str | None = None) -> ExportFile:
        """The whole game as the caller may read it (``token``: a seat's; None: anyone's):
        the events' public forms, their data with what the caller may read in the clear and
        its openings, the commands redacted alike, and the seed once revealed."""
        seat = await self.manifest.viewer(game_id, token)
        row, events, commands, seed = await self._material(game_id)
        finished = row.status == "finished"
        rules = (await self._table_for_redaction(game_id)).rules if events else None
        keys = await self.manifest.keys(game_id)
        out: list[StoredEvent] = []
        openings: list[Opening] = []
        withheld: list[int] = []
        for e in events:
            data, opened = (e.data, []) if rules is None else shown(rules, e, seat, finished, keys)
            if e.public is None and data != e.data:
                withheld.append(e.version)  # canonical form 1: the bytes hashed are not shown
            out.append(msgspec.structs.replace(e, data=data))
            openings += [Opening(e.version, o["path"], o["salt"]) for o in opened]
        by_id = {e.command_id: e for e in out if e.command_id is not None}
        secret = _secret_commands(events, rules, seat, finished)
        return ExportFile(
            format=EXPORT_FORMAT,
            game=ExportedGame(row.id, row.game, row.seats, row.status, row.version, row.head),
            events=out,
            commands=[_redacted_command(c, seat, finished, by_id, secret) for c in commands],
            seed=seed if finished else None,
            openings=openings,
            withheld=withheld,
        )

    async def dispute(self, game_id: str, n: int, token: str | None = None) -> dict[str, Any]:
        """The dispute file of event ``n``: who sent what, when; the state before; the checks
        that made it legal; the events; the chain proof; the seat's rejected tries before —
        everything redacted for the caller (``token``: a seat's; None: anyone) as its events
        are."""
        caller = await self.manifest.viewer(game_id, token)
        row, events, commands, seed = await self._material(game_id)
        if not 1 <= n <= len(events):
            raise Problem(404, "audit.no_such_event", f"the game has events 1 to {len(events)}")
        event = events[n - 1]
        command = next((c for c in commands if c.id == event.command_id), None)
        first = command.first_version if command and command.first_version else n
        last = command.last_version if command and command.last_version else n
        before = (await self.replayer.table_at(game_id, first - 1))[0] if first > 1 else None
        decision = events[first - 1 : last]
        # Anyone may ask for a dispute file: while the game is live it shows only what a
        # spectator may see (no full state, events and canonical bytes redacted).
        live = row.status != "finished"
        rules = (await self._table_for_redaction(game_id)).rules
        keys = await self.manifest.keys(game_id)
        shown_events = [_json(rules, e, caller, not live, keys) for e in decision]
        by_id = {
            e.command_id: msgspec.structs.replace(e, data=j["data"])
            for e, j in zip(decision, shown_events, strict=True)
            if e.command_id is not None
        }
        # The canonical bytes hold only commitments (canonical form 2); in form 1 they hold the
        # clear data, so they are shown only to a caller who may read all of it.
        disclose = event.public is not None or not withholds(event, rules, caller, not live)
        secret = _secret_commands(decision, rules, caller, not live)
        return {
            "game": game_id,
            "version": n,
            "command": None
            if command is None
            else _command_json(_redacted_command(command, caller, not live, by_id, secret)),
            "state_before": self._state_before(before, command, live),
            "checks": self._checks(before, command, decision, seed, first, live),
            "events": shown_events,
            "chain": _chain_proof(events, n, disclose),
            "inclusion": self._inclusion(game_id, events, n),
            "receipt": self.manifest.signer.receipt(game_id, row.version, row.head.hex()),
            "rejected_before": [
                _command_json(_redacted_command(c, caller, not live, by_id, set()))
                for c in _rejected_before(commands, command)
            ],
        }

    def _inclusion(self, game_id: str, events: list[StoredEvent], n: int) -> dict[str, Any]:
        """Event ``n``'s O(log n) inclusion proof in the whole stream, under a signed tree
        head (:mod:`service.audit.treeheads`)."""
        tree = self.trees.tree(game_id, [bytes(e.hash) for e in events])
        return inclusion(self.manifest.signer, game_id, tree, n, bytes(events[-1].hash))

    @staticmethod
    def _state_before(
        before: Table | None, command: CommandRecord | None, live: bool
    ) -> dict[str, Any]:
        if before is None:
            return {"version": 0, "as_seat_saw_it": None, "full": None}
        seat = None if command is None or live else command.seat
        return {
            "version": before.version,
            "as_seat_saw_it": game_document(before, _key(seat))["view"],
            "full": None if live else game_document(before, "spectator", everything=True)["view"],
        }

    @staticmethod
    def _checks(
        before: Table | None,
        command: CommandRecord | None,
        decision: list[StoredEvent],
        seed: bytes,
        first: int,
        live: bool,
    ) -> list[dict[str, Any]]:
        if command is None or before is None or before.state is None or command.seat is None:
            return [{"check": "platform", "ok": True, "detail": "set-up or lobby event"}]
        rules = before.rules
        body = command.body.get("command") if isinstance(command.body, dict) else None
        checks: list[dict[str, Any]] = []
        expected = command.body.get("expected_version") if isinstance(command.body, dict) else None
        checks.append(
            {
                "check": "version",
                "ok": expected is None or expected == first - 1,
                "detail": f"sent expected_version {expected}; the game was at {first - 1}",
            }
        )
        if command.type == "table.message":
            checks.append({"check": "seat", "ok": True, "detail": f"seat {command.seat} spoke"})
            return checks
        to_act = rules.to_act(before.state)
        checks.append(
            {
                "check": "to_act",
                "ok": command.seat in to_act,
                "detail": f"seat {command.seat} sent it; the game waited for {to_act}",
            }
        )
        try:
            decoded = rules.decode_command(body or {})
            produced = rules.decide(before.state, command.seat, decoded, Rng(seed, first))
            same = [
                msgspec.json.encode(msgspec.to_builtins(e), order="sorted") for e in produced
            ] == [
                msgspec.json.encode(e.data, order="sorted")
                for e in decision
                if not is_platform(e.type)
            ]
            checks.append(
                {
                    "check": "rules",
                    "ok": same,
                    "detail": "decide re-run on the state before, with Rng(seed, "
                    f"{first}), {'produces exactly' if same else 'does NOT produce'} these events",
                }
            )
            legal = [msgspec.to_builtins(c) for c in rules.legal(before.state, command.seat)]
            # how many may depend on the seat's hidden hand: counted once the game is over
            counted = "the" if live else f"{len(legal)}"
            checks.append(
                {
                    "check": "listed_as_legal",
                    "ok": msgspec.to_builtins(decoded) in legal,
                    "detail": f"one of {counted} legal commands for the seat at that point",
                }
            )
        except RuleError as error:
            checks.append(
                {"check": "rules", "ok": False, "detail": f"{error.code}: {error.message}"}
            )
        return checks

    # --- live --------------------------------------------------------------------------------
    async def changes(self, game_id: str, token: str | None) -> AsyncIterator[bytes]:
        """The caller's game document now, then again after every accepted change."""
        seat = await self.manifest.viewer(game_id, token)
        field = "doc:spectator" if seat is None else f"doc:seat:{seat}"
        sent = -1
        async for version in self.manifest.projector.store.subscribe(game_id):
            if version is not None and version <= sent:
                continue
            doc = await self.manifest.document(game_id, field)
            current = int(msgspec.json.decode(doc)["version"])
            if current > sent:
                sent = current
                yield doc


def _key(seat: int | None) -> str:
    return "spectator" if seat is None else f"seat:{seat}"


def _json(
    rules: AnyGame, event: StoredEvent, seat: int | None, finished: bool, keys: Keys
) -> dict[str, Any]:
    return event_json(event, *shown(rules, event, seat, finished, keys))


def _secret_commands(
    events: list[StoredEvent], rules: AnyGame | None, seat: int | None, finished: bool
) -> set[str]:
    """The commands (ids) that produced an event with a hidden value ``seat`` may not read."""
    if rules is None:
        return set()
    return {
        e.command_id
        for e in events
        if e.command_id is not None and withholds(e, rules, seat, finished)
    }


def _redacted_command(
    c: CommandRecord,
    seat: int | None,
    finished: bool,
    events: dict[str, StoredEvent],
    secret: set[str],
) -> CommandRecord:
    """A recorded command as ``seat`` may read it. A private message's text is what the
    caller reads in its event (its commitment, unless the caller was party to it); a refused
    command's body and error detail are its seat's alone while the game is live (the detail
    may describe the seat's hand, the body may be a guess at it); so is the body of an accepted
    command whose events hold a value hidden from ``seat`` (in ``secret``: the body may name
    it, as Curious Cargo's ``keep_card`` names the card kept; what is public of it is in its
    events)."""
    if c.seat == seat:
        return c
    # The recorded answer holds the events as the sender read them (its own secrets): never.
    c = msgspec.structs.replace(c, response=None)
    if c.type == MESSAGE and isinstance(c.body, dict) and c.body.get("to") != "all":
        event = events.get(c.id)
        text = None if event is None else event.data.get("text")
        return msgspec.structs.replace(c, body={**c.body, "text": text})
    if (c.outcome != "accepted" or c.id in secret) and not finished:
        return msgspec.structs.replace(c, body=None, error_detail=None)
    return c


def _command_json(c: CommandRecord) -> dict[str, Any]:
    return {
        "id": c.id,
        "seat": c.seat,
        "type": c.type,
        "body": c.body,
        "received_at": format_at(c.received_at),
        "idempotency_key": c.idempotency_key,
        "outcome": c.outcome,
        "error_code": c.error_code,
        "error_detail": c.error_detail,
        "first_version": c.first_version,
        "last_version": c.last_version,
    }


def _rejected_before(
    commands: list[CommandRecord], command: CommandRecord | None
) -> list[CommandRecord]:
    """The seat's commands refused since its previous accepted one, up to ``command``."""
    if command is None:
        return []
    mine = [c for c in commands if c.seat == command.seat]
    out: list[CommandRecord] = []
    for c in mine:
        if c.id == command.id:
            return out
        out = [] if c.outcome == "accepted" else [*out, c]
    return out


def _chain_proof(events: list[StoredEvent], n: int, disclose: bool = True) -> dict[str, Any]:
    """Event ``n``'s canonical bytes and link (its canonical bytes only when ``disclose``: they
    hold the event's unredacted data). Its place in the whole stream is the dispute file's
    ``inclusion`` proof, not every later link."""
    event = events[n - 1]
    body = canonical_of(event)
    recomputed = link(bytes(event.prev_hash), body)
    return {
        "construction": "hash_n = SHA-256(hash_{n-1} || canonical(event n)); hash_0 = 0^32",
        "canonical": body.decode() if disclose else None,
        "prev_hash": bytes(event.prev_hash).hex(),
        "hash": bytes(event.hash).hex(),
        "recomputed": recomputed.hex(),
        "ok": recomputed == bytes(event.hash),
    }
