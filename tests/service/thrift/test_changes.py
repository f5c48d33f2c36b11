"""Changes made through the thrift endpoint: forwarded to the real metastore, made catalog events (one change-log
entry each, source ``thrift``), caches dropped, audited with the client's address and user; refused on a
read-only catalog; a following catalog does not log the endpoint's own events again."""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from hms_catalog.client.hive_thrift import ttypes
from tests.service.thrift.conftest import Endpoint, thrift_client
from tests.support.hms import Admin, table_struct
from tests.support.sessions import EVENTS

USER = "alice"


@pytest.fixture
def database(admin: Admin, unique_name: str) -> Iterator[str]:
    """A database name of this test alone, dropped (if it exists) afterwards."""
    yield unique_name
    with contextlib.suppress(Exception):  # dropped by the test itself, or never made
        admin.drop_database(unique_name)


def logged(endpoint: Endpoint, catalog: str, since: int) -> list[tuple[str, str, str]]:
    """The catalog's change-log entries after ``since`` as (kind, object, source)."""
    changes = endpoint.manager.catalog(catalog).versions.changes(since).changes
    return [(change.kind.value, str(change.object), change.source.value) for change in changes]


def version(endpoint: Endpoint, catalog: str = "hive") -> int:
    return endpoint.manager.catalog(catalog).versions.current


def audit(endpoint: Endpoint) -> list[dict[str, Any]]:
    if not endpoint.audit_path.exists():
        return []
    return [json.loads(line) for line in endpoint.audit_path.read_text().splitlines()]


def new_table(admin: Admin, database: str, name: str, *, partitioned: bool = False) -> ttypes.Table:
    location = admin.warehouse / f"{database}.db" / name
    location.mkdir(parents=True, exist_ok=True)
    keys = [("dt", "string")] if partitioned else []
    return table_struct(database, name, [("id", "int")], location.as_uri(), partition_keys=keys)


def new_database(admin: Admin, name: str) -> ttypes.Database:
    location = admin.warehouse / f"{name}.db"
    location.mkdir(parents=True, exist_ok=True)
    return ttypes.Database(name=name, description="", locationUri=location.as_uri(), parameters={})


def partition(admin: Admin, database: str, table: str, value: str, *, named: str | None = None) -> ttypes.Partition:
    """A partition of ``database.table`` as a client names it (``named``: the client's name of the database)."""
    sd = admin.pool.call("get_table", database, table).sd
    location = admin.warehouse / f"{database}.db" / table / f"dt={value}"
    location.mkdir(parents=True, exist_ok=True)
    sd.location = f"file://{location}"
    return ttypes.Partition(values=[value], dbName=named or database, tableName=table, sd=sd, parameters={})


def columns(table: ttypes.Table) -> list[str]:
    return [column.name for column in table.sd.cols]


def partition_names(admin: Admin, database: str, table: str) -> list[str]:
    return sorted(admin.pool.call("get_partition_names", database, table, -1))


