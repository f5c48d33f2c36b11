"""SASL/GSSAPI (RFC 4752) over thrift's SASL framing, as a secure Hive metastore speaks it.

Written here rather than taken from a SASL library: the GSSAPI mechanisms on PyPI log in from the
process's default ticket cache only, and a catalog needs credentials of its own (one keytab per catalog,
renewed as it goes). The handshake is thrift's ``TSaslTransport`` protocol: frames of one status byte and
a length-prefixed payload until the server says COMPLETE; after it every thrift message travels in a
4-byte length frame, wrapped by GSSAPI when the negotiated layer protects it.
"""

from __future__ import annotations

import struct
from typing import Any

from thrift.transport import TTransport

from hms_catalog.client.sasl_frames import SaslFrames

__all__ = ["GssapiMechanism", "SaslClientTransport", "SaslNegotiationError"]

# thrift's SASL negotiation statuses (TSaslTransport.NegotiationStatus).
START, OK, BAD, ERROR, COMPLETE = 1, 2, 3, 4, 5
_STATUS_NAMES = {BAD: "BAD", ERROR: "ERROR"}
# RFC 4752 security layers, as bits of the server's offer; the client picks the first one offered.
LAYER_NONE, LAYER_INTEGRITY, LAYER_CONFIDENTIALITY = 1, 2, 4
_LAYER_PREFERENCE = (LAYER_NONE, LAYER_CONFIDENTIALITY, LAYER_INTEGRITY)
MAX_NEGOTIATION_BYTES = 1 << 20
_RECEIVE_BUFFER = 1 << 24


class SaslNegotiationError(Exception):
    """The server refused the negotiation (BAD or ERROR with its message) or broke its rules."""


class GssapiMechanism:
    """The client side of GSSAPI as a SASL mechanism over one ``gssapi.SecurityContext``."""

    name = "GSSAPI"

    def __init__(self, context: Any) -> None:
        self._context = context
        self._layer = LAYER_NONE
        self.complete = False

    def initial_response(self) -> bytes:
        return bytes(self._context.step(None) or b"")

    def respond(self, challenge: bytes) -> bytes:
        """The answer to one server challenge: context tokens, then the security-layer choice."""
        if not self._context.complete:
            return bytes(self._context.step(challenge) or b"")
        offer = self._context.unwrap(challenge).message
        if len(offer) != 4:
            raise SaslNegotiationError(f"the server's security-layer offer is {len(offer)} bytes, not 4")
        (word,) = struct.unpack("!I", offer)
        offered = word >> 24
        chosen = next((layer for layer in _LAYER_PREFERENCE if offered & layer), None)
        if chosen is None:
            raise SaslNegotiationError(f"the server offers no SASL security layer this client knows (mask {offered:#x})")
        self._layer = chosen
        receive = 0 if chosen == LAYER_NONE else min(word & 0xFFFFFF, _RECEIVE_BUFFER - 1)
        # The authorization id is the authenticated principal itself: Hive authorizes only that.
        answer = struct.pack("!I", (chosen << 24) | receive) + str(self._context.initiator_name).encode()
        self.complete = True
        return bytes(self._context.wrap(answer, False).message)

    def wrap(self, data: bytes) -> bytes:
        if self._layer == LAYER_NONE:
            return data
        return bytes(self._context.wrap(data, self._layer == LAYER_CONFIDENTIALITY).message)

    def unwrap(self, data: bytes) -> bytes:
        if self._layer == LAYER_NONE:
            return data
        return bytes(self._context.unwrap(data).message)


class SaslClientTransport(SaslFrames):
    """A thrift transport that negotiates SASL on an open ``inner`` transport, then frames every message
    (:class:`SaslFrames`, wrapped by the mechanism's negotiated layer)."""

    def __init__(self, inner: TTransport.TTransportBase, mechanism: GssapiMechanism) -> None:
        super().__init__(inner, mechanism.wrap, mechanism.unwrap)
        self._mechanism = mechanism

    def open(self) -> None:
        """Run the handshake; SaslNegotiationError when the server refuses, thrift's errors on transport."""
        self._send(START, self._mechanism.name.encode("ascii"))
        self._send(OK, self._mechanism.initial_response())
        while True:
            status, payload = self._receive()
            if status == OK:
                self._send(OK, self._mechanism.respond(payload))
            elif status == COMPLETE:
                if not self._mechanism.complete:
                    raise SaslNegotiationError("the server ended the SASL negotiation before the client had finished")
                return
            else:
                said = payload.decode("utf-8", "replace").strip() or "no reason given"
                name = _STATUS_NAMES.get(status, f"status {status}")
                raise SaslNegotiationError(f"the metastore refused the SASL negotiation ({name}): {said}")

    def _send(self, status: int, payload: bytes) -> None:
        self._inner.write(struct.pack(">BI", status, len(payload)) + payload)
        self._inner.flush()

    def _receive(self) -> tuple[int, bytes]:
        status, length = struct.unpack(">BI", self._inner.readAll(5))
        if length > MAX_NEGOTIATION_BYTES:
            raise SaslNegotiationError(f"the server sent a {length}-byte negotiation message; is this a SASL metastore?")
        return status, bytes(self._inner.readAll(length)) if length else b""

