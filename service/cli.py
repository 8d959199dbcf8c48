"""manifest: run the server, apply migrations, rebuild projections.

    manifest serve [--host 127.0.0.1] [--port 8000] [--workers N]
    manifest migrate
    manifest rebuild
    manifest audit GAME_ID            audit a stored game (exit 1 when a check fails)
    manifest export GAME_ID [-o FILE] the whole game as one self-contained JSON file
    manifest verify FILE              audit an exported file offline, with no database
    manifest verify-dispute FILE --keys KEYS
                                      check a dispute file (GET /audit/{n}) offline against
                                      the server's keys (a saved GET /v1/keys answer)

With no ``PG_DSN``, ``serve`` (and the others) start an embedded PostgreSQL in
``MANIFEST_DATA_DIR/postgres`` (the ``pgserver`` package) and use it, so one command works on a
fresh machine. See :mod:`service.settings` for every setting.

A mistake (an unknown game, a missing or malformed file, a port in use, a database that does
not answer) is one line on standard error, ``manifest: ...``, and an exit status of its own
(:data:`service.terminal.EXIT_CODES`), never a traceback. ``export``, ``audit``, ``verify``
and ``rebuild`` draw a progress bar (rich) on standard error when it is a terminal, and
nothing otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import msgspec
import structlog

from service.settings import Settings, SettingsError
from service.terminal import (
    EXIT_BAD_FILE,
    EXIT_CODES,
    EXIT_FILE,
    EXIT_INTERRUPTED,
    EXIT_NO_GAME,
    EXIT_PORT,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
    Bar,
    Failure,
    read_aloud,
    report,
)


class Embedded:
    """The embedded PostgreSQL this process started, if any (stopped by :meth:`stop`)."""

    server: Any = None

    @classmethod
    def stop(cls) -> None:
        if cls.server is not None:
            cls.server.cleanup()
            cls.server = None


def resolve_database(settings: Settings) -> Settings:
    """Settings with ``pg_dsn`` set, starting the embedded PostgreSQL when none is configured."""
    if settings.pg_dsn:
        return settings
    import logging
    import warnings

    directory = (settings.data_dir / "postgres").resolve()
    directory.mkdir(parents=True, exist_ok=True)
    _forget_dead_holders(directory)
    logging.getLogger("pgserver").setLevel(logging.WARNING)  # its INFO lines, at Ctrl-C too
    with warnings.catch_warnings():
        # platformdirs (under pgserver) warns that XDG_RUNTIME_DIR is unset (sudo, cron): noise
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
        import pgserver
        server: Any = pgserver.get_server(directory, cleanup_mode="stop")  # type: ignore[attr-defined]
    Embedded.server = server
    print(f"manifest: embedded PostgreSQL in {directory}", file=sys.stderr)
    return msgspec.structs.replace(settings, pg_dsn=server.get_uri())


def _forget_dead_holders(directory: Path) -> None:
    """pgserver stops its server when the last process holding it lets go, and keeps the
    holders' PIDs in a file; a holder that was killed never lets go. Forget the dead ones."""
    handles = directory / ".handle_pids.json"
    try:
        pids = json.loads(handles.read_text())
    except (OSError, ValueError):
        return
    alive = [pid for pid in pids if isinstance(pid, int) and _alive(pid)]
    if alive != pids:
        handles.write_text(json.dumps(alive))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def serve(args: argparse.Namespace) -> None:
    from service import workers

    settings = Settings.from_env()
    _check_signing_key(settings)
    settings = resolve_database(settings)
    if args.workers > 1 and not settings.redis_url:
        raise Failure(
            EXIT_USAGE,
            "several workers need REDIS_URL (in-process projections are per process)",
        )
    # uvicorn shuts down on SIGTERM, restores the handler it found and raises the signal
    # again: make that handler an orderly exit, so the embedded PostgreSQL is stopped too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    # uvicorn runs with log_level="warning" (its own lines are not structured): say here, as a
    # structured line, where the service will answer.
    from service.observability import configure_logging

    configure_logging(settings.log_level)
    url = f"http://{_url_host(args.host)}:{args.port}"

    def bound() -> None:  # the address is ours: only now say so
        structlog.get_logger("manifest").info(
            "manifest listening",
            url=url,
            viewer=f"{url}/viewer/",
            api_docs=f"{url}/schema",
            host=args.host,
            port=args.port,
            workers=args.workers,
        )

    from service.http.app import create_app
    from service.http.hardening import bounded_protocol

    try:
        with workers.multiprocess_metrics(args.workers, settings.metrics_dir) as metrics_dir:
            settings = msgspec.structs.replace(settings, metrics_dir=metrics_dir)
            workers.serve(  # several workers each listen on their own SO_REUSEPORT socket
                # the settings reach every worker as a value (pickled into a spawned one)
                functools.partial(create_app, settings),
                factory=True,
                host=args.host,
                port=args.port,
                workers=args.workers,
                bound=bound,
                log_level="warning",
                access_log=False,
                http=bounded_protocol(settings.max_header_bytes),  # httptools, bounded
                # X-Forwarded-For/-Proto count only from MANIFEST_TRUSTED_PROXIES (uvicorn's
                # default trusts 127.0.0.1: each forged value would be a quota bucket)
                **workers.proxy_options(settings.trusted_proxies),
            )
    except OSError as error:
        reason = error.strerror or str(error)
        raise Failure(EXIT_PORT, f"cannot listen on {args.host}:{args.port}: {reason}") from None


