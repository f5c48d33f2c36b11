"""``hms-catalog serve``: its arguments, checked, and then the service (:mod:`service.serving`).

The CLI builds this command's parser at every start (it finds the command through an entry point), so this module
imports nothing that serving needs: FastAPI, uvicorn, the thrift server and Kerberos are imported once ``serve``
runs. Their defaults come from :mod:`service.defaults`.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from hms_catalog.cache.budget import DEFAULT_CACHE_MEMORY, MemoryBudget, format_size
from hms_catalog.errors import ConfigurationError, HmsCatalogError
from hms_catalog.state import STORE_ENV, STORE_PASSWORD_ENV
from hms_catalog.state.leases import LEASE_SECONDS_DEFAULT
from service.companions import companions
from service.defaults import (
    ALL_PROTECTIONS,
    DEFAULT_HOST,
    DEFAULT_PORT,
    DEFAULT_PRIMARY,
    DEFAULT_THREADS,
    INSECURE_EXPOSES,
    PLAN_WAIT_SECONDS,
    THRIFT_INSECURE_ENV,
)

if TYPE_CHECKING:
    from service.thrift.kerberos import ServiceKerberos

__all__ = ["COMMAND", "ServeCommand"]

THRIFT_PORT_ENV = "HMS_CATALOG_THRIFT_PORT"
THRIFT_HOST_ENV = "HMS_CATALOG_THRIFT_HOST"
THRIFT_PRIMARY_ENV = "HMS_CATALOG_THRIFT_PRIMARY"
THRIFT_PRINCIPAL_ENV = "HMS_CATALOG_THRIFT_PRINCIPAL"
THRIFT_KEYTAB_ENV = "HMS_CATALOG_THRIFT_KEYTAB"
THRIFT_QOP_ENV = "HMS_CATALOG_THRIFT_QOP"
PLAN_WAIT_ENV = "HMS_CATALOG_ICEBERG_PLAN_WAIT"
CACHE_MEMORY_ENV = "HMS_CATALOG_CACHE_MEMORY"
EVENT_LEASE_ENV = "HMS_CATALOG_EVENT_LEASE"
MIN_EVENT_LEASE = 1.0


class ServeCommand:
    """The ``serve`` subcommand, found by the CLI through the ``hms_catalog.commands`` entry point."""

    name = "serve"

    def add_parser(self, subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
        parser = subparsers.add_parser(
            self.name,
            help="run the catalog service: one warm catalog shared by every client over REST",
            description=(
                "Serve every catalog of --home over a REST API (OpenAPI at /openapi.json). One process holds "
                "the metastore pools, caches, event followers, versions and change log, and every client "
                "shares them. Every request but /v1/health needs 'Authorization: Bearer <token>'; the token is "
                "made on first start in HOME/server.token (readable by its owner only) unless --token-file "
                "names one. It may do everything; --tokens names tokens that may only read, or change only some "
                "catalogs. Every change is appended to HOME/audit.log. Stop it with SIGTERM or Ctrl-C."
            ),
            epilog=(
                "examples:\n"
                "  hms-catalog serve                        # http://127.0.0.1:8181, token in ~/.hms-catalog/server.token\n"
                "  hms-catalog serve --host 0.0.0.0 --port 8443 --tls-cert cert.pem --tls-key key.pem\n"
                "  hms-catalog serve --thrift-port 9083     # also a Hive Metastore: hive.metastore.uris=thrift://127.0.0.1:9083\n"
                "  hms-catalog --server http://127.0.0.1:8181 -e \"SHOW CATALOGS\"\n"
                "  curl -H \"Authorization: Bearer $(cat ~/.hms-catalog/server.token)\" http://127.0.0.1:8181/v1/catalogs"
            ),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        parser.add_argument("--home", type=Path, default=argparse.SUPPRESS,
                            help="the home whose catalogs to serve (as hms-catalog --home; default $HMS_CATALOG_HOME or ~/.hms-catalog)")
        parser.add_argument("--host", default=DEFAULT_HOST,
                            help=f"address to listen on (default {DEFAULT_HOST}: this machine only)")
        parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 picks a free one)")
        parser.add_argument("--token-file", type=Path, help="read the bearer token from FILE instead of HOME/server.token")
        parser.add_argument("--tokens", type=Path, metavar="PATH",
                            help='named tokens besides the server\'s own, as JSON: {"tokens": [{"name": "ro", "token": "...", '
                                 '"access": "read"}, {"name": "etl", "token": "...", "access": "write", "catalogs": ["prod"]}]} '
                                 "(keep it readable by its owner only). They are kept in the catalog store (as digests), so "
                                 "every replica on it accepts them; a replica started without --tokens uses the store's")
        parser.add_argument("--store", metavar="URL",
                            help=f"the catalog store replicas share: postgresql://user@host/db (password from "
                                 f"${STORE_PASSWORD_ENV} or --store-password-file, never in the URL) or sqlite:///PATH "
                                 f"(default ${STORE_ENV}, else HOME/catalog.db). Every serve on one store is a replica: "
                                 "same catalogs, versions and change log")
        parser.add_argument("--store-password-file", type=Path, metavar="PATH",
                            help="read the PostgreSQL store's password from PATH (keep it readable by its owner only)")
        parser.add_argument("--event-lease", type=float, default=None, metavar="SECONDS",
                            help=f"seconds a replica's lease on following a catalog's metastore events lasts without "
                                 f"renewal (it renews every third of it): when the replica dies, another one takes the "
                                 f"following over within this time; at least {MIN_EVENT_LEASE:g} (default ${EVENT_LEASE_ENV}, else "
                                 f"{LEASE_SECONDS_DEFAULT:g})")
        parser.add_argument("--tls-cert", type=Path, help="serve https with this certificate (PEM); needs --tls-key")
        parser.add_argument("--tls-key", type=Path, help="the certificate's private key (PEM)")
        parser.add_argument("--cache-memory", default=None, metavar="SIZE",
                            help=f"the memory every cache of every catalog may hold together (tables, partitions, file "
                                 f"listings, footers, Iceberg metadata and plans), such as 512MiB or 2GiB, or 'unlimited': "
                                 f"past it, the least recently used entries are evicted and loaded again when asked "
                                 f"(default ${CACHE_MEMORY_ENV}, else {format_size(DEFAULT_CACHE_MEMORY)})")
        parser.add_argument("--iceberg-plan-wait", type=float, default=None, metavar="SECONDS",
                            help=f"seconds an Iceberg REST scan plan request waits for its plan before answering "
                                 f"'submitted' for the client to poll (default ${PLAN_WAIT_ENV}, else {PLAN_WAIT_SECONDS:g})")
        thrift = parser.add_argument_group(
            "Hive Metastore endpoint",
            "Serve every catalog of the home over the Hive Metastore thrift API as well, so Spark's and Hive's own "
            "Hive support, Trino, Impala, Flink and pyiceberg's HiveCatalog use the catalog with one setting "
            "(hive.metastore.uris). The primary catalog keeps its database names; every other catalog's databases "
            "appear as <catalog>__<database>. Reads come from the warm caches; changes are forwarded to the owning "
            "metastore as catalog events, and refused unless the catalog has 'thrift.access'='write'. With "
            "--thrift-principal and --thrift-keytab it authenticates every client with Kerberos (SASL GSSAPI, as a "
            "secure Hive Metastore does) and may bind any address. Without them it authenticates nobody, so it binds "
            "this machine's loopback address only (127.0.0.1, ::1, localhost) unless --thrift-insecure says that "
            "another address, on a trusted network, is meant.")
        thrift.add_argument("--thrift-port", type=int, default=None,
                            help=f"port of the endpoint (off unless given; 0 picks a free one; default ${THRIFT_PORT_ENV})")
        thrift.add_argument("--thrift-host", default=os.environ.get(THRIFT_HOST_ENV, DEFAULT_HOST),
                            help=f"address of the endpoint (default ${THRIFT_HOST_ENV}, else {DEFAULT_HOST}: this machine only)")
        thrift.add_argument("--thrift-insecure", action="store_true",
                            help=f"without Kerberos, allow --thrift-host to be an address other machines reach (0.0.0.0 "
                                 f"included), where the endpoint {INSECURE_EXPOSES} (default ${THRIFT_INSECURE_ENV})")
        thrift.add_argument("--thrift-principal", default=os.environ.get(THRIFT_PRINCIPAL_ENV) or None, metavar="PRINCIPAL",
                            help="the endpoint's Kerberos service principal, such as hive/_HOST@EXAMPLE.COM: clients must "
                                 "authenticate with SASL GSSAPI (hive.metastore.sasl.enabled=true). _HOST becomes the "
                                 "canonical name of --thrift-host, or this machine's name for 0.0.0.0, as in Hadoop "
                                 f"(default ${THRIFT_PRINCIPAL_ENV}; needs --thrift-keytab)")
        thrift.add_argument("--thrift-keytab", type=Path, default=_env_path(THRIFT_KEYTAB_ENV), metavar="FILE",
                            help=f"the keytab holding the principal's keys (default ${THRIFT_KEYTAB_ENV})")
        thrift.add_argument("--thrift-qop", default=os.environ.get(THRIFT_QOP_ENV, ",".join(ALL_PROTECTIONS)), metavar="QOP",
                            help="the SASL protections a Kerberos client may choose (hadoop.rpc.protection), comma "
                                 "separated: auth (authentication), auth-int (integrity), auth-conf (privacy) (default "
                                 f"${THRIFT_QOP_ENV}, else all three)")
        thrift.add_argument("--thrift-primary", default=os.environ.get(THRIFT_PRIMARY_ENV, DEFAULT_PRIMARY), metavar="CATALOG",
                            help=f"the catalog whose databases keep their names (default ${THRIFT_PRIMARY_ENV}, else "
                                 f"'{DEFAULT_PRIMARY}')")
        thrift.add_argument("--thrift-threads", type=int, default=DEFAULT_THREADS,
                            help=f"clients served at once, one thread each (default {DEFAULT_THREADS})")
        self._companions = companions()
        for companion in self._companions:
            companion.add_arguments(parser)

    def run(self, args: argparse.Namespace, home: Path) -> int:
        thrift = None
        try:
            # The environment's settings are read here, not as the parser's defaults: a bad value is this command's
            # error, not every command's traceback.
            port = args.thrift_port if args.thrift_port is not None else _env_int(THRIFT_PORT_ENV)
            plan_wait = args.iceberg_plan_wait if args.iceberg_plan_wait is not None else _env_seconds(PLAN_WAIT_ENV, PLAN_WAIT_SECONDS)
            lease = args.event_lease if args.event_lease is not None else _env_seconds(EVENT_LEASE_ENV, LEASE_SECONDS_DEFAULT)
            try:
                cache_memory = _cache_memory(args.cache_memory)
            except ConfigurationError as error:
                print(f"error: {error}", file=sys.stderr)
                return 2 if args.cache_memory is not None else 1  # a bad --cache-memory is 2; $HMS_CATALOG_CACHE_MEMORY's 1
            if plan_wait < 0:
                print(f"error: --iceberg-plan-wait must be at least 0, got {plan_wait:g}", file=sys.stderr)
                return 2
            if not (math.isfinite(lease) and lease >= MIN_EVENT_LEASE):  # renewed every third of it: a store call each
                print(f"error: --event-lease must be at least {MIN_EVENT_LEASE:g} second(s), got {lease:g}", file=sys.stderr)
                return 2
            if port is not None and args.thrift_threads < 1:
                print(f"error: --thrift-threads must be at least 1, got {args.thrift_threads}", file=sys.stderr)
                return 2
            if port is not None:
                from service.thrift import ThriftSettings

                thrift = ThriftSettings(host=args.thrift_host, port=port, primary=args.thrift_primary,
                                        threads=args.thrift_threads,
                                        insecure=args.thrift_insecure or _env_flag(THRIFT_INSECURE_ENV),
                                        kerberos=_thrift_kerberos(args))
            from service.serving import serve  # FastAPI, uvicorn and the rest: imported by serve only

            return serve(home, host=args.host, port=args.port, token_file=args.token_file, tokens_file=args.tokens,
                         tls_cert=args.tls_cert, tls_key=args.tls_key, args=args, companions=self._companions,
                         store=args.store, store_password_file=args.store_password_file, thrift=thrift,
                         plan_wait=plan_wait, cache_memory=cache_memory, event_lease=lease)
        except HmsCatalogError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1


COMMAND = ServeCommand()


def _env_int(name: str) -> int | None:
    value = os.environ.get(name, "").strip()
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        raise ConfigurationError(f"${name} must be a port number, got {value!r}") from None


def _env_seconds(name: str, default: float) -> float:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        return float(value)
    except ValueError:
        raise ConfigurationError(f"${name} must be a number of seconds, got {value!r}") from None


def _cache_memory(option: str | None) -> MemoryBudget:
    """``--cache-memory``, else ``$HMS_CATALOG_CACHE_MEMORY``, else 1 GiB; a size it cannot read is refused, naming
    where it came from."""
    if option is not None:
        return MemoryBudget.parse(option)
    value = os.environ.get(CACHE_MEMORY_ENV, "").strip()
    return MemoryBudget.parse(value, f"${CACHE_MEMORY_ENV}") if value else MemoryBudget()


def _env_flag(name: str) -> bool:
    """An on/off environment setting: a value it cannot read is refused, never taken for off."""
    value = os.environ.get(name, "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise ConfigurationError(f"${name} must be 1 or 0 (true/false, yes/no, on/off), got {value!r}")


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name, "").strip()
    return Path(value) if value else None


def _thrift_kerberos(args: argparse.Namespace) -> ServiceKerberos | None:
    """The endpoint's Kerberos settings from ``--thrift-principal``, ``--thrift-keytab`` and ``--thrift-qop``; None
    without a principal. ConfigurationError when only one of the pair is given, or the keytab lacks the principal."""
    if args.thrift_principal is None and args.thrift_keytab is None:
        return None
    if args.thrift_principal is None or args.thrift_keytab is None:
        raise ConfigurationError("--thrift-principal and --thrift-keytab go together: give both or neither "
                                 f"(${THRIFT_PRINCIPAL_ENV}, ${THRIFT_KEYTAB_ENV})")
    from service.thrift.kerberos import ServiceKerberos, parse_protections

    return ServiceKerberos.configured(args.thrift_principal, args.thrift_keytab, args.thrift_host,
                                      parse_protections(args.thrift_qop))
