"""``hms-catalog metastore start|stop|status``: the embedded metastore from the command line."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from hms_catalog.errors import ConfigurationError, HmsCatalogError
from hms_catalog.metastore import (
    DATABASE_PASSWORD_ENV,
    DEFAULT_PORT,
    EmbeddedMetastore,
    MetastoreAlreadyRunning,
    MetastoreDatabase,
    MetastoreKerberos,
    PostgresDatabase,
    parse_database,
)

__all__ = ["add_metastore_parser", "run_metastore_command"]


def add_metastore_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "metastore",
        help="start, stop or inspect the embedded Hive Metastore",
        description=(
            "Run a real Hive Metastore (Hive 2.3 from pyspark's jars) in the background, on an embedded Derby "
            "database or on PostgreSQL (--db). Everything it keeps lives in --dir (default: HOME/metastore). "
            "Needs Java 17."
        ),
        epilog=(
            "examples:\n"
            "  hms-catalog metastore start             # on the port it took last (9083 the first time)\n"
            "  hms-catalog metastore start --port 0    # any free port, remembered for the next start\n"
            "  hms-catalog metastore status\n"
            "  hms-catalog metastore stop\n\n"
            "  # on PostgreSQL: a database it may own on your server (the password from a file, or in the URL),\n"
            "  # or a server of its own in --dir/postgres, started and stopped with it (Debian: postgresql)\n"
            "  hms-catalog metastore start --db postgresql://hive@db.example.com:5432/metastore \\\n"
            "      --db-password-file ~/.hive-db-password\n"
            "  hms-catalog metastore start --db postgresql\n"
            "  (PostgreSQL's JDBC driver comes from Debian's libpostgresql-jdbc-java)\n\n"
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
    parser.add_argument("--db", metavar="DATABASE",
                        help="where the metadata lives: derby (in --dir), postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE, "
                             "or postgresql for a server of its own in --dir/postgres (default: the database of this "
                             "--dir's last start, derby on its first)")
    parser.add_argument("--db-password-file", type=Path, metavar="FILE",
                        help=f"the PostgreSQL password, when the URL has none (default: ${DATABASE_PASSWORD_ENV})")
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
    try:
        database = _database(args.db, args.db_password_file)
    except ConfigurationError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    metastore = EmbeddedMetastore(directory, args.port, default_port=DEFAULT_PORT, events=not args.no_events,
                                  kerberos=kerberos, database=database)
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


def _database(given: str | None, password_file: Path | None) -> MetastoreDatabase | None:
    """``--db`` parsed (None: the directory's last), with the password of ``--db-password-file``."""
    password = None
    if password_file is not None:
        try:
            password = password_file.expanduser().read_text(encoding="utf-8").strip()
        except OSError as error:
            raise ConfigurationError(f"--db-password-file {password_file}: cannot read it: {error.strerror}") from error
        if given is None:
            raise ConfigurationError("--db-password-file goes with --db postgresql://USER@HOST/DATABASE")
    database = None if given is None else parse_database(given, password=password)
    if password is not None and isinstance(database, PostgresDatabase) and database.own_server:
        raise ConfigurationError("--db-password-file goes with a server given by URL (postgresql://USER@HOST/DATABASE); "
                                 f"--db {given} is a server of the metastore's own, which makes its own password")
    return database


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
    print(f"ready in {time.monotonic() - started:.1f}s on {metastore.status().database}; notification events {events}; "
          f"log: {metastore.log_file}", file=sys.stderr)
    if metastore.kerberos is not None:
        properties = ", ".join(f"'{key}'='{value}'" for key, value in metastore.client_properties().items())
        print(f"secure (SASL/GSSAPI); a catalog reaches it with: {properties}", file=sys.stderr)
    print(uri)
    return 0


def _status(metastore: EmbeddedMetastore) -> int:
    status = metastore.status()
    if not status.running:
        print(f"not running ({metastore.directory}; database {status.database})")
        return 3
    security = f", Kerberos as {status.principal}" if status.principal else ""
    print(f"running at {status.uri} (pid {status.pid}, events {'on' if status.events else 'off'}{security}, "
          f"dir {status.directory}, database {status.database})")
    return 0
