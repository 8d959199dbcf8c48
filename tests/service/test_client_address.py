"""Who counts as one client for the quotas and the refusals' storage budget (review of issue
25): an IPv6 client by its /64, an IPv4-mapped address as the IPv4 address it is."""

from __future__ import annotations

from typing import Any

from service.eventstore.rejections import Budget
from service.http.limits import Quotas, address_key, client_of


def scope(host: str) -> dict[str, Any]:
    return {"type": "http", "headers": [], "client": (host, 40000)}


def test_an_ipv6_client_is_its_64() -> None:
    """One machine can take a fresh address in its /64 per request (privacy extensions do it
    unasked): each used to be a fresh quota bucket and a fresh refusal budget, as a forged
    X-Forwarded-For was."""
    assert address_key("2001:db8:1:2::1") == address_key("2001:db8:1:2:ffff:1:2:3")
    assert address_key("2001:DB8:1:2::9") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("::ffff:192.0.2.7") == address_key("192.0.2.7") == "192.0.2.7"
    assert address_key("192.0.2.7") != address_key("192.0.2.8")
    assert address_key("not-an-ip") == "not-an-ip"


def test_a_quota_is_not_renewed_by_a_new_address_in_the_same_64() -> None:
    quotas = Quotas({"create": 3}, clock=lambda: 0.0)
    known = lambda _scope, _token: False  # noqa: E731
    answers = [
        quotas.take("create", client_of(scope(f"2001:db8:1:2::{i:x}"), False, known))
        for i in range(1, 6)
    ]
    assert answers[:3] == [None, None, None]
    assert all(wait is not None for wait in answers[3:])
    # another site is another client
    assert quotas.take("create", client_of(scope("2001:db8:9:9::1"), False, known)) is None


def test_the_refusal_budget_is_not_renewed_by_a_new_address_in_the_same_64() -> None:
    budget = Budget(per_client=2, bytes_per_minute=0, clock=lambda: 0.0)
    taken = [budget.take(address_key(f"2001:db8:1:2::{i:x}"), 100) for i in range(1, 5)]
    assert taken == [True, True, False, False]
