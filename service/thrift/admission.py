"""Which transport a new connection speaks, and whether it is let in: plain thrift, or SASL GSSAPI, or refused.

Hive's clients speak the binary protocol over a buffered transport, or a framed one with
``hive.metastore.thrift.framed.transport.enabled``; a strict binary message begins with the protocol's version
bytes (0x80 0x01), a frame with its length (0 below 16 MiB), and a SASL negotiation with its status byte (1 to
5). The first bytes are peeked, not read, so each connection is told apart before anything is answered.

An endpoint with Kerberos (``serve --thrift-principal``) lets in SASL clients only, once authenticated; every
other connection is refused at once, never left to wait: a plain client's first call is answered with an
application error saying the endpoint needs Kerberos, so its user reads why. An endpoint without Kerberos
answers a SASL client's START with BAD, saying it speaks plain thrift. Each refusal is logged and audited
(``statement`` ``thrift connect``, outcome ``refused``, the client's address and the reason).
"""

from __future__ import annotations

import datetime
import logging
import socket
from dataclasses import dataclass
from typing import Any

from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TMessageType
from thrift.transport import TSocket, TTransport

from service.access import AccessPolicy
from service.audit import AuditLog
from service.thrift.context import Caller
from service.thrift.kerberos import ServiceKerberos
from service.thrift.sasl import START, SaslRefusal, negotiate, read_negotiation, tell_refusal

__all__ = ["NEGOTIATION_SECONDS", "Admission", "Admitted", "audit_refusal"]

_log = logging.getLogger(__name__)

# How long a connection may take to authenticate (or, refused, to send its first call): a client that connects
# and says nothing must not hold one of the endpoint's threads. GSSAPI takes two round trips and no KDC call here.
NEGOTIATION_SECONDS = 10.0
_STRICT_BINARY = b"\x80\x01"
_SASL_STATUSES = frozenset(range(1, 6))  # START, OK, BAD, ERROR, COMPLETE
NEEDS_KERBEROS = ("this metastore endpoint requires Kerberos: connect with SASL GSSAPI "
                  "(hive.metastore.sasl.enabled=true and hive.metastore.kerberos.principal={principal})")
SPEAKS_PLAIN = ("this metastore endpoint speaks plain thrift, without SASL: remove hive.metastore.sasl.enabled "
                "from the client's settings, or start the endpoint with --thrift-principal and --thrift-keytab")


@dataclass(frozen=True)
class Admitted:
    """A connection let in: the transport its calls are read from and written to, and who the caller is."""

    transport: TTransport.TTransportBase
    caller: Caller


