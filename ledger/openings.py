"""The commitments check of an audit (canonical form 2, :mod:`ledger.chain`):
every hidden value in the clear opens its commitment in the chained (public) form — with the
salt recomputed from the seed (``HMAC-SHA256(seed, b"hide" ‖ u64be(version) ‖ path)``,
:mod:`domain.kernel.hidden`) for a game's values, or a given opening's salt (a private message,
for its addressees); the clear data equals the public form everywhere else; and, with the seed,
every value the game declares hidden (``Game.hidden``) is committed in the public form, not
chained in the clear. Values still sealed (a live game without its seed; private messages of
others) are counted."""

from __future__ import annotations

from typing import Any

from domain.kernel import CommandError
from domain.kernel.hidden import COMMITMENT, Path, commitment, get_at, is_sealed, salt, set_at
from domain.registry import get_game
from ledger.commitments import CANONICAL, MESSAGE, secrets_of
from ledger.evidence import Case, canon
from ledger.records import StoredEvent


def check_commitments(case: Case) -> dict[str, Any]:
    form = case.canonical_form()
    out: dict[str, Any] = {"canonical": form, "opened": 0, "sealed": 0}
    if form < CANONICAL or not case.events:
        out["ok"] = None
        return out
    seed = case.adjudication_seed()
    seed = seed if seed is not None and len(seed) == 32 else None
    try:
        rules = get_game(str(case.events[0].data.get("game")))
    except Exception:
        rules = None
    first_bad: int | None = None
    for event in case.events:
        try:
            finding = _commitments_of(case, rules, event, seed, out)
        except (CommandError, ValueError, KeyError, IndexError, TypeError) as error:
            finding = ("commitment.unreadable", f"the hidden values do not read: {error}")
        if finding is not None:
            case.problem(event.version, "commitments", *finding)
            first_bad = event.version if first_bad is None else first_bad
    out["ok"] = first_bad is None
    out["first_bad"] = first_bad
    return out


def _salt(case: Case, event: StoredEvent, path: Path, seed: bytes | None) -> bytes | None:
    given = case.openings.get((event.version, path))
    if given is not None:
        return bytes.fromhex(given)
    key = case.message_key if event.type == MESSAGE else seed
    return None if key is None else salt(key, event.version, path)


def _commitments_of(
    case: Case, rules: Any, event: StoredEvent, seed: bytes | None, out: dict[str, Any]
) -> tuple[str, str] | None:
    """Why ``event``'s hidden values do not open their commitments (None if they do)."""
    public = event.public
    marks = [] if public is None else sealed_paths(public)
    data = event.data
    opened = 0
    for path in marks:
        value, mark = get_at(data, path), get_at(public, path)
        if is_sealed(value):
            if value != mark:
                return "commitment.mismatch", f"{list(path)}: two different commitments"
            out["sealed"] += 1
            continue
        key = _salt(case, event, path, seed)
        if key is None:
            out["sealed"] += 1  # in the clear, but no salt to check it with
            continue
        if commitment(key, value) != mark[COMMITMENT]:
            return "commitment.mismatch", f"{list(path)}: the value does not open it"
        opened += 1
    out["opened"] += opened
    rebuilt = data
    for path in marks:
        rebuilt = set_at(rebuilt, path, get_at(public, path))
    if public is not None and canon(rebuilt) != canon(public):
        return "commitment.mismatch", "the data differs from its chained form"
    if opened == len(marks) and rules is not None:  # every hidden value in the clear
        declared = {s.path for s in secrets_of(rules, event.type, data)}
        if declared != set(marks):
            return (
                "commitment.missing",
                "the chained form does not commit exactly the values declared hidden",
            )
    return None


def sealed_paths(value: Any, path: Path = ()) -> list[Path]:
    """The paths of every commitment in a public form."""
    if is_sealed(value):
        return [path]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in sealed_paths(v, (*path, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in sealed_paths(v, (*path, i))]
    return []
