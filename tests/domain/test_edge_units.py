"""The pure parts of the HTTP edge's defences (issue 10): token buckets, JSON depth on bytes,
player names, query strings, the limits block of the settings. The same defences are attacked
over HTTP in ``tests/integration/test_hostile.py``."""

from __future__ import annotations

import pytest

from service.application.errors import ApplicationError
from service.application.names import alike, player_name
from service.http.hardening import check_body, check_query, json_depth
from service.http.limits import Quotas
from service.http.problemmap import problem_of
from service.problems import Problem
from service.settings import Settings


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_token_bucket_bursts_then_refills_per_client() -> None:
    clock = Clock()
    quotas = Quotas({"create": 3, "reads": 0}, clock=clock)
    assert [quotas.take("create", b"a") for _ in range(3)] == [None, None, None]
    wait = quotas.take("create", b"a")
    assert wait is not None and wait == pytest.approx(20.0)  # 3 per minute: one per 20 s
    assert quotas.take("create", b"b") is None  # another client has its own bucket
    clock.now += 10
    wait = quotas.take("create", b"a")
    assert wait is not None and wait == pytest.approx(10.0)
    clock.now += 10
    assert quotas.take("create", b"a") is None
    assert all(quotas.take("reads", b"a") is None for _ in range(10_000))  # 0: no quota
    clock.now += 3600
    assert [quotas.take("create", b"a") for _ in range(4)][-1] is not None  # burst capped at N


def test_buckets_are_bounded() -> None:
    quotas = Quotas({"create": 1}, clock=Clock(), max_clients=10)
    for i in range(100):
        quotas.take("create", str(i).encode())
    assert len(quotas._buckets) == 10


def test_json_depth_counts_brackets_outside_strings() -> None:
    assert json_depth(b'{"a": [1, {"b": []}]}', 32) == 4
    assert json_depth(b'["[[[[", "\\"[[[", {"k]": "}"}]', 32) == 2
    assert json_depth(b"[" * 30_000 + b"]" * 30_000, 32) == 33  # stops counting past the limit
    assert json_depth(b'"just a string"', 32) == 0


@pytest.mark.parametrize(
    "body",
    [
        b"\xff",
        b'{"a": "caf\xe9"}',
        b'{"a": "\\u0000"}',
        b'{"\\u0000": 1}',
        b'{"a": "\\ud800"}',
        b"[" * 33 + b"]" * 33,
        b'{"a": ',
        b'{"a": "x\x00y"}',  # a raw NUL: not JSON
        b'[{"a": ["\\\\", "\\u0000"]}]',  # a NUL after an escaped backslash
    ],
)
def test_bad_bodies_are_400(body: bytes) -> None:
    with pytest.raises(Problem) as caught:
        check_body(body, 32)
    assert caught.value.status == 400 and caught.value.code == "request.invalid"


def test_good_bodies_pass() -> None:
    check_body(b"[" + b"[]," * 40 + b"[]]", 32)  # many brackets, two levels
    check_body(b"[" * 32 + b"]" * 32, 32)  # exactly the limit
    check_body(b'{"a": "\\\\u0000 is six characters, not a NUL", "b": "\\u00e9"}', 32)


def test_strict_types() -> None:
    from service.application.bodies import CommandBody

    check_body(b'{"command": {"type": "x"}, "expected_version": 28}', 32, CommandBody)
    for bad in (b'"28"', b"28.0", b"-1", b"true"):
        with pytest.raises(Problem):
            check_body(b'{"command": {}, "expected_version": ' + bad + b"}", 32, CommandBody)


def test_query_strings() -> None:
    check_query(b"game=jolly-cargo&status=open&x=caf%C3%A9")
    for bad in (b"game=a%00b", b"game=%ff", b"a%00=1", b"x=%ed%a0%80"):
        with pytest.raises(Problem):
            check_query(bad)


def test_player_names() -> None:
    assert player_name("  Jose\u0301 ") == "Jos\u00e9"
    assert player_name("x" * 64) == "x" * 64
    for bad in ("", "   ", "x" * 65, "a\u0007", "\u202eevil", "a\u200bb", "a\ue000", "\u2066x"):
        with pytest.raises(ApplicationError) as refused:
            player_name(bad)
        assert refused.value.code == "lobby.bad_name" and problem_of(refused.value).status == 400
    assert alike("Ann", "ann") and alike("ann", "\uff21nn") and alike("Ann", "\uff21nn")


def test_limits_from_the_environment() -> None:
    s = Settings.from_env({"MANIFEST_QUOTA_CREATE": "5", "MANIFEST_MAX_JSON_DEPTH": "8"})
    assert (s.quota_create, s.max_json_depth, s.quota_commands) == (5, 8, 1200)
    with pytest.raises(ValueError):
        Settings.from_env({"MANIFEST_QUOTA_AUDIT": "-1"})