class Admission:
    """Lets connections in as ``kerberos`` says (None: plain thrift only); ``credentials`` are the acceptor's."""

    def __init__(self, kerberos: ServiceKerberos | None, credentials: Any, audit: AuditLog,
                 principals: AccessPolicy | None = None) -> None:
        self.kerberos = kerberos
        self._credentials = credentials
        self._principals = principals
        self._audit = audit

    def admit(self, connection: socket.socket, address: str) -> Admitted | None:
        """The connection's transport and caller; None when it closed at once or was refused (and told why)."""
        first = connection.recv(2, socket.MSG_PEEK)
        if not first:
            return None
        handle = TSocket.TSocket()
        handle.handle = connection
        if self.kerberos is None:
            if first[0] in _SASL_STATUSES:  # a frame's length begins with 0 below 16 MiB; SASL with its status
                self._refuse(address, "began a SASL negotiation, and this endpoint speaks plain thrift only")
                tell_refusal(handle, SPEAKS_PLAIN)
                return None
            plain = TTransport.TBufferedTransport(handle) if first == _STRICT_BINARY else TTransport.TFramedTransport(handle)
            return Admitted(plain, Caller(address))
        if first[0] in _SASL_STATUSES and first[0] != START:  # a SASL client whose own side failed says so, as ERROR
            connection.settimeout(NEGOTIATION_SECONDS)
            self._refuse(address, _client_gave_up(handle))
            return None
        if first[0] != START:
            self._refuse(address, "sent a plain thrift call, and this endpoint requires Kerberos (SASL GSSAPI)")
            connection.settimeout(NEGOTIATION_SECONDS)
            _answer_plain_client(handle, first, NEEDS_KERBEROS.format(principal=self.kerberos.principal))
            return None
        connection.settimeout(NEGOTIATION_SECONDS)
        inner = TTransport.TBufferedTransport(handle)
        try:
            transport = negotiate(inner, self.kerberos, self._credentials, self._unmapped)
        except SaslRefusal as refusal:
            self._refuse(address, str(refusal), refusal.principal)
            tell_refusal(inner, str(refusal))  # after the audit line: a client told may look for it at once
            return None
        except (TTransport.TTransportException, EOFError, OSError) as error:
            # No refusal of ours: the client gave up (its own Kerberos failed after START) or said nothing in time.
            _log.warning("thrift client %s left the SASL negotiation unfinished: %s", address, error or type(error).__name__)
            return None
        connection.settimeout(None)
        principal = transport.principal
        _log.info("thrift client %s authenticated as %s (%s)", address, principal, transport.protection)
        return Admitted(transport, Caller(address, user=_short_name(principal), principal=principal))

    def _unmapped(self, principal: str) -> str | None:
        """Why an authenticated principal is not let in: no entry of the tokens file lists it, so it may do nothing."""
        if self._principals is not None and self._principals.principal(principal) is not None:
            return None
        return (f"principal {principal} may do nothing here: no entry of the service's tokens file (serve --tokens) "
                "lists it in its \"principals\"")

    def _refuse(self, address: str, reason: str, principal: str | None = None) -> None:
        _log.warning("thrift client %s%s refused: %s", address, f" ({principal})" if principal else "", reason)
        audit_refusal(self._audit, "thrift connect", address, principal, reason)


def audit_refusal(audit: AuditLog, statement: str, address: str, principal: str | None, reason: str) -> None:
    """The audit line of something the endpoint refused before any catalog was asked (no catalog, no version). Its
    ``token`` is the principal once the negotiation proved one, as the change gate's lines name it."""
    audit.append({"time": _now(), "token": principal or "thrift:anonymous", "catalog": None, "statement": statement,
                  "version_before": None, "version_after": None, "outcome": "refused", "via": "thrift", "client": address,
                  "user": _short_name(principal) if principal else None, "reason": reason})


def _short_name(principal: str) -> str:
    """The user a principal is, as Hadoop's default ``auth_to_local`` rule makes it: ``etl/host@REALM`` is ``etl``."""
    return principal.split("@", 1)[0].split("/", 1)[0]


def _client_gave_up(handle: TSocket.TSocket) -> str:
    """What a SASL client that failed before START says (Java's client sends ERROR with its reason)."""
    try:
        status, payload = read_negotiation(handle)
    except (SaslRefusal, TTransport.TTransportException, OSError, EOFError) as error:
        return f"sent no SASL negotiation: {error}"
    said = payload.decode("utf-8", "replace").strip() or "no reason given"
    return f"the client's own Kerberos failed before it began (SASL status {status}): {said}"


def _answer_plain_client(handle: TSocket.TSocket, first: bytes, reason: str) -> None:
    """Answer the plain client's first call with an application error saying ``reason``, as a metastore answers
    a call it cannot take: its user sees the reason instead of a connection reset."""
    transport: TTransport.TTransportBase = (TTransport.TBufferedTransport(handle) if first == _STRICT_BINARY
                                            else TTransport.TFramedTransport(handle))
    protocol = TBinaryProtocol(transport)
    try:
        name, _, seqid = protocol.readMessageBegin()
        error = TApplicationException(TApplicationException.UNKNOWN, reason)
        protocol.writeMessageBegin(name, TMessageType.EXCEPTION, seqid)
        error.write(protocol)
        protocol.writeMessageEnd()
        transport.flush()
    except Exception as error:  # noqa: BLE001 - whatever the bytes were, the connection is refused: nothing to answer
        _log.debug("a refused plain client sent no readable call: %s", error)


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
