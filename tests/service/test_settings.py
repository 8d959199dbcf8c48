"""Settings are read once, validated, and a bad value stops the start with a clear message."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from service.settings import SPECS, Settings, SettingsError

ROOT = Path(__file__).resolve().parents[2]


def test_defaults_are_written_once_and_match_an_empty_environment() -> None:
    assert Settings.from_env({}) == Settings()
    s = Settings()
    assert (s.pg_pool, s.catchup_seconds, s.game_writers, s.redis_timeout) == (20, 5.0, 8, 1.0)
    assert (s.pg_lock_timeout, s.pg_statement_timeout, s.pg_acquire_timeout) == (2.0, 5.0, 2.0)


def test_values_are_parsed() -> None:
    s = Settings.from_env(
        {
            "MANIFEST_PG_POOL": "7",
            "MANIFEST_CATCHUP_SECONDS": "0.5",
            "MANIFEST_ACCESS_LOG": "off",
            "MANIFEST_LOG_LEVEL": "WARNING",
            "MANIFEST_GAME_WRITERS": "2",
            "MANIFEST_REDIS_TIMEOUT": "0.25",
            "PG_DSN": "",  # empty = unset
        }
    )
    assert (s.pg_pool, s.catchup_seconds, s.access_log, s.log_level) == (7, 0.5, False, "warning")
    assert (s.game_writers, s.redis_timeout, s.pg_dsn) == (2, 0.25, None)


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("MANIFEST_PG_POOL", "1", "between 2 and 1000"),
        ("MANIFEST_PG_POOL", "2O", "whole number"),
        ("MANIFEST_CATCHUP_SECONDS", "0", "between 0.1 and 3600"),
        ("MANIFEST_CATCHUP_SECONDS", "nan", "between"),
        ("MANIFEST_CATCHUP_SECONDS", "soon", "number of seconds"),
        ("MANIFEST_MAX_BODY", "-5", "between"),
        ("MANIFEST_ACCESS_LOG", "maybe", "must be one of"),
        ("MANIFEST_LOG_LEVEL", "loud", "must be one of"),
        ("MANIFEST_GAME_WRITERS", "0", "between 1"),
        ("MANIFEST_PG_LOCK_TIMEOUT", "-1", "between"),
        ("MANIFEST_REDIS_TIMEOUT", "inf", "between"),
        ("MANIFEST_REDIS_PREFIX", "a b", "without spaces"),
    ],
)
def test_a_bad_value_names_the_variable(name: str, value: str, says: str) -> None:
    with pytest.raises(SettingsError, match=name) as caught:
        Settings.from_env({name: value})
    assert says in str(caught.value)


def test_the_seat_reserve_of_live_streams_leaves_room_for_spectators() -> None:
    s = Settings()
    assert (s.streams_per_client, s.streams_per_process, s.streams_seat_reserve) == (16, 1000, 200)
    with pytest.raises(SettingsError, match="MANIFEST_STREAMS_SEAT_RESERVE"):
        Settings.from_env(
            {"MANIFEST_STREAMS_PER_PROCESS": "10", "MANIFEST_STREAMS_SEAT_RESERVE": "10"}
        )
    ok = Settings.from_env(
        {"MANIFEST_STREAMS_PER_PROCESS": "10", "MANIFEST_STREAMS_SEAT_RESERVE": "9"}
    )
    assert (ok.streams_per_process, ok.streams_seat_reserve) == (10, 9)


def test_every_setting_has_a_variable_and_is_in_the_configuration_page() -> None:
    page = (ROOT / "docs" / "configuration.md").read_text()
    for field, (variable, _, _) in SPECS.items():
        assert f"`{variable}`" in page, f"{variable} ({field}) is not in docs/configuration.md"
    assert set(SPECS) == set(Settings.__struct_fields__)


#: Our packages that run in the server (``domain`` has no I/O at all).
PACKAGES = ("service", "projections", "infra")


def _lines(pattern: str) -> list[str]:
    found = re.compile(pattern)
    return [
        f"{path.relative_to(ROOT)}:{n}"
        for top in PACKAGES
        for path in sorted((ROOT / top).rglob("*.py"))
        if path.name != "settings.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if found.search(line)
    ]


def test_nothing_else_reads_the_environment() -> None:
    """Only :mod:`service.settings` reads variables; every other module gets values."""
    reads = r"os\.environ\.get|os\.getenv|getenv\(|os\.environ\[[^\]]+\](?!\s*=)|environ\.copy"
    assert _lines(reads) == []


def test_settings_are_not_passed_on_through_the_environment() -> None:
    """Settings reach the app and its workers as values (``service.cli``: the app factory's
    argument); the one variable written is prometheus_client's multiprocess directory, read by
    that library when a worker imports it (``service.workers.multiprocess_metrics``)."""
    writes = _lines(r"os\.environ\[[^\]]+\]\s*=[^=]|os\.putenv|environ\.(update|setdefault)\(")
    assert writes == ["service/workers.py:136"]


#: Run in a fresh interpreter: import every module of ours, recording each read of the
#: environment made by our code (the innermost caller past ``os`` and the mapping methods is
#: one of our modules; a library reading its own variables when we import it is its affair).
_IMPORT_ALL = r"""
import _collections_abc, importlib, os, pkgutil, sys, traceback
root = sys.argv[1]
ours = tuple(os.path.join(root, top) + os.sep for top in ("service", "projections", "infra"))
plumbing = {os.__file__, _collections_abc.__file__}
reads = []

