"""SASL GSSAPI on the endpoint: the server side of thrift's SASL transport, as a Kerberized Hive Metastore speaks it.

A client with ``hive.metastore.sasl.enabled`` opens each connection with thrift's SASL negotiation: messages of
one status byte (START, OK, BAD, ERROR, COMPLETE), a 4-byte length and a payload. The endpoint answers as
HMS's Kerberos server does (Hive's ``HadoopThriftAuthBridge``): GSSAPI (RFC 4752) accepted with the service
principal's keytab, then a security-layer offer of the protections it allows (``hadoop.rpc.protection``:
``auth``, ``auth-int``, ``auth-conf``) from which the client picks one. After it every thrift message travels
in a 4-byte length frame, signed (``auth-int``) or sealed (``auth-conf``) by GSSAPI when the client chose so.

Every way a negotiation fails is a :class:`SaslRefusal` whose message is also sent to the client (as BAD),
so the client's error says why. No SASL library on PyPI has a server side; this is written on the ``gssapi``
bindings the client side (``hms_catalog.client``) uses too.
"""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Callable
from typing import Any

from thrift.transport import TTransport

from hms_catalog.client.sasl_frames import MAX_FRAME_BYTES, SaslFrames
from hms_catalog.kerberos.login import describe_gss_error, load_gssapi
from service.thrift.kerberos import LAYER_BITS, Protection, ServiceKerberos

__all__ = ["MAX_FRAME_BYTES", "SaslRefusal", "SaslServerTransport", "negotiate", "read_negotiation", "tell_refusal"]

START, OK, BAD, ERROR, COMPLETE = 1, 2, 3, 4, 5  # thrift's TSaslTransport.NegotiationStatus
MECHANISM = "GSSAPI"
MAX_NEGOTIATION_BYTES = 1 << 20
_RECEIVE_BUFFER = 0xFFFFFF  # the largest frame the endpoint says it takes: its 3-byte field's most
_NAMES = {bits: name for name, bits in LAYER_BITS.items()}


class SaslRefusal(Exception):
    """A negotiation the endpoint refused (the message says why, naming the principal once it is known)."""

    def __init__(self, message: str, principal: str | None = None) -> None:
        super().__init__(message)
        self.principal = principal


def read_negotiation(inner: Any) -> tuple[int, bytes]:
    """One negotiation message: its status and payload."""
    status, length = struct.unpack(">BI", inner.readAll(5))
    if length > MAX_NEGOTIATION_BYTES:
        raise SaslRefusal(f"a negotiation message of {length} bytes: not a SASL client")
    return status, bytes(inner.readAll(length)) if length else b""


def _send(inner: Any, status: int, payload: bytes) -> None:
    inner.write(struct.pack(">BI", status, len(payload)) + payload)
    inner.flush()


def tell_refusal(inner: Any, reason: str) -> None:
    """Send BAD with ``reason``: a SASL client shows it as the server's answer. A client gone is nobody to tell."""
    with contextlib.suppress(TTransport.TTransportException, OSError):
        _send(inner, BAD, reason.encode("utf-8"))


def negotiate(inner: Any, service: ServiceKerberos, credentials: Any,
              refusal: Callable[[str], str | None] = lambda principal: None) -> SaslServerTransport:
    """Run the negotiation on the open transport ``inner``; the data transport of the authenticated client.

    :class:`SaslRefusal` says why the client is refused; the caller records it, then tells the client
    (:func:`tell_refusal`). thrift's transport errors (the client went away, the socket timed out) propagate.
    ``refusal``: why an authenticated principal is not let in (None: it is), asked before the negotiation
    completes, so such a client learns it from the negotiation's answer rather than from a closed connection.
    """
    gssapi = load_gssapi()
    status, mechanism = read_negotiation(inner)
    if status != START:
        raise SaslRefusal(f"a SASL negotiation begins with START, not status {status}")
    name = mechanism.decode("ascii", "replace")
    if name != MECHANISM:
        raise SaslRefusal(f"SASL mechanism {name} is not accepted: this endpoint authenticates with Kerberos (GSSAPI) "
                          "only, and issues no delegation tokens (DIGEST-MD5)")
    context = gssapi.SecurityContext(creds=credentials, usage="accept")
    principal: str | None = None
    try:
        while True:
            token = _response(inner)
            answer = context.step(token)
            if context.complete:
                principal = str(context.initiator_name)
                if answer:  # the mutual-authentication token; the client answers it with an empty response
                    _send(inner, OK, bytes(answer))
                    _response(inner)
                break
            _send(inner, OK, bytes(answer or b""))
        offer = struct.pack("!I", (service.offer << 24) | _RECEIVE_BUFFER)
        _send(inner, OK, bytes(context.wrap(offer, False).message))
        protection = _chosen(context.unwrap(_response(inner)).message, service, principal)
    except gssapi.exceptions.GSSError as error:
        raise SaslRefusal(f"Kerberos authentication to {service.principal} failed: {describe_gss_error(error)}",
                          principal) from error
    refused = refusal(principal)
    if refused is not None:
        raise SaslRefusal(refused, principal)
    _send(inner, COMPLETE, b"")
    return SaslServerTransport(inner, context, protection, principal)


def _response(inner: Any) -> bytes:
    status, payload = read_negotiation(inner)
    if status not in (OK, COMPLETE):  # a Java client sends its last response as COMPLETE
        said = payload.decode("utf-8", "replace").strip() or "no reason given"
        raise SaslRefusal(f"the client ended the SASL negotiation (status {status}): {said}")
    return payload


def _chosen(answer: bytes, service: ServiceKerberos, principal: str) -> Protection:
    """The protection the client chose, from its answer to the offer; it may act as itself only."""
    if len(answer) < 4:
        raise SaslRefusal(f"the client's security-layer answer is {len(answer)} bytes, not at least 4", principal)
    bits = answer[0]
    protection = _NAMES.get(bits)
    if protection is None or not bits & service.offer:
        raise SaslRefusal(f"the client chose security layer {bits:#x}; this endpoint allows "
                          f"{', '.join(service.protections)} (--thrift-qop)", principal)
    authorization = answer[4:].decode("utf-8", "replace")
    if authorization and authorization != principal:
        raise SaslRefusal(f"{principal} may not act as {authorization}: this endpoint lets a client act as itself only",
                          principal)
    return protection


class SaslServerTransport(SaslFrames):
    """The negotiated connection: thrift messages in length frames (:class:`SaslFrames`), wrapped when the
    protection says so."""

    def __init__(self, inner: Any, context: Any, protection: Protection, principal: str) -> None:
        super().__init__(inner, self._wrap, self._unwrap)
        self._context = context
        self.protection = protection
        self.principal = principal

    def _wrap(self, data: bytes) -> bytes:
        if self.protection == "auth":
            return data
        return bytes(self._context.wrap(data, self.protection == "auth-conf").message)

    def _unwrap(self, data: bytes) -> bytes:
        if self.protection == "auth":
            return data
        unwrapped = self._context.unwrap(data)
        if self.protection == "auth-conf" and not unwrapped.encrypted:
            raise ValueError("a frame arrived unsealed on a connection that chose auth-conf")
        return bytes(unwrapped.message)

