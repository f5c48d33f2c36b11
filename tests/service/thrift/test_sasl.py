"""The pure parts of the endpoint's Kerberos: protections as HMS names them, ``_HOST`` as Hadoop replaces it, the
loopback rule with Kerberos, and the SASL frames after the negotiation (a fake GSSAPI context: the real one is
tested against the KDC in tests/kerberos/test_thrift_endpoint.py)."""

from __future__ import annotations

import json
import socket
import struct
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
from thrift.transport import TTransport

from hms_catalog.errors import ConfigurationError
from service.thrift.kerberos import ServiceKerberos, parse_protections, server_principal
from service.thrift.sasl import SaslRefusal, SaslServerTransport, negotiate
from service.thrift.server import ThriftSettings
from tests.service.thrift.conftest import Endpoint


class _Wire:
    """Both directions of a connection: what the peer sent (``incoming``) and what was written (``sent``)."""

    def __init__(self, incoming: bytes = b"") -> None:
        self._incoming = BytesIO(incoming)
        self.sent = bytearray()

    def readAll(self, size: int) -> bytes:  # noqa: N802 - thrift's name
        data = self._incoming.read(size)
        if len(data) < size:
            raise EOFError("the peer closed")
        return data

    def write(self, data: bytes) -> None:
        self.sent += data

    def flush(self) -> None:
        pass

    def isOpen(self) -> bool:  # noqa: N802
        return True


@dataclass
class _Unwrapped:
    message: bytes
    encrypted: bool


class _Context:
    """A GSSAPI context that 'seals' by reversing the bytes and marks what it sealed."""

    def wrap(self, data: bytes, encrypt: bool) -> Any:
        return _Unwrapped((b"S" if encrypt else b"I") + data[::-1], encrypt)

    def unwrap(self, data: bytes) -> Any:
        return _Unwrapped(data[1:][::-1], data[:1] == b"S")


def _frame(payload: bytes) -> bytes:
    return struct.pack("!i", len(payload)) + payload


def test_protections_take_sasls_and_hadoops_names() -> None:
    assert parse_protections("auth-conf, auth") == ("auth-conf", "auth")
    assert parse_protections("privacy,integrity,authentication,privacy") == ("auth-conf", "auth-int", "auth")
    with pytest.raises(ConfigurationError, match=r"--thrift-qop: 'secret' is not a protection"):
        parse_protections("auth,secret")


def test_host_pattern_is_the_bound_address_canonical_name_and_this_machines_for_every_address() -> None:
    names = {"127.0.0.1": "LocalHost", "10.0.0.7": "Meta-1.Example.COM", "vm": "vm.example.com"}

    def resolve(host: str) -> str:
        return names[host]

    def own() -> str:
        return "vm"

    assert server_principal("hive/_HOST@EXAMPLE.COM", "127.0.0.1", resolve=resolve, own_name=own) == "hive/localhost@EXAMPLE.COM"
    assert server_principal("hive/_HOST@EXAMPLE.COM", "10.0.0.7", resolve=resolve, own_name=own) == "hive/meta-1.example.com@EXAMPLE.COM"
    for every in ("0.0.0.0", "::", "[::]"):
        assert server_principal("hive/_HOST@EXAMPLE.COM", every, resolve=resolve, own_name=own) == "hive/vm.example.com@EXAMPLE.COM"
    assert server_principal("hive/meta.example.com@EXAMPLE.COM", "0.0.0.0", resolve=resolve, own_name=own) == \
        "hive/meta.example.com@EXAMPLE.COM"


def test_a_kerberized_endpoint_is_not_exposed_on_any_address() -> None:
    """The loopback rule: an endpoint without Kerberos beyond loopback is exposed (needs --thrift-insecure)."""
    kerberos = ServiceKerberos("hive/vm@EXAMPLE.COM", Path("hive.keytab"))
    assert not ThriftSettings(host="0.0.0.0", kerberos=kerberos).exposed
    assert not ThriftSettings(host="10.0.0.7", kerberos=kerberos).exposed
    assert ThriftSettings(host="0.0.0.0").exposed and ThriftSettings(host="10.0.0.7").exposed
    assert not ThriftSettings(host="127.0.0.1").exposed and not ThriftSettings(host="::1").exposed


