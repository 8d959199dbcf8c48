"""What a move costs before any I/O: the pure work of one accepted CARGO command, in process.

    .venv/bin/python -m bench.move_work [--moves 3000] [--seed 1]

Plays 2-player CARGO games with random crate placement the way ``bench.e2e``'s bots do (the seat
to act sends a uniformly random legal command) and times, per move, exactly the functions the
server runs for an accepted command besides HTTP, PostgreSQL and Redis: decoding the command,
``ledger.ruling.rule`` (decide, fold, seed reveal, outcome, the mover's legal
commands), the hash chain (``ledger.chain.chain_events``), the recorded answer
(``accepted_answer``: redacted events and the Ed25519 receipt), what the write path stores in
the projection (``projections.projector.state_fields``: the table, the mover's legal commands
and those of the seats to act next; every other view is built when first read,
:mod:`projections.views`) and encoding the answer.

Beside it, not counted in the total, ``us_every_view`` times what the write path built before
lazy views (``table_fields``: every viewer's document and every seat's legal commands as
well), on the same tables in the same run, for the before/after ratio.

``bench.e2e`` runs it after its two phases to bound its ratio: a move takes ``r`` requests and
this pure work ``p``; even if each request cost no more than a ceiling request (``c`` seconds of
server CPU), moves/s ÷ ceiling req/s could not exceed ``1 / (r + p / c)``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import msgspec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from domain.jolly_cargo import JOLLY_CARGO
from domain.jolly_cargo.options import Options
from domain.kernel import LocalGame as Played
from domain.platform.table import Table
from ledger.chain import ZERO_HASH, chain_events
from ledger.commitments import CANONICAL
from ledger.receipts import Signer
from ledger.records import NewEvent
from ledger.ruling import accepted_answer, legal_bytes, rule
from projections.projector import state_fields, state_views, table_fields

PARTS = ("decode", "rule", "chain", "answer", "projection", "encode")


def _new_table(seed: bytes) -> Table:
    """A 2-player game with random crates, as just started (set-up still to play)."""
    played = Played.new(JOLLY_CARGO, seed, 2, Options(crate_placement="random"))
    return Table(
        game_id=str(uuid.UUID(bytes=seed[:16])),
        game=JOLLY_CARGO.id,
        seats=2,
        options=msgspec.to_builtins(Options(crate_placement="random")),
        version=3 + len(played.events),  # lobby.created and two joins came first
        status="active",
        names=["bot 0", "bot 1"],
        messages=[],
        state=played.state,
        canonical=CANONICAL,
    )


def measure(moves: int = 3000, seed: int = 1) -> dict[str, Any]:
    """Seconds of pure work per move, in total and by part, over ``moves`` moves."""
    chooser = random.Random(seed)
    signer = Signer(Ed25519PrivateKey.generate())
    encoder = msgspec.json.Encoder()
    spent = dict.fromkeys(PARTS, 0.0)
    every_view = 0.0
    done = games = 0
    table = None
    head = ZERO_HASH
    clock = time.perf_counter
    while done < moves:
        if table is None or table.status != "active":
            games += 1
            table = _new_table(hashlib.sha256(f"move_work/{seed}/{games}".encode()).digest())
        state = table.state
        mover = JOLLY_CARGO.to_act(state)[0]
        raw = msgspec.to_builtins(chooser.choice(JOLLY_CARGO.legal(state, mover)))
        game_seed = hashlib.sha256(table.game_id.encode()).digest()

        t0 = clock()
        command = JOLLY_CARGO.decode_command(raw)
        t1 = clock()
        ruling = rule(table, mover, command, game_seed)
        t2 = clock()
        new = ruling.table
        events = [NewEvent(p.type, p.data, p.public) for p in ruling.pending]
        stored = chain_events(
            table.game_id, table.version, head, events, mover, str(uuid.uuid4()), datetime.now(UTC)
        )
        t3 = clock()
        answer = accepted_answer(signer, new, mover, stored)
        t4 = clock()
        known = {f"legal:{mover}": legal_bytes(ruling), "table": ruling.table_json}
        state_fields(new, state_views(new, known), ruling.table_json)
        t5 = clock()
        to_act = JOLLY_CARGO.to_act(new.state) if new.status == "active" else []
        encoder.encode(answer.answer(to_act, ruling.legal))
        t6 = clock()

        every_view -= clock()
        table_fields(new, known)
        every_view += clock()
        marks = (t0, t1, t2, t3, t4, t5, t6)
        for part, start, end in zip(PARTS, marks[:-1], marks[1:], strict=True):
            spent[part] += end - start
        table, head = new, stored[-1].hash
        done += 1
    total = sum(spent.values())
    return {
        "moves": done,
        "games": games,
        "seconds_per_move": total / done,
        "us_per_move": round(total / done * 1e6, 1),
        "us_by_part": {part: round(s / done * 1e6, 1) for part, s in spent.items()},
        "us_every_view": round(every_view / done * 1e6, 1),
        "us_per_move_every_view": round((total - spent["projection"] + every_view) / done * 1e6, 1),
    }


def ratio_bound(requests_per_move: float, pure_s: float, ceiling_s: float) -> float:
    """The best moves/s ÷ ceiling req/s possible if every request cost what a ceiling request
    costs (``ceiling_s`` seconds of server CPU) and a move added only its pure work."""
    return 1.0 / (requests_per_move + pure_s / ceiling_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(json.dumps(measure(args.moves, args.seed), indent=2))


if __name__ == "__main__":
    main()
