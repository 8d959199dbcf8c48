"""Heavy documents computed once: a finished game's whole replay and its export, kept in
PostgreSQL (:mod:`service.eventstore.kept`), with the ETags that let a client skip even the
read (docs/scaling.md, "Heavy reads"; docs/api.md, "Replay").

A finished game changes no more — or hardly: table talk after the end and refused commands
still append rows. So a kept document carries the *stamp* of what it was computed from and is
served only while the game's stamp is the same:

- the replay reads events only: its stamp is the game's version and head;
- the export reads events, commands and secrets: its stamp is the audit's fingerprint of every
  stored row of the game (:mod:`service.application.auditcache`), taken before and after the
  computation — a document whose rows moved meanwhile is served but neither kept nor tagged.

**Redaction classes.** After the end every caller reads every game value; what still differs
is private table talk (its text is its sender's and addressees' alone, ever) and, in the
export, a seat's own recorded answers. So the export is kept per class — ``spectator``
(anyone without a seat token, the host included) and ``seat:N`` — and the replay under one
class ``all`` when the game has no private message, else per class like the export. A
document is looked up under the caller's own class (and ``all``) only, so one seat's private
messages can never be served to another (``tests/integration/test_heavy_reads.py``).

Concurrent requests for the same document wait for one computation (per process). Live games
are computed on each request (as cooperative slices, :meth:`History.replay_lines`) — their
ETag still spares a client that has the bytes the download.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable

from prometheus_client import Counter

from domain.kernel.messages import DEFAULT
from ledger.exportfile import encode_export
from service.application.errors import NotFound
from service.application.history import History, ReplayPlan
from service.eventstore import kept

KEPT = Counter(
    "manifest_kept_documents_total",
    "Finished games' replays and exports: read back from kept_documents, computed (and kept), "
    "or computed and not kept (the write failed; served anyway)",
    ["kind", "outcome"],
)
#: the replay's line format (docs/api.md): part of every replay ETag
REPLAY_FORMAT = "keyframes-1"


def replay_etag(plan: ReplayPlan, start: int, limit: int | None) -> str:
    """The strong ETag of the replay bytes ``plan`` and the page give (deterministic: the
    same events fold to the same bytes)."""
    text = "|".join(
        [
            REPLAY_FORMAT,
            plan.game_id,
            str(plan.version),
            plan.head.hex(),
            plan.key,
            str(plan.everything),
            str(start),
            str(limit),
            plan.lang,
        ]
    )
    return f'"r{hashlib.sha256(text.encode()).hexdigest()[:32]}"'


def _replay_kind(plan: ReplayPlan) -> str:
    """A kept replay's kind: ``replay`` for English lines, ``replay.<lang>`` for another
    language's sentences."""
    return "replay" if plan.lang == DEFAULT else f"replay.{plan.lang}"


def _replay_stamp(plan: ReplayPlan) -> bytes:
    # b"s": lines with sentences (a replay kept before them has the bare stamp: recomputed)
    return plan.version.to_bytes(4, "big") + plan.head + b"s"


def _page(body: bytes, start: int, limit: int | None) -> bytes:
    """Lines ``start``.. (at most ``limit``) of a whole replay whose line i is event i."""
    if start == 1 and limit is None:
        return body
    lines = body.split(b"\n")[:-1]
    chosen = lines[start - 1 :] if limit is None else lines[start - 1 : start - 1 + limit]
    return b"".join(line + b"\n" for line in chosen)


