"""Every quota counted per seat token also has a ceiling per client address (issue 35): seat
tokens are not scarce (creating a game hands its creator one per seat), so a quota per token
alone bounded nothing. The buckets' arithmetic, in process (the whole server:
``tests/integration/test_hostile.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from service.http.limits import _BY_TOKEN, Quotas, address_of, client_of
from service.settings import Settings


def scope(host: str, token: str | None = None) -> dict[str, Any]:
    headers = [] if token is None else [(b"authorization", f"Bearer {token}".encode())]
    return {"type": "http", "headers": headers, "client": (host, 40000)}


def known(_scope: Any, token: str) -> bool:
    return token.startswith("good")


@pytest.mark.parametrize("kind", sorted(_BY_TOKEN))
def test_many_tokens_from_one_address_stop_at_its_ceiling(kind: str) -> None:
    """The issue's attack, for each kind counted by token: ten valid tokens from one address,
    each within its own quota, stop at the address's ceiling; another address goes on."""
    quotas = Quotas({kind: 5}, clock=lambda: 0.0, per_address={kind: 8})
    answers = []
    for i in range(10):
        s = scope("192.0.2.7", f"good-{i}")
        for _ in range(2):
            answers.append(quotas.take(kind, client_of(s, True, known), address_of(s)))
    assert answers[:8] == [None] * 8
    assert all(wait is not None and wait > 0 for wait in answers[8:])
    other = scope("192.0.2.8", "good-x")
    assert quotas.take(kind, client_of(other, True, known), address_of(other)) is None


def test_a_refused_request_spends_neither_bucket() -> None:
    """The token's own quota refuses first: its address's ceiling is not spent by it, so the
    address's other tokens keep their share (and back)."""
    now = [0.0]
    quotas = Quotas({"messages": 2}, clock=lambda: now[0], per_address={"messages": 4})
    a, b = scope("192.0.2.7", "good-a"), scope("192.0.2.7", "good-b")

    def take(s: dict[str, Any]) -> float | None:
        return quotas.take("messages", client_of(s, True, known), address_of(s))

    assert [take(a), take(a)] == [None, None]
    assert all(take(a) is not None for _ in range(10))  # refused by a's quota: ceiling unspent
    assert [take(b), take(b)] == [None, None]  # the ceiling's last two
    # both empty now: the wait is the longer one (b's: 1 token at 2/min; the ceiling's: 15 s)
    wait = take(b)
    assert wait is not None and wait == pytest.approx(30.0)
    # a third token, refused by the empty ceiling: its own bucket is not spent by that
    c = scope("192.0.2.7", "good-c")
    assert all(take(c) is not None for _ in range(5))
    now[0] = 15.0  # the ceiling has one token again; c's bucket is still full
    assert take(c) is None
    assert take(c) is not None  # the ceiling again
    now[0] = 45.0  # two more ceiling tokens: c's second and last of its own
    assert [take(c), take(c)] == [None, None]


def test_made_up_tokens_count_against_the_address_and_its_ceiling() -> None:
    quotas = Quotas({"commands": 3}, clock=lambda: 0.0, per_address={"commands": 100})
    answers = [
        quotas.take("commands", client_of(s, True, known), address_of(s))
        for s in (scope("192.0.2.7", f"made-up-{i}") for i in range(5))
    ]
    assert answers[:3] == [None] * 3 and all(w is not None for w in answers[3:])


def test_a_ceiling_alone_bounds_and_zero_turns_it_off() -> None:
    s = scope("192.0.2.7", "good-a")
    alone = Quotas({"queries": 0}, clock=lambda: 0.0, per_address={"queries": 2})
    assert alone.limits("queries")
    taken = [alone.take("queries", client_of(s, True, known), address_of(s)) for _ in range(3)]
    assert taken[:2] == [None, None] and taken[2] is not None
    off = Quotas({"queries": 0}, clock=lambda: 0.0, per_address={"queries": 0})
    assert not off.limits("queries")


def test_each_quota_by_token_has_a_ceiling_setting_with_its_default() -> None:
    """Every kind counted by token has its ``MANIFEST_QUOTA_<KIND>_PER_ADDRESS``, a few tokens'
    worth by default."""
    s = Settings()
    ceilings = {kind: getattr(s, f"quota_{kind}_per_address") for kind in _BY_TOKEN}
    assert ceilings == {"commands": 4800, "messages": 120, "queries": 480, "streams": 480}
    for kind, ceiling in ceilings.items():
        assert ceiling > getattr(s, f"quota_{kind}")  # more than one token's quota ...
        assert ceiling <= 4 * getattr(s, f"quota_{kind}")  # ... and a few tokens' at most
    env = Settings.from_env({"MANIFEST_QUOTA_MESSAGES_PER_ADDRESS": "7"})
    assert env.quota_messages_per_address == 7