@pytest.mark.slow
def test_changes_through_the_endpoint_reach_the_metastore_as_one_thrift_change_each(
    endpoint: Endpoint, admin: Admin, database: str
) -> None:
    db = database
    with thrift_client(endpoint.port) as client:
        client.set_ugi(USER, ["analysts"])
        start = version(endpoint)

        def one_change(expected: tuple[str, str], since: int) -> int:
            """Exactly one change-log entry after ``since``, the expected one with source thrift; the version now."""
            assert logged(endpoint, "hive", since) == [(*expected, "thrift")]
            now = version(endpoint)
            assert now > since
            return now

        client.create_database(new_database(admin, db))
        assert admin.pool.call("get_database", db).name == db
        seen = one_change(("added", f"database {db}"), start)

        client.create_table(new_table(admin, db, "facts", partitioned=True))
        assert columns(admin.pool.call("get_table", db, "facts")) == ["id"]
        seen = one_change(("added", f"table {db}.facts"), seen)

        warm = client.get_table(db, "facts")  # cached now
        assert columns(client.get_table(db, "facts")) == ["id"]
        warm.sd.cols.append(ttypes.FieldSchema("name", "string", ""))
        client.alter_table(db, "facts", warm)
        assert columns(admin.pool.call("get_table", db, "facts")) == ["id", "name"]
        seen = one_change(("changed", f"table {db}.facts"), seen)
        assert columns(client.get_table(db, "facts")) == ["id", "name"]  # the cached table was dropped: no REFRESH

        assert client.get_partition_names(db, "facts", -1) == []  # cached
        client.add_partitions([partition(admin, db, "facts", "1")])
        assert partition_names(admin, db, "facts") == ["dt=1"]
        seen = one_change(("changed", f"partitions {db}.facts"), seen)
        assert client.get_partition_names(db, "facts", -1) == ["dt=1"]

        request = ttypes.AddPartitionsRequest(dbName=db, tblName="facts", parts=[partition(admin, db, "facts", "2"),
                                                                                 partition(admin, db, "facts", "3")],
                                              ifNotExists=False, needResult=True)
        added = client.add_partitions_req(request)
        assert sorted(each.values[0] for each in added.partitions) == ["2", "3"]
        assert partition_names(admin, db, "facts") == ["dt=1", "dt=2", "dt=3"]
        seen = one_change(("changed", f"partitions {db}.facts"), seen)
        assert sorted(client.get_partition_names(db, "facts", -1)) == ["dt=1", "dt=2", "dt=3"]

        stored = client.get_partitions_by_names(db, "facts", ["dt=1", "dt=2"])
        for each in stored:
            each.parameters = {**(each.parameters or {}), "marked": "yes"}
        client.alter_partitions(db, "facts", stored)
        marked = admin.pool.call("get_partitions_by_names", db, "facts", ["dt=1", "dt=2", "dt=3"])
        assert sorted((p.values[0], (p.parameters or {}).get("marked")) for p in marked) == [
            ("1", "yes"), ("2", "yes"), ("3", None)]
        seen = one_change(("changed", f"partitions {db}.facts"), seen)

        assert client.drop_partition(db, "facts", ["1"], False) is True
        assert partition_names(admin, db, "facts") == ["dt=2", "dt=3"]
        seen = one_change(("changed", f"partitions {db}.facts"), seen)

        dropped = client.drop_partitions_req(ttypes.DropPartitionsRequest(
            dbName=db, tblName="facts", parts=ttypes.RequestPartsSpec(names=["dt=2", "dt=3"]), deleteData=False,
            ifExists=False, needResult=True))
        assert sorted(each.values[0] for each in dropped.partitions) == ["2", "3"]
        assert partition_names(admin, db, "facts") == []
        seen = one_change(("changed", f"partitions {db}.facts"), seen)
        assert client.get_partition_names(db, "facts", -1) == []

        assert client.get_tables(db, "*") == ["facts"]  # cached names
        renamed = client.get_table(db, "facts")
        renamed.tableName = "moved"
        client.alter_table(db, "facts", renamed)
        assert admin.pool.call("get_tables", db, "*") == ["moved"]
        assert logged(endpoint, "hive", seen) == [("dropped", f"table {db}.facts", "thrift"),
                                                   ("added", f"table {db}.moved", "thrift")]
        seen = version(endpoint)
        assert client.get_tables(db, "*") == ["moved"]
        with pytest.raises(ttypes.NoSuchObjectException):
            client.get_table(db, "facts")

        client.drop_table(db, "moved", False)
        assert admin.pool.call("get_tables", db, "*") == []
        seen = one_change(("dropped", f"table {db}.moved"), seen)

        client.drop_database(db, False, False)
        with pytest.raises(ttypes.NoSuchObjectException):
            admin.pool.call("get_database", db)
        one_change(("dropped", f"database {db}"), seen)

    lines = [line for line in audit(endpoint) if line.get("catalog") == "hive"]
    methods = [line["statement"].split()[1] for line in lines]
    assert methods == ["create_database", "create_table", "alter_table", "add_partitions", "add_partitions_req",
                       "alter_partitions", "drop_partition", "drop_partitions_req", "alter_table", "drop_table",
                       "drop_database"]
    assert lines[1]["statement"] == f"thrift create_table {db}.facts"
    address = lines[0]["client"]
    assert re.fullmatch(r"127\.0\.0\.1:\d+", address)
    for line in lines:
        assert (line["via"], line["client"], line["user"], line["token"], line["outcome"]) == (
            "thrift", address, USER, f"thrift:{USER}", "ok")
        assert line["version_after"] > line["version_before"]
        assert "secret" not in json.dumps(line).lower()


