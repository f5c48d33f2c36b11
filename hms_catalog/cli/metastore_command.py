"""``hms-catalog metastore start|stop|status``: the embedded metastore from the command line."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from hms_catalog.errors import HmsCatalogError
from hms_catalog.metastore import DEFAULT_PORT, EmbeddedMetastore, MetastoreAlreadyRunning, MetastoreKerberos

__all__ = ["add_metastore_parser", "run_metastore_command"]


def add_metastore_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "metastore",
        help="start, stop or inspect the embedded Hive Metastore",
        description=(
            "Run a real Hive Metastore (Hive 2.3 from pyspark's jars, on an embedded Derby database) in the "
            "background. Everything it keeps lives in --dir (default: HOME/metastore). Needs Java 17."
        ),
        epilog=(
            "examples:\n"
            "  hms-catalog metastore start             # on the port it took last (9083 the first time)\n"
            "  hms-catalog metastore start --port 0    # any free port, remembered for the next start\n"
            "  hms-catalog metastore status\n"
            "  hms-catalog metastore stop\n\n"
            "  # secure, as production metastores run: SASL/GSSAPI with a principal and keytab from your KDC\n"
            "  hms-catalog metastore start --kerberos-principal 'hive/_HOST@EXAMPLE.COM' \\\n"
            "      --kerberos-keytab /etc/security/keytabs/hive.keytab --krb5-conf /etc/krb5.conf\n"
            "  (it prints the catalog properties that reach it; _HOST becomes the canonical name of 127.0.0.1)"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("action", choices=("start", "stop", "status"), help="what to do")
    parser.add_argument("--dir", type=Path, help="the metastore's directory (Derby database, warehouse, logs)")
    parser.add_argument("--port", type=int,
                        help=f"thrift port to listen on (default: the port this --dir's metastore listened on last, so "
                             f"catalogs over it keep reaching it; {DEFAULT_PORT} on its first start; 0 picks a free one)")
    parser.add_argument("--no-events", action="store_true", help="do not write the notification log")
    parser.add_argument("--kerberos-principal", metavar="PRINCIPAL",
                        help="run secure (SASL/GSSAPI only) as this service principal, such as hive/_HOST@REALM")
    parser.add_argument("--kerberos-keytab", type=Path, metavar="FILE",
                        help="the keytab holding --kerberos-principal's keys (needs 'hms-catalog[kerberos]')")
    parser.add_argument("--krb5-conf", type=Path, metavar="FILE",
                        help="the Kerberos configuration for the server and this process (default: KRB5_CONFIG, "
                             "else /etc/krb5.conf)")


def run_metastore_command(args: argparse.Namespace, home: Path) -> int:
    directory = args.dir or home / "metastore"
    if (args.kerberos_principal is None) != (args.kerberos_keytab is None):
        print("error: --kerberos-principal and --kerberos-keytab go together", file=sys.stderr)
        return 2
    kerberos = None
    if args.kerberos_principal is not None:
        if args.krb5_conf is not None:
            os.environ["KRB5_CONFIG"] = str(args.krb5_conf)  # this process's probe reads the same realm
        kerberos = MetastoreKerberos(args.kerberos_principal, args.kerberos_keytab.absolute(), args.krb5_conf)
    metastore = EmbeddedMetastore(directory, args.port, default_port=DEFAULT_PORT, events=not args.no_events,
                                  kerberos=kerberos)
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
    if metastore.kerberos is not None:
        properties = ", ".join(f"'{key}'='{value}'" for key, value in metastore.client_properties().items())
        print(f"secure (SASL/GSSAPI); a catalog reaches it with: {properties}", file=sys.stderr)
    print(uri)
    return 0


def _status(metastore: EmbeddedMetastore) -> int:
    status = metastore.status()
    if not status.running:
        print(f"not running ({metastore.directory})")
        return 3
    security = f", Kerberos as {status.principal}" if status.principal else ""
    print(f"running at {status.uri} (pid {status.pid}, events {'on' if status.events else 'off'}{security}, "
          f"dir {status.directory})")
    return 0
