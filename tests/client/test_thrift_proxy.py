"""The refusing proxy in front of the embedded metastore: refusals as Hive sends them, everything else relayed whole."""

from __future__ import annotations

import contextlib
import gc
import os
import socket
import threading
import warnings
from collections import Counter
from collections.abc import Iterator

import pytest
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TMessageType
from thrift.transport import TTransport
from thrift.TSerialization import serialize

from hms_catalog.client._transport import Connection, open_connection
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.properties import parse_uris
from tests.support import hms
from tests.support.thrift_proxy import HIVE4_REMOVED, HIVE21_MISSING, RefusingProxy, read_message, unknown_method_reply

pytestmark = pytest.mark.metastore


@contextlib.contextmanager
def _connect(uri: str) -> Iterator[Connection]:
    connection = open_connection(parse_uris(uri)[0], connect_timeout=5.0, socket_timeout=10.0)
    try:
        yield connection
    finally:
        connection.close()


@pytest.fixture(scope="module")
def upstream(metastore: EmbeddedMetastore) -> tuple[str, int]:
    uri = parse_uris(metastore.uri)[0]
    return uri.host, uri.port


@pytest.fixture(scope="module")
def database(admin: hms.Admin) -> Iterator[str]:
    """One database for the module, with a small table ``events``: dropping databases is what costs here."""
    name = f"proxy{os.getpid()}"
    admin.create_database(name)
    admin.create_table(name, "events", [("id", "bigint"), ("name", "string")])
    yield name
    admin.drop_database(name)


def _raw_call(sock: socket.socket, name: str, seqid: int) -> bytes:
    """Send a call to ``name`` with no arguments and return the whole reply as bytes."""
    buffer = TTransport.TMemoryBuffer()
    protocol = TBinaryProtocol.TBinaryProtocol(buffer)
    protocol.writeMessageBegin(name, TMessageType.CALL, seqid)
    protocol.writeStructBegin("args")
    protocol.writeFieldStop()
    protocol.writeStructEnd()
    protocol.writeMessageEnd()
    sock.sendall(buffer.getvalue())
    with sock.makefile("rb") as stream:
        reply = read_message(stream)
    assert reply is not None
    return reply.data


def test_presets() -> None:
    assert frozenset({"get_table", "get_table_objects_by_name"}) == HIVE4_REMOVED
    assert {"get_table_req", "get_table_objects_by_name_req", "get_partitions_by_names_req", "get_partition_names_req"} <= HIVE21_MISSING
    assert not HIVE4_REMOVED & HIVE21_MISSING
    # Hive 2.1 has these (they date from 0.13); refusing them would misrepresent it.
    assert not {"add_partitions_req", "drop_partitions_req", "get_table_statistics_req"} & HIVE21_MISSING


def test_other_methods_pass_through(upstream: tuple[str, int], metastore: EmbeddedMetastore, database: str) -> None:
    with RefusingProxy(upstream, HIVE4_REMOVED) as proxy, _connect(proxy.uri) as through, _connect(metastore.uri) as direct:
        assert through.client.get_all_databases() == direct.client.get_all_databases()
        assert database in through.client.get_all_databases()
        assert through.client.get_database(database) == direct.client.get_database(database)
    assert proxy.seen == Counter({"get_all_databases": 2, "get_database": 1})
    assert proxy.refused == Counter()


def test_refused_call_raises_unknown_method_and_the_connection_stays_usable(
    upstream: tuple[str, int], database: str
) -> None:
    with RefusingProxy(upstream, HIVE4_REMOVED) as proxy, _connect(proxy.uri) as connection:
        with pytest.raises(TApplicationException) as refused:
            connection.client.get_table(database, "events")
        assert refused.value.type == TApplicationException.UNKNOWN_METHOD
        assert refused.value.message == "Invalid method name: 'get_table'"
        with pytest.raises(TApplicationException, match=r"^Invalid method name: 'get_table_objects_by_name'$"):
            connection.client.get_table_objects_by_name(database, ["events"])

        assert database in connection.client.get_all_databases()
        table = connection.client.get_table_req(ttypes.GetTableRequest(dbName=database, tblName="events")).table
        assert (table.dbName, table.tableName) == (database, "events")
        assert [column.name for column in table.sd.cols] == ["id", "name"]
        tables = connection.client.get_table_objects_by_name_req(ttypes.GetTablesRequest(dbName=database, tblNames=["events"])).tables
        assert [t.tableName for t in tables] == ["events"]
    assert proxy.seen == Counter(
        {"get_table": 1, "get_table_objects_by_name": 1, "get_all_databases": 1, "get_table_req": 1, "get_table_objects_by_name_req": 1}
    )
    assert proxy.refused == Counter({"get_table": 1, "get_table_objects_by_name": 1})


