"""The catalog service's process: the listening sockets, the application and uvicorn's server, until SIGTERM or Ctrl-C.

The listening socket is bound here (port 0 picks a free one) and its address printed before the first
request is taken, so a script can start the server and read where it is. SIGTERM lets requests in flight
finish (up to a few seconds), ends long polls at once, stops the event followers and exits 0. The ``serve``
command (:mod:`service.main`) checks its arguments and calls :func:`serve`.
"""

from __future__ import annotations

import argparse
import signal
import socket
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

import uvicorn

from hms_catalog.cache.budget import DEFAULT_CACHE_MEMORY, MemoryBudget, format_size
from hms_catalog.errors import ConfigurationError
from hms_catalog.manager import CatalogManager
from hms_catalog.registry import adopt_manager
from hms_catalog.state import SharedState, open_definitions
from hms_catalog.state.leases import LEASE_SECONDS_DEFAULT
from service.auth import load_token
from service.companions import Companion, RunningCompanion
from service.defaults import DEFAULT_HOST, DEFAULT_PORT, INSECURE_EXPOSES, PLAN_WAIT_SECONDS, THRIFT_INSECURE_ENV
from service.thrift import ThriftSettings
from service.tokens import NamedToken, load_tokens, stored_tokens

__all__ = ["GRACE_SECONDS", "KEEP_ALIVE_SECONDS", "serve"]

GRACE_SECONDS = 5
KEEP_ALIVE_SECONDS = 60  # clients keep one connection per thread; reopening costs more than keeping it


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
