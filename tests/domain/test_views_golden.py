"""The wire JSON of views is the same bytes as before views were typed (issue 26): every part
of every event of a few seeded bot games (``golden.py`` says which, and how to re-write them
after a deliberate change) against ``views_golden.json``. A failure lists every event and part
that differs, and shows the bytes the code writes now for the first few."""

from __future__ import annotations

import json

import pytest

from .golden import DIGITS, GOLDEN, RUNS, digest, key, part_names, parts

SHOWN = 3  # differing parts whose bytes a failure prints


@pytest.mark.parametrize("run", RUNS, ids=key)
def test_the_wire_json_of_views_is_unchanged(run: tuple[str, int, int]) -> None:
    expected = json.loads(GOLDEN.read_text())[key(run)]
    got = parts(*run)
    assert len(got) == len(expected), (
        f"the bot game took another course: {len(got)} events, {len(expected)} recorded"
    )
    names = part_names(run[2])
    differ: list[tuple[int, str, bytes]] = []
    for number, (event, recorded) in enumerate(zip(got, expected, strict=True), start=1):
        assert len(recorded) == DIGITS * len(names) == DIGITS * len(event), number
        for i, part in enumerate(event):
            if digest(part) != recorded[i * DIGITS : (i + 1) * DIGITS]:
                differ.append((number, names[i], part))
    if differ:
        lines = [f"{len(differ)} parts differ, in {len({n for n, _, _ in differ})} events:"]
        lines += [f"  event {n}: {name}" for n, name, _ in differ]
        lines += [
            f"the code now writes for event {n}, {name}:\n  {part.decode()}"
            for n, name, part in differ[:SHOWN]
        ]
        pytest.fail("\n".join(lines), pytrace=False)


def test_a_changed_part_is_named() -> None:
    """The comparison names the event and the part: a digest of other bytes differs."""
    run = RUNS[2]  # the shortest game
    event = parts(*run)[0]
    recorded = json.loads(GOLDEN.read_text())[key(run)][0]
    assert [digest(p) for p in event] == [
        recorded[i * DIGITS : (i + 1) * DIGITS] for i in range(len(event))
    ]
    assert digest(event[0].replace(b'"status"', b'"state"')) != recorded[:DIGITS]
    assert len(part_names(run[2])) == len(event)
