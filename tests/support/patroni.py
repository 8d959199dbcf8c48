"""A real highly available PostgreSQL for the failover tests and bench: three PostgreSQL 15
instances managed by Patroni, with one etcd as Patroni's store, all on loopback in a temporary
directory (the Debian packages ``patroni`` and ``etcd-server``; ``scripts/test`` installs them).

Configuration (the same choices as ``deploy/compose.yaml``'s ``ha`` profile, explained in
docs/operations.md, "PostgreSQL failover"):

- ``synchronous_mode: true`` and ``synchronous_mode_strict: true``: a commit returns only once
  the synchronous standby has it, and a primary left without any standby accepts no commit at all
  rather than acknowledging writes that live on one server;
- ``use_pg_rewind: true`` (with ``wal_log_hints``): a demoted primary rejoins as a replica;
- ``primary_start_timeout: 0``: a primary whose PostgreSQL dies is failed over at once, not
  restarted in place for five minutes;
- ``ttl`` 10 s, ``loop_wait`` 1 s, ``retry_timeout`` 4 s: a frozen primary loses its leader key
  within ~10 s;
- Patroni talks to etcd's v2 API (``etcd:``, etcd started with ``--enable-v2``): Patroni 3.0.2's
  ``etcd3:`` client can hand the leader key back to a frozen primary that wakes up.

PostgreSQL refuses to run as root, so as root Patroni runs as the ``postgres`` user. Nothing here
imports project code. ``fsync`` is off by default (the faults here kill processes, not hosts;
the page cache survives them); the bench turns it on. ``MANIFEST_PATRONI_KEEP_LOGS=DIR`` keeps
every member's Patroni and PostgreSQL logs in DIR when the cluster is closed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .servers import (
    PG_SUPERUSER,
    PG_TEST_DB,
    ServerUnavailable,
    _as_pg_user,
    _is_root,
    _postmaster_pid,
    _tail,
    free_port,
    pg_bindir,
)

SCOPE = "manifest"
TTL = 10
LOOP_WAIT = 1
RETRY_TIMEOUT = 4
BOOT_TIMEOUT_S = 120.0


def patroni_available() -> str | None:
    """Why the cluster cannot be started here, or None when it can."""
    if pg_bindir() is None:
        return "PostgreSQL 15 binaries not found"
    for binary, package in (("patroni", "patroni"), ("etcd", "etcd-server")):
        if shutil.which(binary) is None:
            return f"{binary} not found on PATH (Debian package {package})"
    if _is_root() and shutil.which("runuser") is None:
        return "running as root but `runuser` is missing"
    return None


def _children(pid: int) -> list[int]:
    """Every live process whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _signal_all(pids: list[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, sig)


def _get_json(url: str, timeout: float = 2.0) -> tuple[int, Any]:
    """(status, JSON body) of a GET; (0, None) when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as error:
        try:
            return error.code, json.loads(error.read() or b"null")
        except ValueError:
            return error.code, None
    except (OSError, ValueError):
        return 0, None


class Node:
    """One Patroni member: its Patroni process and the PostgreSQL it manages."""

    def __init__(self, cluster: PatroniCluster, index: int) -> None:
        self.cluster = cluster
        self.name = f"pg{index}"
        self.dir = cluster.dir / self.name
        self.data = self.dir / "data"
        self.pg_port = free_port()
        self.api_port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.paused: list[int] = []
        self.config = self.dir / "patroni.yml"

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    @property
    def dsn(self) -> str:
        """This one server (whatever its role)."""
        return f"postgresql://{PG_SUPERUSER}@127.0.0.1:{self.pg_port}/{PG_TEST_DB}"

    def write_config(self) -> None:
        c = self.cluster
        self.dir.mkdir(parents=True, exist_ok=True)
        config = {
            "scope": SCOPE,
            "name": self.name,
            "log": {"level": "INFO", "dir": str(self.dir), "file_num": 2},
            "restapi": {
                "listen": f"127.0.0.1:{self.api_port}",
                "connect_address": f"127.0.0.1:{self.api_port}",
            },
            # etcd's v2 API, not `etcd3`: Debian 12's Patroni 3.0.2 renews a lost leader key in
            # etcd3 with an unconditional put, so a frozen primary that wakes takes the key back
            # from its successor (seen in bench/failover.py; fixed in Patroni 3.0.3). Its v2
            # client renews with a compare-and-swap on the member's name.
            "etcd": {"hosts": [f"127.0.0.1:{c.etcd_port}"]},
            "bootstrap": {
                "dcs": {
                    "ttl": TTL,
                    "loop_wait": LOOP_WAIT,
                    "retry_timeout": RETRY_TIMEOUT,
                    "maximum_lag_on_failover": 1 << 20,
                    "primary_start_timeout": 0,
                    "synchronous_mode": c.synchronous,
                    "synchronous_mode_strict": c.synchronous and c.strict,
                    "postgresql": {
                        "use_pg_rewind": True,
                        "use_slots": True,
                        "parameters": {
                            "wal_log_hints": "on",
                            "max_connections": 200,
                            "max_wal_senders": 10,
                            "max_replication_slots": 10,
                            "wal_keep_size": "128MB",
                            "hot_standby": "on",
                            "fsync": "on" if c.fsync else "off",
                            "full_page_writes": "on",
                        },
                    },
                },
                "initdb": [{"encoding": "UTF8"}, {"locale": "C"}],
            },
            "postgresql": {
                "listen": f"127.0.0.1:{self.pg_port}",
                "connect_address": f"127.0.0.1:{self.pg_port}",
                "data_dir": str(self.data),
                "bin_dir": str(c.bindir),
                "pgpass": str(self.dir / "pgpass"),
                "authentication": {
                    "superuser": {"username": PG_SUPERUSER},
                    "replication": {"username": PG_SUPERUSER},
                    "rewind": {"username": PG_SUPERUSER},
                },
                "parameters": {"unix_socket_directories": str(self.dir)},
                "pg_hba": [
                    "local all all trust",
                    "host all all 127.0.0.1/32 trust",
                    "host replication all 127.0.0.1/32 trust",
                ],
            },
            "tags": {"nofailover": False, "noloadbalance": False},
        }
        self.config.write_text(json.dumps(config, indent=1))  # JSON is YAML
        if _is_root():
            for path in (self.dir, self.config):
                shutil.chown(path, PG_SUPERUSER, PG_SUPERUSER)

    # --- processes ----------------------------------------------------------------------------
    def start(self) -> None:
        log = (self.dir / "patroni.out").open("ab")
        self.proc = subprocess.Popen(
            _as_pg_user([self.cluster.patroni, str(self.config)]),
            cwd=self.dir,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()

    def patroni_pids(self) -> list[int]:
        """Patroni itself (as root: the child of ``runuser``), and its helper children that are
        not PostgreSQL."""
        if self.proc is None or self.proc.poll() is not None:
            return []
        top = self.proc.pid
        pids = [top, *_children(top)] if _is_root() else [top]
        postmaster = _postmaster_pid(self.data)
        return [p for p in pids if p != postmaster]

    def postgres_pids(self) -> list[int]:
        """The postmaster and every process it started."""
        postmaster = _postmaster_pid(self.data)
        if postmaster is None or not Path(f"/proc/{postmaster}").exists():
            return []
        return [postmaster, *_children(postmaster)]

    def kill_postgres(self) -> None:
        """SIGKILL to the postmaster and every backend at once (PostgreSQL crashes; Patroni
        lives on and sees it)."""
        _signal_all(self.postgres_pids(), signal.SIGKILL)

    def pause(self) -> None:
        """SIGSTOP to Patroni and PostgreSQL (a frozen host): connections stay open, nothing
        answers, the leader key is not renewed."""
        self.paused = [*self.patroni_pids(), *self.postgres_pids()]
        _signal_all(self.paused, signal.SIGSTOP)

    def resume(self) -> None:
        _signal_all(self.paused, signal.SIGCONT)
        self.paused = []

    def stop(self) -> None:
        """Patroni stops its PostgreSQL (fast shutdown), then exits."""
        self.resume()
        if self.proc is None or self.proc.poll() is not None:
            return
        top = self.patroni_pids()
        _signal_all(top[1:] if _is_root() else top, signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            _signal_all([*self.patroni_pids(), *self.postgres_pids()], signal.SIGKILL)
            self.proc.kill()
            self.proc.wait()
        _signal_all(self.postgres_pids(), signal.SIGKILL)

    # --- state --------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """Patroni's ``GET /patroni`` of this node ({} when it does not answer)."""
        _, body = _get_json(f"{self.api}/patroni")
        return body if isinstance(body, dict) else {}

    def log_tail(self, lines: int = 40) -> str:
        logs = [*sorted(self.dir.glob("patroni.log*")), self.dir / "patroni.out"]
        return "\n".join(f"--- {p.name}\n{_tail(p, lines)}" for p in logs if p.exists())


class PatroniCluster:
    """etcd plus ``nodes`` Patroni members; :attr:`dsn` is the multi-host DSN the service uses
    (``target_session_attrs=read-write``: the one that takes writes)."""

    def __init__(
        self,
        nodes: int = 3,
        *,
        synchronous: bool = True,
        strict: bool = True,
        fsync: bool = False,
    ) -> None:
        missing = patroni_available()
        if missing is not None:
            raise ServerUnavailable(missing)
        bindir = pg_bindir()
        assert bindir is not None
        self.bindir = bindir
        self.patroni = shutil.which("patroni") or "patroni"
        self.synchronous = synchronous
        self.strict = strict
        self.fsync = fsync
        self.dir = Path(tempfile.mkdtemp(prefix="manifest-patroni-"))
        if _is_root():
            shutil.chown(self.dir, PG_SUPERUSER, PG_SUPERUSER)
        # etcd on tmpfs when there is one: its fsyncs then cost nothing on a loaded machine
        shm = Path("/dev/shm")
        self.etcd_dir = Path(
            tempfile.mkdtemp(prefix="manifest-etcd-", dir=shm if shm.is_dir() else None)
        )
        self.etcd_port = free_port()
        self.etcd_peer_port = free_port()
        self.etcd: subprocess.Popen[bytes] | None = None
        self.nodes = [Node(self, i) for i in range(nodes)]

    @property
    def dsn(self) -> str:
        return self.dsn_from(self.nodes[0])

    def dsn_from(self, first: Node) -> str:
        """The multi-host DSN naming ``first`` first (then the others in order)."""
        order = [first, *(n for n in self.nodes if n is not first)]
        hosts = ",".join(f"127.0.0.1:{n.pg_port}" for n in order)
        return f"postgresql://{PG_SUPERUSER}@{hosts}/{PG_TEST_DB}?target_session_attrs=read-write"

    def start(self) -> PatroniCluster:
        try:
            self._start_etcd()
            for node in self.nodes:
                node.write_config()
            self.nodes[0].start()  # the first bootstraps; the others clone it
            self.wait_for_leader(BOOT_TIMEOUT_S)
            for node in self.nodes[1:]:
                node.start()
            # after the standbys: in strict synchronous mode a lone primary commits nothing
            self.wait_healthy(BOOT_TIMEOUT_S)
            leader = self.leader()
            assert leader is not None
            self._create_database(leader)
        except BaseException:
            self.close()
            raise
        return self

    def _start_etcd(self) -> None:
        etcd = shutil.which("etcd") or "etcd"
        peer = f"http://127.0.0.1:{self.etcd_peer_port}"
        client = f"http://127.0.0.1:{self.etcd_port}"
        log = (self.etcd_dir / "etcd.log").open("ab")
        self.etcd = subprocess.Popen(
            [
                etcd,
                *("--name", "etcd0", "--data-dir", str(self.etcd_dir / "data")),
                *("--listen-client-urls", client, "--advertise-client-urls", client),
                *("--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer),
                *("--initial-cluster", f"etcd0={peer}", "--initial-cluster-state", "new"),
                *("--log-level", "warn", "--enable-v2=true"),
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        self._wait(
            lambda: _get_json(f"{client}/health")[0] == 200,
            30,
            "etcd answers",
            lambda: _tail(self.etcd_dir / "etcd.log"),
        )

    def _create_database(self, leader: Node) -> None:
        psql = [str(self.bindir / "psql"), "-h", "127.0.0.1", "-p", str(leader.pg_port)]
        sql = f'CREATE DATABASE "{PG_TEST_DB}"'
        result = subprocess.run(
            [*psql, "-U", PG_SUPERUSER, "-d", "postgres", "-c", sql],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise ServerUnavailable(f"createdb failed: {result.stdout}{result.stderr}")

    def _setting(self, node: Node, name: str) -> str:
        """``SHOW name`` on ``node`` ('' when it does not answer)."""
        psql = [str(self.bindir / "psql"), "-h", "127.0.0.1", "-p", str(node.pg_port)]
        result = subprocess.run(
            [*psql, "-U", PG_SUPERUSER, "-d", "postgres", "-tAc", f"SHOW {name}"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
            timeout=10,
        )
        return result.stdout.strip() if result.returncode == 0 else ""

    # --- observation --------------------------------------------------------------------------
    def members(self) -> list[dict[str, Any]]:
        """``GET /cluster`` of the first node that answers (members with role, state, lag,
        timeline); [] when none does."""
        for node in self.nodes:
            if node.paused:
                continue
            status, body = _get_json(f"{node.api}/cluster")
            if status == 200 and isinstance(body, dict):
                return list(body.get("members", []))
        return []

    def node(self, name: str) -> Node:
        return next(n for n in self.nodes if n.name == name)

    def leader(self) -> Node | None:
        """The member that is leader and running, per Patroni."""
        for member in self.members():
            if member.get("role") == "leader" and member.get("state") == "running":
                return self.node(member["name"])
        return None

    def sync_standby(self) -> Node | None:
        """The synchronous standby, the one member Patroni may promote in synchronous mode."""
        for member in self.members():
            if member.get("role") == "sync_standby":
                return self.node(member["name"])
        return None

    def primaries(self) -> list[Node]:
        """Every server that answers as a writable primary itself (more than one: split
        brain)."""
        found = []
        for node in self.nodes:
            if node.paused:
                continue
            status = node.status()
            if status.get("role") in ("master", "primary") and status.get("state") == "running":
                found.append(node)
        return found

    def healthy(self) -> bool:
        """One running leader, every other member streaming from it, one synchronous standby
        (when synchronous), all on one timeline."""
        members = self.members()
        if len(members) != len(self.nodes):
            return False
        leaders = [m for m in members if m.get("role") == "leader" and m["state"] == "running"]
        if len(leaders) != 1:
            return False
        timeline = leaders[0].get("timeline")
        others = [m for m in members if m is not leaders[0]]
        if not all(
            m.get("state") in ("running", "streaming") and m.get("timeline") == timeline
            for m in others
        ):
            return False
        return not self.synchronous or any(m.get("role") == "sync_standby" for m in others)

    def wait_for_leader(self, timeout: float, other_than: Node | None = None) -> Node:
        found: list[Node] = []

        def ready() -> bool:
            leader = self.leader()
            if leader is None or leader is other_than:
                return False
            found[:] = [leader]
            return True

        self._wait(ready, timeout, "a leader is elected", self.logs)
        return found[0]

    def set_synchronous(self, on: bool, timeout: float = 60.0) -> None:
        """Switches synchronous replication (and strict mode with it) on or off in Patroni's
        dynamic configuration (``PATCH /config`` on the leader), then waits until the primary's
        ``synchronous_standby_names`` says the switch took effect and the cluster is whole."""
        leader = self.leader()
        assert leader is not None, self.members()
        body = json.dumps({"synchronous_mode": on, "synchronous_mode_strict": on}).encode()
        request = urllib.request.Request(
            f"{leader.api}/config",
            data=body,
            method="PATCH",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=5) as r:
            assert r.status == 200, r.status
        self.synchronous, self.strict = on, on

        def applied() -> bool:
            current = self.leader()
            if current is None:
                return False
            names = self._setting(current, "synchronous_standby_names")
            return bool(names) == on and self.healthy()

        self._wait(applied, timeout, f"synchronous replication is {on}", self.logs)

    def wait_healthy(self, timeout: float) -> None:
        self._wait(self.healthy, timeout, "every member is healthy", self.logs)

    def logs(self) -> str:
        return f"members: {self.members()}\n" + "\n".join(n.log_tail() for n in self.nodes)

    @staticmethod
    def _wait(
        condition: Callable[[], bool], timeout: float, what: str, tail: Callable[[], str]
    ) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise ServerUnavailable(f"timed out waiting until {what}\n{tail()}")
            time.sleep(0.2)

    def close(self) -> None:
        for node in self.nodes:
            node.resume()
        for node in self.nodes:
            node.stop()
        if self.etcd is not None and self.etcd.poll() is None:
            self.etcd.terminate()
            try:
                self.etcd.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.etcd.kill()
                self.etcd.wait()
        if keep := os.environ.get("MANIFEST_PATRONI_KEEP_LOGS"):  # for a post-mortem
            shutil.copytree(
                self.dir,
                Path(keep) / self.dir.name,
                ignore=shutil.ignore_patterns("data", ".s.PGSQL*"),
                dirs_exist_ok=True,
            )
        shutil.rmtree(self.dir, ignore_errors=True)
        shutil.rmtree(self.etcd_dir, ignore_errors=True)


@contextlib.contextmanager
def patroni_cluster(**options: Any) -> Iterator[PatroniCluster]:
    cluster = PatroniCluster(**options)
    try:
        yield cluster.start()
    finally:
        cluster.close()
