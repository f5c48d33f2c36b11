"""The only module that opens thrift transports to a metastore.

The socket is connected by hand (not through ``TSocket.open``) so that a refused or unreachable URI
raises one plain ``OSError`` without thrift logging a traceback for every address it tried; after that
the socket timeout bounds every read and write of every call.

With a :class:`KerberosLogin`, the connection negotiates SASL/GSSAPI first, with fresh credentials and the
service principal of that URI's host. The handshake is bounded by the connect timeout: a plain metastore
that reads the SASL greeting as the start of a huge thrift message would otherwise hold it for the whole
socket timeout. Every way the handshake fails becomes one :class:`AuthenticationError` naming the
principals, the URI and the likely fix.
"""

from __future__ import annotations

import contextlib
import socket
import struct

from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from hms_catalog.client._sasl import GssapiMechanism, SaslClientTransport, SaslNegotiationError
from hms_catalog.client.config import MetastoreUri
from hms_catalog.client.hive_thrift import MetastoreThriftClient
from hms_catalog.errors import AuthenticationError
from hms_catalog.kerberos.config import SASL_ENABLED
from hms_catalog.kerberos.login import KerberosLogin, describe_gss_error, load_gssapi

__all__ = ["Connection", "open_connection"]


class Connection:
    """One open thrift connection to one metastore URI."""

    def __init__(self, uri: MetastoreUri, transport: TTransport.TTransportBase, client: MetastoreThriftClient):
        self.uri = uri
        self.client = client
        self._transport = transport

    def close(self) -> None:
        """Close the transport; closing twice is harmless."""
        with contextlib.suppress(OSError):
            self._transport.close()


def open_connection(
    uri: MetastoreUri, *, connect_timeout: float, socket_timeout: float, login: KerberosLogin | None = None
) -> Connection:
    """Connect to ``uri``; raises ``OSError`` (refused, unreachable, timed out) when it cannot, and
    :class:`AuthenticationError` when ``login`` is given and SASL/GSSAPI fails."""
    sock = socket.create_connection((uri.host, uri.port), timeout=connect_timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    thrift_socket = TSocket.TSocket(uri.host, uri.port)
    thrift_socket.setHandle(sock)
    transport: TTransport.TTransportBase
    if login is None:
        transport = TTransport.TBufferedTransport(thrift_socket)
    else:
        try:
            transport = _negotiate(uri, thrift_socket, login)
        except BaseException:
            thrift_socket.close()
            raise
    sock.settimeout(socket_timeout)
    protocol = TBinaryProtocol.TBinaryProtocolAccelerated(transport)
    return Connection(uri, transport, MetastoreThriftClient(protocol))


def _negotiate(uri: MetastoreUri, thrift_socket: TSocket.TSocket, login: KerberosLogin) -> SaslClientTransport:
    """Authenticate the open socket as ``login`` to the metastore's service principal on ``uri``'s host."""
    gssapi = load_gssapi()
    service = login.service_principal(uri.host)
    who = f"as {login.principal} to {service} at {uri}"
    credentials = login.credentials()
    context = gssapi.SecurityContext(
        name=gssapi.Name(service, gssapi.NameType.kerberos_principal), creds=credentials, usage="initiate",
        flags=gssapi.RequirementFlag.mutual_authentication | gssapi.RequirementFlag.out_of_sequence_detection,
    )
    transport = SaslClientTransport(thrift_socket, GssapiMechanism(context))
    try:
        transport.open()
    except gssapi.exceptions.GSSError as error:
        raise AuthenticationError(f"Kerberos authentication {who} failed: {describe_gss_error(error)}") from error
    except SaslNegotiationError as error:
        raise AuthenticationError(
            f"Kerberos authentication {who} failed: {error} (the metastore could not accept the ticket: check that "
            f"'{login.config.service_principal_key}' names the principal in the metastore's keytab; a wrong "
            "principal or an outdated keytab fails with 'Checksum failed')"
        ) from error
    except (TTransport.TTransportException, OSError, EOFError, struct.error) as error:
        timed_out = isinstance(error, TimeoutError) or getattr(error, "type", None) == TTransport.TTransportException.TIMED_OUT
        what = "did not answer the SASL negotiation in time" if timed_out else "closed the connection during SASL negotiation"
        raise AuthenticationError(
            f"the metastore at {uri} {what} {who} ({error or type(error).__name__}): it may not use Kerberos "
            f"(then remove '{SASL_ENABLED}'), or it refused the client's ticket (see the metastore's log)"
        ) from error
    return transport