def test_a_malformed_principal_or_a_missing_keytab_stops_the_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"--thrift-principal must be of the form service/host@REALM"):
        ServiceKerberos.configured("hive@EXAMPLE.COM", tmp_path / "k", "127.0.0.1")
    with pytest.raises(ConfigurationError, match=r"--thrift-keytab .*: no such file"):
        ServiceKerberos.configured("hive/_HOST@EXAMPLE.COM", tmp_path / "missing.keytab", "127.0.0.1")
    (tmp_path / "not.keytab").write_bytes(b"hello")
    with pytest.raises(ConfigurationError, match=r"is not a Kerberos keytab"):
        ServiceKerberos.configured("hive/_HOST@EXAMPLE.COM", tmp_path / "not.keytab", "127.0.0.1")


def _as_sent(marker: bytes, data: bytes) -> bytes:
    """``data`` as the fake context wraps it (``marker``: b"" unwrapped, b"I" signed, b"S" sealed), in its frame."""
    return _frame(marker + data[::-1] if marker else data)


@pytest.mark.parametrize(("protection", "marker"), [("auth", b""), ("auth-int", b"I"), ("auth-conf", b"S")])
def test_frames_are_length_prefixed_and_wrapped_as_the_protection_says(protection: str, marker: bytes) -> None:
    wire = _Wire(_as_sent(marker, b"hello") + _as_sent(marker, b"!"))
    transport = SaslServerTransport(wire, _Context(), protection, "etl@EXAMPLE.COM")
    assert transport.read(3) == b"hel" and transport.read(10) == b"lo" and transport.read(1) == b"!"
    transport.write(b"hel")
    transport.write(b"lo")
    transport.flush()
    assert bytes(wire.sent) == _as_sent(marker, b"hello")


def test_an_unsealed_frame_on_a_sealed_connection_and_an_oversized_frame_end_it() -> None:
    unsealed = SaslServerTransport(_Wire(_frame(b"I" + b"abc")), _Context(), "auth-conf", "etl@EXAMPLE.COM")
    with pytest.raises(TTransport.TTransportException, match="arrived unsealed"):
        unsealed.read(1)
    huge = SaslServerTransport(_Wire(struct.pack("!i", -5)), _Context(), "auth", "etl@EXAMPLE.COM")
    with pytest.raises(TTransport.TTransportException, match="out of bounds"):
        huge.read(1)


@pytest.mark.parametrize(("sent", "says"), [
    (struct.pack(">BI", 2, 1) + b"x", "begins with START, not status 2"),
    (struct.pack(">BI", 1, 10) + b"DIGEST-MD5", "SASL mechanism DIGEST-MD5 is not accepted"),
    (struct.pack(">BI", 1, 1 << 30), "not a SASL client"),
])
def test_a_negotiation_that_is_not_gssapi_is_refused_saying_why(sent: bytes, says: str) -> None:
    pytest.importorskip("gssapi")
    with pytest.raises(SaslRefusal, match=says):
        negotiate(_Wire(sent), ServiceKerberos("hive/vm@EXAMPLE.COM", Path("hive.keytab")), credentials=None)


def test_an_endpoint_without_kerberos_answers_a_sasl_client_that_it_speaks_plain_thrift(endpoint: Endpoint) -> None:
    with socket.create_connection(("127.0.0.1", endpoint.port), timeout=30) as client:
        client.sendall(struct.pack(">BI", 1, 6) + b"GSSAPI")
        status, length = struct.unpack(">BI", _received(client, 5))
        said = _received(client, length).decode()
    assert status == 3 and "speaks plain thrift" in said and "hive.metastore.sasl.enabled" in said, said
    (line,) = [json.loads(text) for text in endpoint.audit_path.read_text().splitlines()]
    assert line["statement"] == "thrift connect" and line["outcome"] == "refused" and "SASL" in line["reason"], line


def _received(connection: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        assert chunk, "the endpoint closed the connection early"
        data += chunk
    return data