class Watched(type(os.environ)):
    def __getitem__(self, key):
        stack = traceback.extract_stack()[:-1]
        callers = [f for f in stack if f.filename not in plumbing and f.filename[:1] != "<"]
        if callers and callers[-1].filename.startswith(ours):
            reads.append(f"{key} read at {callers[-1].filename}:{callers[-1].lineno}")
        return super().__getitem__(key)

os.environ.__class__ = Watched
for top in ("infra", "projections", "service"):
    package = importlib.import_module(top)
    for info in pkgutil.walk_packages(package.__path__, top + "."):
        importlib.import_module(info.name)
print("\n".join(reads))
"""


def test_no_module_reads_the_configuration_when_imported() -> None:
    """Configuration is read once, at start (``Settings.from_env`` in the CLI or the app
    factory), never when a module is imported: importing every module of ``service``,
    ``projections`` and ``infra`` reads no variable through our code. (The header bound was
    read at import by the HTTP protocol class's body; this test failed on it.)"""
    env = {"PATH": "/usr/bin:/bin", "MANIFEST_MAX_HEADER_BYTES": "4096", "PG_DSN": "x"}
    result = subprocess.run(
        [sys.executable, "-c", _IMPORT_ALL, str(ROOT)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == ""


def test_the_import_check_can_fail() -> None:
    """The watcher above sees a read made through our code while a module is imported."""
    script = _IMPORT_ALL.replace(
        "os.environ.__class__ = Watched\n",
        "os.environ.__class__ = Watched\nimport service.settings\n"
        "service.settings.Settings.from_env()\n",
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(ROOT)],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "service/settings.py" in result.stdout


def test_a_bad_setting_stops_manifest_serve_with_the_message() -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "MANIFEST_PG_POOL": "1",
        "PG_DSN": "postgresql://x@127.0.0.1:1/x",
    }
    result = subprocess.run(
        [sys.executable, "-m", "service.cli", "serve"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "MANIFEST_PG_POOL must be between 2 and 1000, not 1" in result.stderr


def test_trusted_proxies_are_addresses_and_networks_and_none_by_default() -> None:
    from service.workers import proxy_options

    assert Settings().trusted_proxies == ()
    assert proxy_options(()) == {"proxy_headers": False}  # uvicorn's own default trusts 127.0.0.1
    s = Settings.from_env({"MANIFEST_TRUSTED_PROXIES": " 10.1.2.3/8, 127.0.0.1,,::1 ,fd00::/8"})
    assert s.trusted_proxies == ("10.0.0.0/8", "127.0.0.1", "::1", "fd00::/8")
    assert proxy_options(s.trusted_proxies) == {
        "proxy_headers": True,
        "forwarded_allow_ips": [
            "10.0.0.0/8",
            "127.0.0.1",
            "::1",
            "fd00::/8",
            "::ffff:a00:0/104",  # the IPv4 ones as an IPv6 socket sees them
            "::ffff:7f00:1/128",
        ],
    }
    for bad in ("*", "localhost", "10.0.0.0/33", "127.0.0.1 10.0.0.1", "300.1.1.1"):
        with pytest.raises(SettingsError, match="MANIFEST_TRUSTED_PROXIES"):
            Settings.from_env({"MANIFEST_TRUSTED_PROXIES": bad})


def test_an_ipv4_proxy_is_trusted_also_as_an_ipv6_socket_sees_it() -> None:
    """Review of issue 25: a server listening on ``::`` sees the proxy 127.0.0.1 as
    ``::ffff:127.0.0.1``, which uvicorn did not count as 127.0.0.1: named in
    MANIFEST_TRUSTED_PROXIES, the proxy was still not believed."""
    from uvicorn.middleware.proxy_headers import _TrustedHosts

    from service.workers import proxy_options

    trusted = _TrustedHosts(proxy_options(("10.0.0.0/8", "127.0.0.1"))["forwarded_allow_ips"])
    for peer in ("127.0.0.1", "::ffff:127.0.0.1", "10.9.8.7", "::ffff:10.9.8.7"):
        assert peer in trusted, peer
    for peer in ("127.0.0.2", "::ffff:127.0.0.2", "11.0.0.1", "::ffff:11.0.0.1", "::1"):
        assert peer not in trusted, peer


def test_seats_streams_per_address_has_a_default_and_a_floor() -> None:
    assert Settings().streams_seats_per_address == 64
    with pytest.raises(SettingsError, match="MANIFEST_STREAMS_SEATS_PER_ADDRESS"):
        Settings.from_env({"MANIFEST_STREAMS_SEATS_PER_ADDRESS": "0"})
