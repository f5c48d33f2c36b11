"""The thrift server: accepts connections, lets each in (:mod:`.admission`), runs the generated processor.

Each connection is served by one thread of a bounded pool for as long as it stays open, as Hive's own
TThreadPoolServer does; the pool's size bounds the clients served at once. With Kerberos settings the
endpoint lets in SASL GSSAPI clients only (:mod:`.sasl`).
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from hive_metastore import ThriftHiveMetastore
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport import TTransport

from hms_catalog.client.metastore import MetastoreClient
from hms_catalog.manager import CatalogManager
from service.access import AccessPolicy
from service.audit import AuditLog
from service.defaults import DEFAULT_PRIMARY, DEFAULT_THREADS
from service.thrift.admission import Admission
from service.thrift.changes import is_change
from service.thrift.context import LISTING_WAIT_SECONDS, EndpointContext
from service.thrift.forwarder import Forwarder
from service.thrift.handler import ConnectionHandler
from service.thrift.health import PROBE_INTERVAL_SECONDS, PROBE_TIMEOUT_SECONDS, CatalogHealth
from service.thrift.kerberos import ServiceKerberos
from service.thrift.names import FederatedNames
from service.thrift.relay import refuse_call, relay_call

__all__ = ["DEFAULT_PRIMARY", "DEFAULT_THREADS", "ThriftEndpoint", "ThriftSettings", "bind", "is_loopback"]

_log = logging.getLogger(__name__)

_ACCEPT_POLL_SECONDS = 0.5


@dataclass(frozen=True)
class ThriftSettings:
    host: str = "127.0.0.1"
    port: int = 9083
    primary: str = DEFAULT_PRIMARY
    threads: int = DEFAULT_THREADS
    listing_wait: float = LISTING_WAIT_SECONDS
    probe_interval: float = PROBE_INTERVAL_SECONDS
    probe_timeout: float = PROBE_TIMEOUT_SECONDS
    insecure: bool = False  # serve --thrift-insecure: bound beyond this machine, authenticating no client
    kerberos: ServiceKerberos | None = None  # serve --thrift-principal/--thrift-keytab: SASL GSSAPI clients only

    @property
    def exposed(self) -> bool:
        """Whether clients of other machines are served without authenticating them."""
        return self.kerberos is None and not is_loopback(self.host)


_LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost", "ip6-loopback"})


def is_loopback(host: str) -> bool:
    """Whether ``host`` reaches this machine only: a loopback address (``127.0.0.1``, ``::1``) or ``localhost``.
    ``0.0.0.0`` and ``::`` (every address) are not, nor is any other name: one this machine resolves to a
    loopback address today may resolve elsewhere tomorrow."""
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """The endpoint's listening socket (port 0 picks a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(512)
    return listener


class _Processor(ThriftHiveMetastore.Processor):
    """The generated processor, relaying calls the bindings lack instead of answering 'Invalid method name'."""

    def __init__(self, handler: ConnectionHandler) -> None:
        super().__init__(handler)
        self._endpoint = handler.endpoint

    def process(self, iprot: Any, oprot: Any) -> bool:
        with self._endpoint.manager.statement():  # each catalog's heads read once for the call
            return self._process(iprot, oprot)

    def _process(self, iprot: Any, oprot: Any) -> bool:
        name, kind, seqid = iprot.readMessageBegin()
        known = self._processMap.get(name)
        if known is not None:
            known(self, seqid, iprot, oprot)
            return True
        if is_change(name):
            refuse_call(name, seqid, iprot, oprot, f"{name}: a change the catalog endpoint does not know; make it on the "
                                                   "metastore directly")
            return True
        catalog = self._endpoint.manager.catalog(self._endpoint.names.primary)
        primary = catalog.client
        if not isinstance(primary, MetastoreClient):
            refuse_call(name, seqid, iprot, oprot, f"{name}: unknown to the endpoint, and its primary catalog has no metastore")
            return True
        down = self._endpoint.health.refusal(self._endpoint.names.primary, catalog)
        if down is not None:
            refuse_call(name, seqid, iprot, oprot, f"{name}: {down}")
            return True
        relay_call(primary, name, kind, seqid, iprot, oprot)
        return True