def test_each_connection_is_audited_with_its_own_address_and_user(endpoint: Endpoint, admin: Admin, database: str) -> None:
    with thrift_client(endpoint.port) as first, thrift_client(endpoint.port, framed=True) as second:
        first.set_ugi("first", [])
        first.create_database(new_database(admin, database))
        second.create_table(new_table(admin, database, "anonymous"))  # no set_ugi: nobody said who
    lines = audit(endpoint)
    assert [(line["statement"], line["user"], line["token"]) for line in lines] == [
        (f"thrift create_database {database}", "first", "thrift:first"),
        (f"thrift create_table {database}.anonymous", None, "thrift:anonymous"),
    ]
    assert lines[0]["client"] != lines[1]["client"]


def test_a_failing_change_is_the_metastores_own_exception_and_logs_no_change(
    endpoint: Endpoint, admin: Admin, database: str
) -> None:
    admin.create_database(database)
    admin.create_table(database, "facts", [("id", "int")])
    with thrift_client(endpoint.port) as client:
        client.set_ugi(USER, [])
        before = version(endpoint)
        with pytest.raises(ttypes.AlreadyExistsException):
            client.create_table(new_table(admin, database, "facts"))
        with pytest.raises(ttypes.NoSuchObjectException):
            client.drop_table(database, "absent", False)
        assert logged(endpoint, "hive", before) == []
        assert columns(client.get_table(database, "facts")) == ["id"]  # the connection is still good
    lines = audit(endpoint)
    assert [line["statement"] for line in lines] == [f"thrift create_table {database}.facts",
                                                     f"thrift drop_table {database}.absent"]
    assert all(line["outcome"].startswith("error: ") for line in lines)


def test_a_read_only_catalog_refuses_changes_until_writes_are_granted(endpoint: Endpoint, admin: Admin, database: str) -> None:
    admin.create_database(database)
    admin.create_table(database, "kept", [("id", "int")])
    federated = f"other__{database}"
    with thrift_client(endpoint.port) as client:
        client.set_ugi(USER, [])
        assert columns(client.get_table(federated, "kept")) == ["id"]
        other = endpoint.manager.catalog("other")
        before, calls = other.versions.current, other.metrics()
        altered = client.get_table(federated, "kept")
        altered.sd.cols.append(ttypes.FieldSchema("name", "string", ""))
        refusals = [
            lambda: client.create_table(new_table(admin, federated, "made")),
            lambda: client.alter_table(federated, "kept", altered),
            lambda: client.drop_table(federated, "kept", False),
        ]
        for refused in refusals:
            with pytest.raises(ttypes.MetaException) as raised:
                refused()
            assert "catalog 'other'" in raised.value.message and "thrift.access" in raised.value.message
            assert "ALTER CATALOG other SET PROPERTIES ('thrift.access'='write')" in raised.value.message
        assert admin.pool.call("get_tables", database, "*") == ["kept"]
        assert columns(admin.pool.call("get_table", database, "kept")) == ["id"]
        assert endpoint.manager.catalog("other").metrics().calls_since(calls) == {}  # nothing reached the metastore
        assert logged(endpoint, "other", before) == []
        lines = audit(endpoint)
        assert [(line["catalog"], line["statement"], line["outcome"]) for line in lines] == [
            ("other", f"thrift create_table {database}.made", "refused"),
            ("other", f"thrift alter_table {database}.kept", "refused"),
            ("other", f"thrift drop_table {database}.kept", "refused"),
        ]
        assert all(line["via"] == "thrift" and line["user"] == USER for line in lines)

        endpoint.manager.alter_properties("other", {"thrift.access": "write"})
        writable = endpoint.manager.catalog("other")
        since = writable.versions.current
        client.create_table(new_table(admin, federated, "made"))
        client.alter_table(federated, "kept", altered)
        assert sorted(admin.pool.call("get_tables", database, "*")) == ["kept", "made"]
        assert columns(admin.pool.call("get_table", database, "kept")) == ["id", "name"]
        assert columns(client.get_table(federated, "kept")) == ["id", "name"]
        assert client.get_table(federated, "made").dbName == federated
        assert logged(endpoint, "other", since) == [("added", f"table {database}.made", "thrift"),
                                                    ("changed", f"table {database}.kept", "thrift")]
        assert [line["outcome"] for line in audit(endpoint)[3:]] == ["ok", "ok"]


