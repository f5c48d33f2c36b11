"""``hms-catalog serve``: run the catalog service in the foreground until SIGTERM or Ctrl-C.

The listening socket is bound here (port 0 picks a free one) and its address printed before the first
request is taken, so a script can start the server and read where it is. SIGTERM lets requests in flight
finish (up to a few seconds), ends long polls at once, stops the event followers and exits 0.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import socket
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

import uvicorn

from hms_catalog.cache.budget import DEFAULT_CACHE_MEMORY, MemoryBudget, format_size
from hms_catalog.errors import ConfigurationError, HmsCatalogError
from hms_catalog.manager import CatalogManager
from hms_catalog.registry import adopt_manager
from hms_catalog.state import STORE_ENV, STORE_PASSWORD_ENV, SharedState, open_definitions
from hms_catalog.state.leases import LEASE_SECONDS_DEFAULT
from service.auth import load_token
from service.companions import Companion, RunningCompanion, companions
from service.iceberg_rest.plan_runs import PLAN_WAIT_SECONDS
from service.thrift import ThriftSettings
from service.thrift.kerberos import ALL_PROTECTIONS, ServiceKerberos, parse_protections
from service.thrift.server import DEFAULT_PRIMARY, DEFAULT_THREADS
from service.tokens import NamedToken, load_tokens, stored_tokens

__all__ = ["COMMAND", "ServeCommand"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8181
THRIFT_PORT_ENV = "HMS_CATALOG_THRIFT_PORT"
THRIFT_HOST_ENV = "HMS_CATALOG_THRIFT_HOST"
THRIFT_PRIMARY_ENV = "HMS_CATALOG_THRIFT_PRIMARY"
THRIFT_INSECURE_ENV = "HMS_CATALOG_THRIFT_INSECURE"
THRIFT_PRINCIPAL_ENV = "HMS_CATALOG_THRIFT_PRINCIPAL"
THRIFT_KEYTAB_ENV = "HMS_CATALOG_THRIFT_KEYTAB"
THRIFT_QOP_ENV = "HMS_CATALOG_THRIFT_QOP"
PLAN_WAIT_ENV = "HMS_CATALOG_ICEBERG_PLAN_WAIT"
CACHE_MEMORY_ENV = "HMS_CATALOG_CACHE_MEMORY"
EVENT_LEASE_ENV = "HMS_CATALOG_EVENT_LEASE"
MIN_EVENT_LEASE = 1.0
INSECURE_EXPOSES = ("authenticates no client: whoever reaches it reads every catalog of this service and changes "
                    "those with 'thrift.access'='write'")
GRACE_SECONDS = 5
KEEP_ALIVE_SECONDS = 60  # clients keep one connection per thread; reopening costs more than keeping it


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
            cache_memory = _cache_memory(args.cache_memory)
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
                thrift = ThriftSettings(host=args.thrift_host, port=port, primary=args.thrift_primary,
                                        threads=args.thrift_threads,
                                        insecure=args.thrift_insecure or _env_flag(THRIFT_INSECURE_ENV),
                                        kerberos=_thrift_kerberos(args))
            return serve(home, host=args.host, port=args.port, token_file=args.token_file, tokens_file=args.tokens,
                         tls_cert=args.tls_cert, tls_key=args.tls_key, args=args, companions=self._companions,
                         store=args.store, store_password_file=args.store_password_file, thrift=thrift,
                         plan_wait=plan_wait, cache_memory=cache_memory, event_lease=lease)
        except HmsCatalogError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1


COMMAND = ServeCommand()


class _Server(uvicorn.Server):
    """uvicorn's server, also telling the application when it begins to stop (long polls end at once).

    The application is told as the shutdown begins, on the event loop (at most uvicorn's 0.1 s tick after the
    signal), never in the signal handler: a handler runs in the main thread between any two bytecodes, so when it
    set the event itself, a second SIGTERM arriving while the first handler held the event's lock (inside
    ``Event.set``) waited for that lock forever and the service never exited (seen in the suite: both handlers'
    frames on the main thread's stack)."""

    def __init__(self, config: uvicorn.Config, stopping: threading.Event) -> None:
        super().__init__(config)
        self._stopping = stopping

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._stopping.set()
        await super().shutdown(sockets=sockets)


def serve(home: Path, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, token_file: Path | None = None,
          tokens_file: Path | None = None, tls_cert: Path | None = None, tls_key: Path | None = None,
          args: argparse.Namespace | None = None, companions: Sequence[Companion] = (), store: str | None = None,
          store_password_file: Path | None = None, thrift: ThriftSettings | None = None,
          plan_wait: float = PLAN_WAIT_SECONDS, cache_memory: MemoryBudget | str | int = DEFAULT_CACHE_MEMORY,
          event_lease: float = LEASE_SECONDS_DEFAULT) -> int:
    """Run the service on ``home``'s catalogs until stopped; 0 after a clean stop.

    ``tokens_file``: named tokens (``--tokens``), checked before anything starts. ``companions`` (``serve
    --spark-connect``) start as the parsed ``serve`` options ``args`` ask. ``store``: the catalog store (a
    PostgreSQL URL replicas share; default SQLite in ``home``): this process is one replica on it. ``thrift``:
    also serve the catalogs as a Hive Metastore (``serve --thrift-port``): with Kerberos on any address, else on a
    loopback address unless its ``insecure`` says another is meant (the endpoint then authenticates no client).
    ``plan_wait``: seconds an Iceberg scan plan request waits before answering ``submitted`` (``--iceberg-plan-wait``).
    ``cache_memory``: the memory budget of every catalog's caches (``--cache-memory``): a :class:`MemoryBudget`, or
    a size such as ``"2GiB"``, a number of bytes, or ``"unlimited"``. ``event_lease``: seconds an event follower's
    lease lasts unrenewed (``--event-lease``), which bounds how long a dead replica's catalogs go unfollowed.
    """
    budget = MemoryBudget.parse(cache_memory)
    if (tls_cert is None) != (tls_key is None):
        raise ConfigurationError("--tls-cert and --tls-key go together: give both or neither")
    for option, path in (("--tls-cert", tls_cert), ("--tls-key", tls_key)):
        if path is not None and not path.is_file():
            raise ConfigurationError(f"{option} {path}: no such file")
    if thrift is not None and thrift.exposed and not thrift.insecure:
        raise ConfigurationError(
            f"--thrift-host {thrift.host} is reached from other machines, and the thrift endpoint {INSECURE_EXPOSES}; "
            f"give it Kerberos (--thrift-principal, --thrift-keytab), bind it to 127.0.0.1, or pass --thrift-insecure "
            f"(${THRIFT_INSECURE_ENV}=1) on a trusted network")
    token, token_path = load_token(home, token_file)
    named: tuple[NamedToken, ...] = ()
    if tokens_file is not None:
        named, warnings = load_tokens(tokens_file, token)
        for warning in warnings:
            print(warning, file=sys.stderr, flush=True)
    definitions = open_definitions(home, store, password_file=store_password_file)
    definitions.list()  # reach (and migrate) the store now: a wrong URL or password stops the start, saying which
    shared = SharedState(definitions, lease_seconds=event_lease)
    if tokens_file is not None:
        shared.tokens.replace(stored_tokens(named))  # every replica on this store accepts them from now on
    manager = adopt_manager(CatalogManager(definitions, shared=shared, cache_memory=budget))
    listener = _bind(host, port)
    thrift_listener = None
    if thrift is not None:
        try:
            thrift_listener = _bind(thrift.host, thrift.port)
        except BaseException:
            listener.close()
            raise
    stopping = threading.Event()
    bound_host, bound_port = listener.getsockname()[:2]
    scheme = "https" if tls_cert else "http"
    shown_host = f"[{bound_host}]" if ":" in bound_host else bound_host
    url = f"{scheme}://{shown_host}:{bound_port}"
    running: dict[str, RunningCompanion] = {}
    try:
        for companion in companions:
            started = None if args is None else companion.start(args, service_url=url, token=token, host=bound_host, home=home)
            if started is not None:
                running[companion.name] = started
    except BaseException:
        for started in running.values():
            started.stop()
        listener.close()
        if thrift_listener is not None:
            thrift_listener.close()
        raise
    from service.app import create_app  # FastAPI and the routes: loaded by serve only, not by every CLI run

    app = create_app(manager, token, tokens=named, stopping=stopping, companions=running, thrift=thrift, plan_wait=plan_wait,
                     thrift_listener=thrift_listener)
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=GRACE_SECONDS,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        ssl_certfile=str(tls_cert) if tls_cert else None, ssl_keyfile=str(tls_key) if tls_key else None,
    )
    server = _Server(config, stopping)
    print(f"hms-catalog service at {url} for {home} (token in {token_path})", file=sys.stderr, flush=True)
    if thrift_listener is not None and thrift is not None:
        thrift_host, thrift_port = thrift_listener.getsockname()[:2]
        shown = f"[{thrift_host}]" if ":" in thrift_host else thrift_host
        secured = "" if thrift.kerberos is None else (f", Kerberos as {thrift.kerberos.principal}, "
                                                      f"qop {','.join(thrift.kerberos.protections)}")
        print(f"hms-catalog thrift endpoint at thrift://{shown}:{thrift_port} (primary catalog {thrift.primary}{secured})",
              file=sys.stderr, flush=True)
        if thrift.exposed:
            print(f"warning: the thrift endpoint at thrift://{shown}:{thrift_port} {INSECURE_EXPOSES} "
                  "(--thrift-insecure)", file=sys.stderr, flush=True)
    print(f"catalog store: {definitions.path} (replica {manager.shared.replica if manager.shared else '-'}); "
          f"cache memory {format_size(budget.limit)}", file=sys.stderr, flush=True)
    # uvicorn re-raises the stop signal once it has shut down; handlers that do nothing make that a clean exit.
    previous = {sig: signal.signal(sig, _ignore) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        server.run(sockets=[listener])
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        listener.close()
        for started in running.values():
            started.stop()
    print("hms-catalog service stopped", file=sys.stderr, flush=True)
    return 0 if server.started else 1


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
    return ServiceKerberos.configured(args.thrift_principal, args.thrift_keytab, args.thrift_host,
                                      parse_protections(args.thrift_qop))


def _ignore(sig: int, frame: FrameType | None) -> None:
    """A stop signal after the server has stopped: nothing left to do."""


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and without it
    # every answer waits ~40 ms for the client's delayed ACK (headers and body go as two writes).
    listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as error:
        listener.close()
        raise ConfigurationError(f"cannot listen on {host}:{port}: {error.strerror}") from error
    listener.listen(2048)
    listener.set_inheritable(True)
    return listener