class ThriftEndpoint:
    """The ThriftHiveMetastore server of one service process, on its catalog manager."""

    def __init__(self, manager: CatalogManager, audit: AuditLog, settings: ThriftSettings,
                 listener: socket.socket | None = None, *, principals: AccessPolicy | None = None) -> None:
        """``principals``: the grants of Kerberos principals (the tokens file's ``principals``), for connections
        that authenticate with SASL."""
        self.settings = settings
        self.listener = listener if listener is not None else bind(settings.host, settings.port)
        names = FederatedNames(settings.primary, lambda: [d.name for d in manager.definitions()])
        health = CatalogHealth(manager, probe_interval=settings.probe_interval, probe_timeout=settings.probe_timeout)
        self.context = EndpointContext(manager, names, Forwarder(manager, names, health), audit,
                                       ThreadPoolExecutor(max_workers=8, thread_name_prefix="thrift-listing"), health,
                                       listing_wait=settings.listing_wait, principals=principals)
        credentials = None if settings.kerberos is None else settings.kerberos.credentials()
        self._admission = Admission(settings.kerberos, credentials, audit, principals)
        self._workers = ThreadPoolExecutor(max_workers=settings.threads, thread_name_prefix="thrift-conn")
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._acceptor = threading.Thread(target=self._accept, name="thrift-accept", daemon=True)

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.listener.getsockname()[:2]
        return host, port

    @property
    def uri(self) -> str:
        host, port = self.address
        return f"thrift://{f'[{host}]' if ':' in host else host}:{port}"

    def health(self) -> dict[str, Any]:
        with self._lock:
            open_connections = len(self._connections)
        kerberos = self.settings.kerberos
        return {"uri": self.uri, "primary": self.settings.primary, "connections": open_connections,
                "threads": self.settings.threads, "unreachable": self.context.health.report(),
                "authentication": "none" if kerberos is None else "kerberos",
                **({} if kerberos is None else {"principal": kerberos.principal, "qop": list(kerberos.protections)})}

    def engine_options(self) -> dict[str, str]:
        return {}

    def wait_ready(self, timeout: float) -> bool:
        return self._acceptor.is_alive()

    def start(self) -> ThriftEndpoint:
        self.listener.settimeout(_ACCEPT_POLL_SECONDS)
        self._acceptor.start()
        return self

    def stop(self) -> None:
        """Stop accepting, close open connections, wait for their threads."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self.context.health.stop()
        if self._acceptor.is_alive():
            self._acceptor.join()
        self.listener.close()
        with self._lock:
            open_connections = list(self._connections)
        for connection in open_connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        self._workers.shutdown(wait=True)
        self.context.listings.shutdown(wait=False, cancel_futures=True)

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                connection, address = self.listener.accept()
            except TimeoutError:
                continue
            except OSError as error:
                if self._stopping.is_set():
                    return
                # out of descriptors, say: the clients connected go on; accepting again after a pause
                _log.warning("thrift endpoint could not accept a connection: %s", error)
                self._stopping.wait(_ACCEPT_POLL_SECONDS)
                continue
            connection.settimeout(None)
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._connections.add(connection)
            self._workers.submit(self._serve, connection, f"{address[0]}:{address[1]}")

    def _serve(self, connection: socket.socket, address: str) -> None:
        try:
            admitted = self._admission.admit(connection, address)
            if admitted is None:
                return
            protocol = TBinaryProtocolAccelerated(admitted.transport)
            processor = _Processor(ConnectionHandler(self.context, admitted.caller))
            while not self._stopping.is_set():
                processor.process(protocol, protocol)
        except (TTransport.TTransportException, EOFError, ConnectionError, OSError):
            pass  # the client went away (or the endpoint is stopping)
        except Exception:  # noqa: BLE001 - one connection's failure is logged; the server goes on
            _log.exception("thrift connection from %s failed", address)
        finally:
            with self._lock:
                self._connections.discard(connection)
            with contextlib.suppress(OSError):
                connection.close()