def caught_up(endpoint: Endpoint, admin: Admin, catalog: str) -> None:
    """Wait until ``catalog``'s follower has read every event the metastore has now."""
    newest = admin.pool.call("get_current_notificationEventId").eventId
    follower = endpoint.manager.catalog(catalog).follower
    assert follower is not None
    deadline = time.monotonic() + 30
    while (follower.last_event_id or 0) < newest:
        assert time.monotonic() < deadline, f"the follower is at {follower.last_event_id}, the metastore at {newest}"
        time.sleep(0.05)


def test_a_following_catalog_does_not_log_the_endpoints_own_events_again(
    endpoint: Endpoint, admin: Admin, metastore_uri: str, database: str
) -> None:
    endpoint.manager.create("ev", {"type": "hms", "hive.metastore.uris": metastore_uri, "thrift.access": "write",
                                   "hive.metastore.failure.retries": "0", **EVENTS})
    catalog = endpoint.manager.catalog("ev")
    catalog.follow_events()  # as a serving process does: from the metastore's current event on
    assert catalog.follower is not None and catalog.follower.last_event_id is not None
    admin.create_database(database)
    federated = f"ev__{database}"
    caught_up(endpoint, admin, "ev")
    events_before = catalog.follower.status().events
    with thrift_client(endpoint.port) as client:
        since = catalog.versions.current
        client.create_table(new_table(admin, federated, "facts", partitioned=True))
        altered = client.get_table(federated, "facts")
        altered.sd.cols.append(ttypes.FieldSchema("name", "string", ""))
        client.alter_table(federated, "facts", altered)
        client.add_partitions([partition(admin, database, "facts", "1", named=federated)])
        client.add_partitions_req(ttypes.AddPartitionsRequest(
            dbName=federated, tblName="facts", parts=[partition(admin, database, "facts", "2", named=federated)], ifNotExists=False,
            needResult=False))
        client.add_partitions([partition(admin, database, "facts", "3", named=federated)])
        stored = client.get_partitions_by_names(federated, "facts", ["dt=2", "dt=3"])
        for each in stored:
            each.parameters = {**(each.parameters or {}), "marked": "yes"}
        client.alter_partitions(federated, "facts", stored)  # one event per partition
        client.drop_partition(federated, "facts", ["1"], False)
        client.drop_partitions_req(ttypes.DropPartitionsRequest(  # one event per partition
            dbName=federated, tblName="facts", parts=ttypes.RequestPartsSpec(names=["dt=2", "dt=3"]), deleteData=False,
            ifExists=False, needResult=False))
        client.drop_table(federated, "facts", False)
        caught_up(endpoint, admin, "ev")
        assert catalog.follower.status().events - events_before >= 11  # it did read them
        assert logged(endpoint, "ev", since) == [
            ("added", f"table {database}.facts", "thrift"),
            ("changed", f"table {database}.facts", "thrift"),
            *[("changed", f"partitions {database}.facts", "thrift")] * 6,
            ("dropped", f"table {database}.facts", "thrift"),
        ]
        assert catalog.caches.self_events.pending() == 0  # every expectation met by its event
        assert client.get_all_tables(federated) == []