def _url_host(host: str) -> str:
    """``host`` as it goes in a URL (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _check_signing_key(settings: Settings) -> None:
    """Production without a signing key (or with a bad one) stops here, with the reason."""
    from ledger.receipts import SigningKeyMissing
    from service.eventstore.keys import check_source

    try:
        check_source(settings.signing_key, settings.signing_key_source)
    except SigningKeyMissing as error:
        print(f"manifest: {error}", file=sys.stderr)
        sys.exit(2)


async def _migrate(settings: Settings) -> list[str]:
    from service.eventstore.migrate import migrate

    if not settings.pg_dsn:
        raise RuntimeError("PG_DSN is resolved before migrating")
    return await migrate(settings.pg_dsn, settings.migrations)


async def _rebuild(settings: Settings) -> int:
    from service.bootstrap import build_manifest

    manifest, store, projections = await build_manifest(settings)
    try:
        games = [g async for g in _all_games(manifest)]
        await projections.clear()
        with Bar("rebuild (games)") as bar:
            bar(0, len(games))
            for done, game_id in enumerate(games, 1):
                await manifest.projector.catch_up(game_id)
                bar(done, len(games))
        return len(games)
    finally:
        await projections.close()
        await store.close()


async def _history(settings: Settings, game_id: str, what: str) -> Any:
    from service.application.history import History
    from service.bootstrap import build_manifest

    manifest, store, projections = await build_manifest(settings)
    try:
        history = History.of(manifest)
        with Bar(f"{what} {game_id} (events)") as bar:
            if what == "audit":
                return await history.audit(game_id, progress=bar)
            return await history.export(game_id, progress=bar)
    finally:
        await projections.close()
        await store.close()


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise Failure(EXIT_FILE, f"cannot read {path}: {error.strerror or error}") from None


def _json(path: str) -> Any:
    try:
        return msgspec.json.decode(_read(path))
    except msgspec.DecodeError as error:
        raise Failure(EXIT_BAD_FILE, f"{path} is not JSON: {error}") from None


def _verify(path: str) -> dict[str, Any]:
    from ledger.audit import verify_export
    from ledger.exportfile import decode_export

    raw = _read(path)
    try:
        exported = decode_export(raw)
    except msgspec.ValidationError as error:
        raise Failure(EXIT_BAD_FILE, f"{path} is not a Manifest export: {error}") from None
    except msgspec.DecodeError as error:
        raise Failure(EXIT_BAD_FILE, f"{path} is not JSON: {error}") from None
    with Bar("verify (events)") as bar:
        return verify_export(exported, bar)


def _verify_dispute(path: str, keys: str) -> dict[str, Any]:
    from ledger.treeheads import verify_dispute

    return verify_dispute(_json(path), _json(keys))


async def _all_games(manifest: Any) -> Any:
    cursor = None
    while True:
        page = await manifest.store.game_versions(cursor, 1000)
        if not page:
            return
        for game_id, version in page:
            if version > 0:
                yield game_id
        cursor = page[-1][0]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="manifest", description=(__doc__ or "").split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("serve", help="run the HTTP API")
    run.add_argument("--host", default="127.0.0.1")
    run.add_argument("--port", type=int, default=8000)
    run.add_argument("--workers", type=int, default=1)
    sub.add_parser("migrate", help="apply database migrations")
    sub.add_parser("rebuild", help="recreate every projection from PostgreSQL")
    check = sub.add_parser("audit", help="audit a stored game")
    check.add_argument("game_id")
    dump = sub.add_parser("export", help="write a game as a self-contained JSON file")
    dump.add_argument("game_id")
    dump.add_argument("-o", "--output", help="file to write (default: standard output)")
    aloud = sub.add_parser("replay", help="read a stored game aloud, one sentence an event")
    aloud.add_argument("game_id")
    aloud.add_argument("--lang", default="en", help="the sentences' language: en or fr")
    offline = sub.add_parser("verify", help="audit an exported file offline")
    offline.add_argument("file")
    dispute = sub.add_parser("verify-dispute", help="check a dispute file offline")
    dispute.add_argument("file")
    dispute.add_argument("--keys", required=True, help="the server's GET /v1/keys answer")
    parser.epilog = "exit status: " + "; ".join(f"{k} {v}" for k, v in EXIT_CODES.items())
    args = parser.parse_args(argv)
    try:
        _run(args)
    except Failure as failure:
        print(f"manifest: {failure.message}", file=sys.stderr)
        sys.exit(failure.status)
    except KeyboardInterrupt:
        print("manifest: interrupted", file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)
    finally:
        Embedded.stop()


def _run(args: argparse.Namespace) -> None:
    """:func:`_command`, with what goes wrong told in one line (:class:`Failure`)."""
    import socket

    from redis.exceptions import RedisError

    from ledger.receipts import SigningKeyMissing
    from projections.store import StoreUnavailable
    from service.application.errors import ApplicationError, NotFound, Unavailable

    try:
        _command(args)
    except (SigningKeyMissing, SettingsError) as error:  # a bad setting or no key stops the start
        raise Failure(EXIT_USAGE, str(error)) from None
    except ApplicationError as error:
        code = {NotFound: EXIT_NO_GAME, Unavailable: EXIT_UNAVAILABLE}.get(type(error), EXIT_USAGE)
        raise Failure(code, f"{error.detail} ({error.code})") from None
    except (RedisError, StoreUnavailable) as error:
        raise Failure(EXIT_UNAVAILABLE, f"Redis does not answer: {error}") from None
    except (ConnectionError, socket.gaierror, TimeoutError) as error:  # asyncpg's connect
        raise Failure(EXIT_UNAVAILABLE, f"PostgreSQL does not answer: {error}") from None
    except Exception as error:
        import asyncpg  # type: ignore[import-untyped]

        if isinstance(error, asyncpg.PostgresError | asyncpg.InterfaceError):
            raise Failure(EXIT_UNAVAILABLE, f"PostgreSQL refused: {error}") from None
        raise


def _command(args: argparse.Namespace) -> None:
    if args.command == "serve":
        serve(args)
    elif args.command == "verify":
        report(_verify(args.file))
    elif args.command == "verify-dispute":
        report(_verify_dispute(args.file, args.keys))
    elif args.command == "audit":
        report(asyncio.run(_history(resolve_database(Settings.from_env()), args.game_id, "audit")))
    elif args.command == "replay":
        asyncio.run(read_aloud(resolve_database(Settings.from_env()), args.game_id, args.lang))
    elif args.command == "export":
        exported = asyncio.run(
            _history(resolve_database(Settings.from_env()), args.game_id, "export")
        )
        from ledger.exportfile import encode_export

        data = encode_export(exported)
        if args.output:
            try:
                Path(args.output).write_bytes(data)
            except OSError as error:
                reason = error.strerror or error
                raise Failure(EXIT_FILE, f"cannot write {args.output}: {reason}") from None
            events = len(exported.events)
            print(f"exported {args.game_id} ({events} events) to {args.output}", file=sys.stderr)
        else:
            sys.stdout.buffer.write(data + b"\n")
    elif args.command == "migrate":
        applied = asyncio.run(_migrate(resolve_database(Settings.from_env())))
        print("applied: " + (", ".join(applied) if applied else "nothing (up to date)"))
    else:
        settings = Settings.from_env()
        if not settings.redis_url:
            raise Failure(
                EXIT_USAGE,
                "rebuild needs REDIS_URL: without it each server keeps its projections in its "
                "own memory and builds them from PostgreSQL as it starts; there is nothing to "
                "rebuild",
            )
        count = asyncio.run(_rebuild(resolve_database(settings)))
        print(
            f"rebuilt projections of {count} games in Redis at {_redis_place(settings)} "
            f"(key prefix {settings.redis_prefix!r}), from PostgreSQL"
        )


def _redis_place(settings: Settings) -> str:
    """The Redis URL without its password."""
    from urllib.parse import urlsplit

    url = urlsplit(settings.redis_url or "")
    where = _url_host(url.hostname or "") + (f":{url.port}" if url.port else "")
    return f"{url.scheme}://{where}{url.path}"


if __name__ == "__main__":
    main()
