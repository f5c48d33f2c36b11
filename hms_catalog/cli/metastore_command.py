"""``hms-catalog metastore start|stop|status``: the embedded metastore from the command line."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from hms_catalog.errors import HmsCatalogError
from hms_catalog.metastore import DEFAULT_PORT, EmbeddedMetastore, MetastoreAlreadyRunning

__all__ = ["add_metastore_parser", "run_metastore_command"]


def add_metastore_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "metastore",
        help="start, stop or inspect the embedded Hive Metastore",
        description=(
            "Run a real Hive Metastore (Hive 2.3 from pyspark's jars, on an embedded Derby database) in the "
            "background. Everything it keeps lives in --dir (default: HOME/metastore). Needs Java 17."
        ),
        epilog="example:\n  hms-catalog metastore start --port 9083\n  hms-catalog metastore status\n  hms-catalog metastore stop",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("action", choices=("start", "stop", "status"), help="what to do")
    parser.add_argument("--dir", type=Path, help="the metastore's directory (Derby database, warehouse, logs)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"thrift port to listen on (default {DEFAULT_PORT}; 0 picks a free one)")
    parser.add_argument("--no-events", action="store_true", help="do not write the notification log")


def run_metastore_command(args: argparse.Namespace, home: Path) -> int:
    directory = args.dir or home / "metastore"
    port = args.port or None  # 0: any free port
    metastore = EmbeddedMetastore(directory, port, events=not args.no_events)
    try:
        if args.action == "start":
            return _start(metastore)
        if args.action == "stop":
            stopped = metastore.stop()
            print(f"metastore in {metastore.directory} {'stopped' if stopped else 'was not running'}", file=sys.stderr)
            return 0
        return _status(metastore)
    except HmsCatalogError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


def _start(metastore: EmbeddedMetastore) -> int:
    print(f"starting the metastore in {metastore.directory} ...", file=sys.stderr, flush=True)
    started = time.monotonic()
    try:
        uri = metastore.start()
    except MetastoreAlreadyRunning as running:
        print(f"already running: {running}", file=sys.stderr)
        print(running.uri)
        return 0
    events = "on" if metastore.events_enabled else "off (javac not found)"
    print(f"ready in {time.monotonic() - started:.1f}s; notification events {events}; log: {metastore.log_file}", file=sys.stderr)
    print(uri)
    return 0


def _status(metastore: EmbeddedMetastore) -> int:
    status = metastore.status()
    if not status.running:
        print(f"not running ({metastore.directory})")
        return 3
    print(f"running at {status.uri} (pid {status.pid}, events {'on' if status.events else 'off'}, dir {status.directory})")
    return 0
