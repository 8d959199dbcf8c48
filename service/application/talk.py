"""Table talk: a seat's message to all or to some seats, appended under the game's row lock and
recorded like a command (so an audit ties the event to what was sent). Private messages are
hidden values: only their addressees can open them (:mod:`ledger.commitments`)."""

from __future__ import annotations

import uuid

import msgspec

from domain.platform.events import (
    TableMessage,
)
from ledger.answers import Receipt
from ledger.receipts import Signer
from service.application.answers import MessageAnswer
from service.application.bodies import MAX_MESSAGE, MessageBody
from service.application.errors import RefusedByRules
from service.application.seats import Seats
from service.application.tables import Tables
from service.application.writes import Writes
from service.eventstore.port import EventLog


class Talk:
    """Table talk: appended under the game's row lock, recorded like a command."""

    def __init__(
        self, store: EventLog, tables: Tables, seats: Seats, writes: Writes, signer: Signer
    ) -> None:
        self.store = store
        self.tables = tables
        self.seats = seats
        self.writes = writes
        self.signer = signer

    async def message(self, game_id: str, token: str | None, body: MessageBody) -> MessageAnswer:
        return await self.writes.run(game_id, lambda: self._message(game_id, token, body), "write")

    async def _message(self, game_id: str, token: str | None, body: MessageBody) -> MessageAnswer:
        seat = await self.seats.require_seat(game_id, token)
        text = body.text.strip()
        if not text or len(text) > MAX_MESSAGE:
            raise RefusedByRules("message.bad_text", f"a message is 1 to {MAX_MESSAGE} characters")
        snapshots: dict[int, bytes] = {}
        async with self.store.lock(game_id) as locked:
            seats = (await self.tables.at_lock(locked)).seats
            if isinstance(body.to, str):
                if body.to != "all":
                    raise RefusedByRules(
                        "message.bad_recipients", 'send to a list of seats or "all"'
                    )
                to: list[int] | str = "all"
            else:
                if not body.to or any(not 0 <= s < seats for s in body.to):
                    raise RefusedByRules("message.bad_recipients", f"seats are 0 to {seats - 1}")
                to = sorted(set(body.to))
            command_id = str(uuid.uuid4())
            table = await self.writes.append(
                locked, [TableMessage(seat, to, text)], snapshots, seat=seat, command_id=command_id
            )
            head = locked.row.head.hex()
            response = MessageAnswer(
                version=table.version,
                head=head,
                receipt=Receipt(**self.signer.receipt(game_id, table.version, head)),
            )
            # Recorded like a command, so an audit can tie the event to what the seat sent.
            await locked.record_command(
                command_id=command_id,
                seat=seat,
                idempotency_key=None,
                type="table.message",
                body=msgspec.to_builtins(body),
                outcome="accepted",
                first_version=table.version,
                last_version=table.version,
                response=response,
            )
        self.writes.project(table, snapshots)
        return response