class Kept:
    def __init__(self, history: History) -> None:
        self.history = history
        self._running: dict[tuple[str, ...], asyncio.Future[bytes]] = {}
        #: documents computed (folded, exported) by this process: for tests and metrics
        self.computed = 0

    async def _once(self, key: tuple[str, ...], compute: Callable[[], Awaitable[bytes]]) -> bytes:
        """``compute()``, shared by the requests that ask for the same ``key`` meanwhile."""
        running = self._running.get(key)
        if running is not None:
            try:
                return await asyncio.shield(running)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if not running.cancelled() or (task is not None and task.cancelling()):
                    raise  # this request's own cancellation
                # the request computing it was cancelled (client gone), not this one
                return await self._once(key, compute)
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._running[key] = future
        try:
            body = await compute()
            future.set_result(body)
            return body
        except asyncio.CancelledError:
            future.cancel()  # the waiters compute it themselves
            raise
        except BaseException as error:
            future.set_exception(error)
            future.exception()  # retrieved: no warning when nobody else waited
            raise
        finally:
            del self._running[key]

    # --- the replay ----------------------------------------------------------------------------
    async def replay(self, plan: ReplayPlan, start: int, limit: int | None) -> bytes:
        """The replay's lines ``start``.. (at most ``limit``) for ``plan``'s caller."""
        if not plan.finished:
            last = None if limit is None else start + limit - 1
            tag = replay_etag(plan, start, limit)

            async def live() -> bytes:
                self.computed += 1
                return (await self.history.replay_body(plan, start, last))[0]

            return await self._once(("replay", tag), live)
        whole = await self._once(
            (
                "replay-kept",
                plan.game_id,
                plan.key,
                plan.lang,
                plan.version.to_bytes(4, "big").hex(),
            ),
            lambda: self._kept_replay(plan),
        )
        return _page(whole, start, limit)

    async def _kept_replay(self, plan: ReplayPlan) -> bytes:
        stamp = _replay_stamp(plan)
        kind = _replay_kind(plan)
        body = await self.history.store.kept_document(
            plan.game_id, kind, [kept.EVERYONE, plan.key], stamp
        )
        if body is not None:
            KEPT.labels("replay", "read").inc()
            return body
        body, private = await self.history.replay_body(plan)
        self.computed += 1
        klass = plan.key if private else kept.EVERYONE
        stored = await self.history.store.keep_document(plan.game_id, kind, klass, stamp, body)
        KEPT.labels("replay", "computed" if stored else "not_kept").inc()
        return body

    # --- the export ----------------------------------------------------------------------------
    async def export_tag(self, game_id: str, token: str | None) -> tuple[str, str, bytes]:
        """The caller's redaction class, the export's ETag now, and the fingerprint it names."""
        seat = await self.history.seats.viewer(game_id, token)
        klass = "spectator" if seat is None else f"seat:{seat}"
        fingerprint = await self.history.store.fingerprint(game_id)
        if fingerprint is None:
            raise NotFound("game.not_found", f"no game {game_id}")
        fingerprint = bytes(fingerprint)
        digest = hashlib.sha256(fingerprint + b"|" + klass.encode()).hexdigest()[:32]
        return klass, f'"x{digest}"', fingerprint

    async def export(
        self, game_id: str, token: str | None, klass: str, fingerprint: bytes
    ) -> tuple[bytes, bool]:
        """The export's bytes for the caller, and whether they are those of ``fingerprint``
        (False: the rows moved while it was computed; send it without the ETag)."""
        body = await self.history.store.kept_document(game_id, "export", [klass], fingerprint)
        if body is not None:
            KEPT.labels("export", "read").inc()
            return body, True

        async def compute() -> bytes:
            exported = await self.history.export(game_id, token)
            self.computed += 1
            return encode_export(exported) + (b"F" if exported.game.status == "finished" else b"L")

        marked = await self._once(("export", game_id, klass, fingerprint.hex()), compute)
        body, finished = marked[:-1], marked[-1:] == b"F"
        after = await self.history.store.fingerprint(game_id)
        same = after is not None and bytes(after) == fingerprint
        if same and finished:
            stored = await self.history.store.keep_document(
                game_id, "export", klass, fingerprint, body
            )
            KEPT.labels("export", "computed" if stored else "not_kept").inc()
        return body, same