def test_hive21_preset_refuses_the_req_forms_and_passes_the_old_ones(upstream: tuple[str, int], database: str) -> None:
    with RefusingProxy(upstream, HIVE21_MISSING) as proxy, _connect(proxy.uri) as connection:
        with pytest.raises(TApplicationException, match=r"^Invalid method name: 'get_table_req'$") as refused:
            connection.client.get_table_req(ttypes.GetTableRequest(dbName=database, tblName="events"))
        assert refused.value.type == TApplicationException.UNKNOWN_METHOD
        assert connection.client.get_table(database, "events").tableName == "events"
        assert [t.tableName for t in connection.client.get_table_objects_by_name(database, ["events"])] == ["events"]
    assert proxy.refused == Counter({"get_table_req": 1})
    assert proxy.seen == Counter({"get_table_req": 1, "get_table": 1, "get_table_objects_by_name": 1})


def test_the_refusal_is_byte_for_byte_what_hive_sends(upstream: tuple[str, int]) -> None:
    """The embedded Hive 2.3 answers a method it lacks; the proxy's own answer must be the same bytes."""
    expected = unknown_method_reply("no_such_method", 41)
    with socket.create_connection(upstream, timeout=10.0) as direct:
        assert _raw_call(direct, "no_such_method", 41) == expected
    with RefusingProxy(upstream, {"no_such_method"}) as refusing, RefusingProxy(upstream, set()) as passing:
        with socket.create_connection(("127.0.0.1", refusing.port), timeout=10.0) as sock:
            assert _raw_call(sock, "no_such_method", 41) == expected
            assert _raw_call(sock, "no_such_method", 42) == unknown_method_reply("no_such_method", 42)
        with socket.create_connection(("127.0.0.1", passing.port), timeout=10.0) as sock:
            assert _raw_call(sock, "no_such_method", 41) == expected  # relayed from upstream this time
    assert refusing.refused == Counter({"no_such_method": 2})
    assert passing.refused == Counter()
    assert passing.seen == Counter({"no_such_method": 1})


def test_large_replies_relay_whole(upstream: tuple[str, int], metastore: EmbeddedMetastore, admin: hms.Admin, database: str) -> None:
    kind = "struct<" + ",".join(f"field_{j:02d}:array<map<string,double>>" for j in range(10)) + ">"
    columns = [(f"column_{i:04d}", kind) for i in range(500)]
    comments = {name: f"comment {name} " + "x" * 200 for name, _ in columns}
    admin.create_table(database, "wide", columns, comments=comments)
    for i in range(5):
        admin.create_database(f"{database}_extra{i}")
    try:
        with RefusingProxy(upstream, HIVE4_REMOVED) as proxy, _connect(proxy.uri) as through, _connect(metastore.uri) as direct:
            request = ttypes.GetTableRequest(dbName=database, tblName="wide")
            table = through.client.get_table_req(request).table
            assert len(serialize(table)) > 300_000  # several socket buffers' worth
            assert table == direct.client.get_table_req(request).table
            assert [column.comment for column in table.sd.cols] == [comments[name] for name, _ in columns]
            # The connection is still in step after the big reply.
            names = through.client.get_all_databases()
            assert names == direct.client.get_all_databases()
            assert {f"{database}_extra{i}" for i in range(5)} <= set(names)
    finally:
        for i in range(5):
            admin.drop_database(f"{database}_extra{i}")


def test_each_client_connection_has_its_own_upstream(upstream: tuple[str, int], database: str) -> None:
    with RefusingProxy(upstream, HIVE4_REMOVED) as proxy, _connect(proxy.uri) as first, _connect(proxy.uri) as second:
        for _ in range(3):
            assert database in first.client.get_all_databases()
            with pytest.raises(TApplicationException):
                second.client.get_table(database, "missing")
            assert second.client.get_database(database).name == database
        assert len(proxy.threads) == 3  # the acceptor and one per connection
    assert proxy.seen == Counter({"get_all_databases": 3, "get_table": 3, "get_database": 3})
    assert proxy.refused == Counter({"get_table": 3})


def test_close_is_clean_with_a_client_still_connected(upstream: tuple[str, int]) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        proxy = RefusingProxy(upstream, HIVE4_REMOVED)
        with proxy, _connect(proxy.uri) as connection:
            connection.client.get_all_databases()
            assert proxy.threads
            proxy.close()
            assert proxy.threads == []
            assert not [t for t in threading.enumerate() if t.name.startswith(f"thrift-proxy-{proxy.port}-")]
            with pytest.raises((TTransport.TTransportException, OSError)):
                connection.client.get_all_databases()
        proxy.close()  # twice, and again by the with-block: harmless
        with pytest.raises(RuntimeError, match="closed"):
            proxy.start()
        with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", proxy.port), timeout=1.0):
            pass
        del proxy, connection
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []
