"""The ``hms-catalog`` command: run catalog statements (-e, -f, piped stdin or a prompt), here or on a
catalog service (``--server``), manage the embedded metastore (``hms-catalog metastore ...``), or run a
command another package adds through the ``hms_catalog.commands`` entry point (``hms-catalog serve``)."""

from __future__ import annotations

import argparse
import functools
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Protocol

from hms_catalog._logging import configure_logging
from hms_catalog.cli.metastore_command import add_metastore_parser, run_metastore_command
from hms_catalog.cli.progress import TerminalProgress
from hms_catalog.cli.render import FORMATS, renderer_for
from hms_catalog.cli.repl import interactive_session, stream_session
from hms_catalog.cli.runner import StatementRunner
from hms_catalog.errors import HmsCatalogError
from hms_catalog.execution import Session
from hms_catalog.manager import EventFollowing
from hms_catalog.registry import shared_manager
from hms_catalog.remote import SERVER_ENV, TOKEN_ENV, TOKEN_FILE, CatalogServiceClient, RemoteSession, resolve_token
from hms_catalog.store import HOME_ENV, default_home

__all__ = ["COMMANDS_GROUP", "Command", "main", "build_parser"]

COMMANDS_GROUP = "hms_catalog.commands"
log = logging.getLogger(__name__)


class Command(Protocol):
    """A subcommand another package adds (the catalog service's ``serve``)."""

    name: str

    def add_parser(self, subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None: ...

    def run(self, args: argparse.Namespace, home: Path) -> int: ...


@functools.cache
def _commands() -> Mapping[str, Command]:
    found: dict[str, Command] = {}
    for point in entry_points(group=COMMANDS_GROUP):
        try:
            command = point.load()
        except ImportError as error:
            log.warning("command %s (%s) could not be loaded: %s", point.name, point.value, error)
            continue
        found[command.name] = command
    return found

_DESCRIPTION = """\
An external catalog over Hive Metastores.

Define catalogs with Doris-style statements, then browse what the metastore holds.
Statements end with ';' and keywords are case-insensitive. Catalog definitions are kept
under --home and survive restarts.
"""

_EPILOG = f"""\
statements:
  CREATE CATALOG [IF NOT EXISTS] name [COMMENT 'text'] PROPERTIES ('k'='v', ...)
  DROP CATALOG [IF EXISTS] name
  ALTER CATALOG name SET PROPERTIES ('k'='v', ...) | ALTER CATALOG name RENAME new_name
  SHOW CATALOGS | SHOW CREATE CATALOG name | SWITCH name | USE [cat.]db
  SHOW DATABASES [FROM cat] | SHOW TABLES [FROM [cat.]db] [LIKE 'pattern']
  DESC[RIBE] [[cat.]db.]table
  REFRESH CATALOG name | REFRESH DATABASE [cat.]db | REFRESH TABLE [[cat.]db.]table
  SHOW TABLE STATUS [FROM [cat.]db] [LIKE 'pattern']   (format, file format, location, reason)
  SHOW CACHE [FROM cat] | SHOW SCHEMA CACHE [FROM cat]   (what the caches hold)
  SHOW SPLITS FROM [[cat.]db.]table [WHERE predicate]    (the split plan, one row per split)
  EXPLAIN SPLITS FROM [[cat.]db.]table [WHERE predicate] (its summary: files, bytes, pruning, calls, time)
  SELECT ... FROM cat.db.t [JOIN ...] [WHERE ...]        (runs on Spark; partition predicates prune)

examples:
  hms-catalog metastore start        # a local metastore at thrift://127.0.0.1:9083
  hms-catalog -e "CREATE CATALOG hive PROPERTIES ('type'='hms',
                  'hive.metastore.uris'='thrift://127.0.0.1:9083')"
  hms-catalog -e "SHOW DATABASES FROM hive; DESCRIBE hive.default.t"
  hms-catalog --format json -f statements.sql
  echo "SHOW CATALOGS;" | hms-catalog
  hms-catalog serve &                # the catalog service, then every client shares one warm catalog:
  hms-catalog --server http://127.0.0.1:8181 -e "SHOW CACHE FROM hive"
  hms-catalog --server http://a:8181,http://b:8181 -e "SHOW CATALOGS"   # replicas: fails over between them

environment:
  {HOME_ENV}   default for --home (else ~/.hms-catalog)
  {SERVER_ENV} default for --server (comma-separated URLs for replicas)
  {TOKEN_ENV}  default for --token (else HOME/{TOKEN_FILE})

exit status: 0 when every statement succeeded, 1 when one failed (with -e/-f the run stops there;
statements before it stay applied), 2 for bad command-line arguments.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hms-catalog", description=_DESCRIPTION, epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("-e", "--execute", metavar="STATEMENTS", help="run these statements and exit")
    source.add_argument("-f", "--file", metavar="FILE", type=Path, help="run the statements in FILE and exit")
    parser.add_argument("--home", type=Path, help=f"where catalog definitions live (default ${HOME_ENV} or ~/.hms-catalog)")
    parser.add_argument("--format", choices=FORMATS, default="text", help="result format (default text; json: one line per statement)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")
    parser.add_argument("--master", metavar="URL", help="Spark master for SELECT (default local[*])")
    parser.add_argument("--remote", metavar="URL", help="a Spark Connect server for SELECT (sc://host:15002)")
    parser.add_argument("--server", metavar="URL[,URL...]",
                        help="run statements on the catalog service at URL (http[s]://host:port); several comma-separated "
                             f"URLs are replicas of one service, failed over between (default ${SERVER_ENV})")
    parser.add_argument("--token", metavar="TOKEN",
                        help=f"the service's bearer token (default ${TOKEN_ENV}, else HOME/{TOKEN_FILE})")
    parser.add_argument("--cafile", metavar="FILE", help="CA bundle to verify an https service with (its certificate, if self-signed)")
    commands = _commands()
    subparsers = parser.add_subparsers(dest="command", metavar="{" + ",".join(["metastore", *sorted(commands)]) + "}")
    add_metastore_parser(subparsers)
    for command in commands.values():
        command.add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(debug=args.debug)
    home = (args.home or default_home()).expanduser()
    if args.command == "metastore":
        return run_metastore_command(args, home)
    if args.command in _commands():
        return _commands()[args.command].run(args, home)
    server = args.server or os.environ.get(SERVER_ENV)
    if server:
        return _run_remote(args, home, server)
    manager = shared_manager(home)
    if args.execute is not None or args.file is not None or not sys.stdin.isatty():
        manager.events = EventFollowing.OFF  # a one-shot run would abandon a follower at once; a service follows
    progress = TerminalProgress(sys.stderr) if sys.stderr.isatty() else None
    session = Session(manager, progress=progress)
    session.engine_options.update({k: v for k, v in (("master", args.master), ("remote", args.remote)) if v})
    try:
        return _run_session(args, session, home)
    finally:
        manager.close()


def _run_remote(args: argparse.Namespace, home: Path, server: str) -> int:
    """Statements run on the catalog service; rendering, errors and exit codes as a local run's."""
    if args.master or args.remote:
        print("error: --master and --remote choose the engine of a local run; with --server, SELECT runs on the "
              "service's", file=sys.stderr)
        return 2
    try:
        client = CatalogServiceClient(server, resolve_token(args.token, home), cafile=args.cafile)
    except HmsCatalogError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return _run_session(args, RemoteSession(client), home)


def _run_session(args: argparse.Namespace, session: Session | RemoteSession, home: Path) -> int:
    """Run the statements of the command line through ``session``, closing it after (a local session's
    close stops a SparkSession that SELECT started)."""
    runner = StatementRunner(session, renderer_for(args.format), debug=args.debug)
    try:
        return _run_statements(args, runner, home)
    except KeyboardInterrupt:
        return 130
    finally:
        session.close()


def _run_statements(args: argparse.Namespace, runner: StatementRunner, home: Path) -> int:
    if args.execute is not None:
        return 0 if runner.run_all(args.execute, stop_on_error=True) else 1
    if args.file is not None:
        try:
            text = args.file.read_text(encoding="utf-8")
        except OSError as error:
            print(f"error: cannot read {args.file}: {error.strerror}", file=sys.stderr)
            return 1
        return 0 if runner.run_all(text, stop_on_error=True) else 1
    if sys.stdin.isatty():
        interactive_session(runner, home / "history")
        return 0
    return 0 if stream_session(runner, sys.stdin) else 1


