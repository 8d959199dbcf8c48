"""Dispute files (``GET /v1/games/{id}/audit/{n}``): for one event, the command that made it
(who sent what, when), the state before it as that seat saw it, the checks that made it legal
(``decide`` re-run on that state with the game's seed), the events it produced, its chain link,
and the seat's refused tries before it — everything redacted for the caller as its events are.
Pure: :class:`service.application.history.History` reads what it needs and adds the inclusion
proof and the receipt."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from domain.kernel import Rng, RuleError
from domain.platform import referee
from domain.platform.events import ENDING_COMMANDS, is_platform
from domain.platform.table import Table, game_document, legal_document, table_to_act
from domain.registry import AnyGame
from infra.lru import LRU
from ledger import clocking
from ledger.adjudication import ENDINGS
from ledger.answers import Receipt
from ledger.chain import canonical_of, link
from ledger.commitments import Keys, withholds
from ledger.merkle import Tree, leaf_hash
from ledger.records import CommandRecord, StoredEvent
from service.application.answers import ChainProof, Check, DisputeFile, Inclusion, StateBefore
from service.application.redaction import (
    command_json,
    event_for,
    key_of,
    redacted_command,
    secret_commands,
)


class Disputed(msgspec.Struct, frozen=True):
    """The command behind event ``n`` (None: a set-up or lobby event) and the versions of every
    event it appended."""

    command: CommandRecord | None
    first: int
    last: int


def disputed(commands: list[CommandRecord], event: StoredEvent) -> Disputed:
    command = next((c for c in commands if c.id == event.command_id), None)
    first = command.first_version if command and command.first_version else event.version
    last = command.last_version if command and command.last_version else event.version
    return Disputed(command, first, last)


def dispute_file(
    n: int,
    events: list[StoredEvent],
    commands: list[CommandRecord],
    seed: bytes,
    of: Disputed,
    before: Table | None,
    rules: AnyGame,
    keys: Keys,
    caller: int | None,
    live: bool,
    proof: Inclusion,
    receipt: Receipt,
) -> DisputeFile:
    """The dispute file of event ``n`` for ``caller`` (a seat, or None: anyone), with event
    ``n``'s inclusion ``proof`` and the game's ``receipt``. While the game is live it shows only
    what the caller may see (no full state, events and canonical bytes redacted)."""
    command, first = of.command, of.first
    decision = events[first - 1 : of.last]
    shown_events = [event_for(rules, e, caller, not live, keys) for e in decision]
    by_id = {
        e.command_id: msgspec.structs.replace(e, data=j.data)
        for e, j in zip(decision, shown_events, strict=True)
        if e.command_id is not None
    }
    # The canonical bytes hold only commitments (canonical form 2); in form 1 they hold the
    # clear data, so they are shown only to a caller who may read all of it.
    event = events[n - 1]
    disclose = event.public is not None or not withholds(event, rules, caller, not live)
    secret = secret_commands(decision, rules, caller, not live)
    return DisputeFile(
        game=events[n - 1].game_id,
        version=n,
        command=None
        if command is None
        else command_json(redacted_command(command, caller, not live, by_id, secret)),
        state_before=state_before(before, command, caller, live),
        checks=checks(before, command, decision, seed, first, live),
        events=shown_events,
        chain=chain_proof(events, n, disclose),
        inclusion=proof,
        receipt=receipt,
        rejected_before=[
            command_json(redacted_command(c, caller, not live, by_id, set()))
            for c in rejected_before(commands, command)
        ],
    )


def state_before(
    before: Table | None, command: CommandRecord | None, caller: int | None, live: bool
) -> StateBefore:
    """The state before the disputed command: ``as_seat_saw_it``, the view of the seat that
    sent it (its own hidden values open, the others' as it saw them) — while the game is live
    only for that seat itself, null for anyone else (it holds the seat's hand); ``as_you_see_it``,
    the caller's own view of it; ``full``, everything, once the game is over (docs/api.md)."""
    seat = None if command is None else command.seat
    if before is None:
        return StateBefore(version=0, seat=seat, as_seat_saw_it=None, as_you_see_it=None, full=None)
    readable = seat is None or not live or caller == seat
    return StateBefore(
        version=before.version,
        seat=seat,
        as_seat_saw_it=game_document(before, key_of(seat)).view if readable else None,
        as_you_see_it=game_document(before, key_of(caller), everything=not live).view,
        full=None if live else game_document(before, "spectator", everything=True).view,
    )


def checks(
    before: Table | None,
    command: CommandRecord | None,
    decision: list[StoredEvent],
    seed: bytes,
    first: int,
    live: bool,
) -> list[Check]:
    """What made the command legal, re-checked: the version it was sent against, whose turn it
    was, ``decide`` re-run on the state before with ``Rng(seed, first)``, and the legal list."""
    if command is None or before is None or before.state is None or command.seat is None:
        return [Check("platform", True, "set-up or lobby event")]
    rules = before.rules
    body = command.body.get("command") if isinstance(command.body, dict) else None
    found: list[Check] = []
    expected = command.body.get("expected_version") if isinstance(command.body, dict) else None
    found.append(
        Check(
            check="version",
            ok=expected is None or expected == first - 1,
            detail=f"sent expected_version {expected}; the game was at {first - 1}",
        )
    )
    if command.type == "table.message":
        found.append(Check("seat", True, f"seat {command.seat} spoke"))
        return found
    clock = clocking.dispute_check(before, command, decision, seed)  # a clocked game's times
    if clock is not None:
        found.append(Check(*clock))
        if command.type == clocking.EXPIRY:
            # an expiry's game events: the timeout rules re-run, as any command's rules are
            expiry = clocking.expiry_checks(before, command, decision, seed, live)
            found.extend(Check(*c) for c in expiry)
            return found
        if command.type in clocking.PRESENCE:
            return found  # a leave or a return: no command of the game to re-run
    to_act = table_to_act(before)
    ending = command.type in ENDING_COMMANDS  # any seat may resign or abort, on its turn or not
    found.append(
        Check(
            check="to_act",
            ok=command.seat in to_act or ending,
            detail=f"seat {command.seat} sent it; the game waited for {to_act}",
        )
    )

    try:
        decoded = referee.decode_command(rules, body or {})
        produced = referee.decide(before, command.seat, decoded, Rng(seed, first))
        decided = [e for e in decision if not is_platform(e.type) or e.type in ENDINGS]
        same = [msgspec.json.encode(msgspec.to_builtins(e), order="sorted") for e in produced] == [
            msgspec.json.encode(e.data, order="sorted") for e in decided
        ]
        found.append(
            Check(
                check="rules",
                ok=same,
                detail="decide re-run on the state before, with Rng(seed, "
                f"{first}), {'produces exactly' if same else 'does NOT produce'} these events",
            )
        )
        listed = legal_document(before, command.seat)
        legal = [msgspec.to_builtins(c) for c in [*listed.commands, *listed.endings]]
        # how many may depend on the seat's hidden hand: counted once the game is over
        counted = "the" if live else f"{len(legal)}"
        found.append(
            Check(
                check="listed_as_legal",
                ok=msgspec.to_builtins(decoded) in legal,
                detail=f"one of {counted} legal commands for the seat at that point",
            )
        )
    except RuleError as error:
        found.append(Check("rules", False, f"{error.code}: {error.message}"))
    return found


def rejected_before(
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


def chain_proof(events: list[StoredEvent], n: int, disclose: bool = True) -> ChainProof:
    """Event ``n``'s canonical bytes and link (its canonical bytes only when ``disclose``: they
    hold the event's unredacted data). Its place in the whole stream is the dispute file's
    ``inclusion`` proof, not every later link."""
    event = events[n - 1]
    body = canonical_of(event)
    recomputed = link(bytes(event.prev_hash), body)
    return ChainProof(
        construction="hash_n = SHA-256(hash_{n-1} || canonical(event n)); hash_0 = 0^32",
        canonical=body.decode() if disclose else None,
        prev_hash=bytes(event.prev_hash).hex(),
        hash=bytes(event.hash).hex(),
        recomputed=recomputed.hex(),
        ok=recomputed == bytes(event.hash),
    )


#: Trees kept per process (about 100 bytes per event each): the most recently disputed games.
CACHED_GAMES = 64
#: Trees of fewer leaves are rebuilt on each request rather than cached (well under 1 ms).
CACHE_FROM = 256


class TreeCache:
    """Each recently disputed game's Merkle tree, extended as the game grows."""

    def __init__(self, games: int = CACHED_GAMES) -> None:
        self._trees: LRU[str, Tree] = LRU(games)

    def tree(self, game_id: str, hashes: Sequence[bytes]) -> Tree:
        """The tree over ``hashes`` (the game's chain hashes, in version order)."""
        if len(hashes) < CACHE_FROM:
            return Tree(hashes)
        cached = self._trees.get(game_id)
        # Each chain hash binds every event before it: the same last leaf, the same prefix.
        if (
            cached is not None
            and 0 < cached.size <= len(hashes)
            and cached.levels[0][cached.size - 1] == leaf_hash(hashes[cached.size - 1])
        ):
            cached.extend(hashes[cached.size :])
            return cached
        tree = Tree(hashes)
        if cached is None or cached.size <= tree.size:  # keep a longer one (this read is older)
            self._trees.put(game_id, tree)
        return tree
