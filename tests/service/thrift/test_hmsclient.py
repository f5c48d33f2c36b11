"""The PyPI ``hmsclient`` (a Hive 2 client with Hive 2 bindings of its own) against the endpoint: the answers equal
the metastore's own, read and written with that older struct family, in the primary catalog and a federated one.

The endpoint decodes with Hive 4's bindings; a Hive 2 client's structs lack Hive 3/4's fields and must come
through whole, and its answers must decode with the client's own types (never mixed with ours).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from hmsclient import HMSClient
from hmsclient.genthrift.hive_metastore import ttypes as hive2

from hms_catalog.cache.versions import ChangeKind, ChangeSource
from tests.service.thrift.conftest import Endpoint


@contextlib.contextmanager
def _hmsclient(host: str, port: int) -> Iterator[Any]:
    with HMSClient(host=host, port=port) as opened:
        yield opened


@pytest.fixture
def clients(endpoint: Endpoint, metastore_uri: str) -> Iterator[tuple[Any, Any]]:
    """hmsclient on the endpoint, and hmsclient on the metastore itself."""
    where = urlsplit(metastore_uri)
    assert where.hostname is not None and where.port is not None
    with _hmsclient("127.0.0.1", endpoint.port) as ours, _hmsclient(where.hostname, where.port) as theirs:
        yield ours, theirs


@pytest.fixture
def spark_table(spark: Any, unique_name: str) -> Iterator[str]:
    """A database with one partitioned Parquet table written by Spark (Hive support) on the session's metastore."""
    db = unique_name
    spark.sql(f"CREATE DATABASE {db}")
    spark.sql(f"CREATE TABLE {db}.sales (id INT, amount DOUBLE) PARTITIONED BY (day STRING, hr INT) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {db}.sales PARTITION (day='2024-01-01', hr=1) VALUES (1, 1.5)")
    spark.sql(f"INSERT INTO {db}.sales PARTITION (day='2024-01-02', hr=2) VALUES (2, 2.5)")
    spark.sql(f"INSERT INTO {db}.sales PARTITION (day='2024-01-02', hr=3) VALUES (3, 3.5)")
    yield db
    spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")


def _renamed(table: Any, database: str) -> Any:
    """``table`` as a federated catalog shows it: the same struct under the prefixed database name."""
    table.dbName = database
    return table


@pytest.mark.slow  # Spark writes the table
def test_databases_tables_and_partitions_read_with_hive2_bindings(clients: tuple[Any, Any], spark_table: str) -> None:
    ours, theirs = clients
    db = spark_table
    databases = ours.get_all_databases()
    assert "default" in databases and "other__default" in databases
    assert db in databases and f"other__{db}" in databases

    expected = theirs.get_table(db, "sales")
    assert isinstance(expected, hive2.Table)
    primary = ours.get_table(db, "sales")
    assert isinstance(primary, hive2.Table)  # decoded by the client's own (Hive 2) types
    assert primary == expected
    assert ours.get_table(f"other__{db}", "sales") == _renamed(theirs.get_table(db, "sales"), f"other__{db}")

    assert ours.get_partition_names(db, "sales", -1) == theirs.get_partition_names(db, "sales", -1)
    for text in ["day = '2024-01-02'", "hr > 1 and day >= '2024-01-01'", "day = '2024-01-01' or hr = 3"]:
        wanted = sorted(theirs.get_partitions_by_filter(db, "sales", text, -1), key=lambda p: p.values)
        assert wanted and all(isinstance(p, hive2.Partition) for p in wanted)
        assert sorted(ours.get_partitions_by_filter(db, "sales", text, -1), key=lambda p: p.values) == wanted
        federated = sorted(ours.get_partitions_by_filter(f"other__{db}", "sales", text, -1), key=lambda p: p.values)
        assert [p.values for p in federated] == [p.values for p in wanted]
        assert {p.dbName for p in federated} == {f"other__{db}"}


def test_create_and_drop_with_hive2_structs(endpoint: Endpoint, clients: tuple[Any, Any], unique_name: str,
                                            tmp_path: Path) -> None:
    ours, theirs = clients
    hive = endpoint.manager.catalog("hive")
    version = hive.versions.current
    db = unique_name
    ours.create_database(hive2.Database(name=db, description="made by hmsclient", locationUri=(tmp_path / db).as_uri(),
                                        parameters={"owner.team": "x"}))
    made = theirs.get_database(db)
    assert made.description == "made by hmsclient" and made.parameters == {"owner.team": "x"}
    assert ours.get_database(db) == made

    columns = [hive2.FieldSchema("id", "bigint", "the key"), hive2.FieldSchema("note", "string", None)]
    sd = hive2.StorageDescriptor(
        cols=columns, location=(tmp_path / db / "notes").as_uri(), inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat", compressed=False, numBuckets=-1,
        serdeInfo=hive2.SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", parameters={}),
        bucketCols=[], sortCols=[], parameters={})
    ours.create_table(hive2.Table(tableName="notes", dbName=db, owner="hmsclient", sd=sd,
                                  partitionKeys=[hive2.FieldSchema("day", "string", None)],
                                  parameters={"EXTERNAL": "TRUE"}, tableType="EXTERNAL_TABLE"))
    stored = theirs.get_table(db, "notes")
    assert [(c.name, c.type, c.comment) for c in stored.sd.cols] == [("id", "bigint", "the key"), ("note", "string", None)]
    assert stored.owner == "hmsclient" and stored.partitionKeys[0].name == "day"
    assert ours.get_table(db, "notes") == stored
    assert ours.get_all_tables(db) == theirs.get_all_tables(db) == ["notes"]

    with pytest.raises(hive2.MetaException, match="read-only through the thrift endpoint"):
        ours.drop_table(f"other__{db}", "notes", False)  # 'other' grants no writes
    ours.drop_table(db, "notes", False)
    with pytest.raises(hive2.NoSuchObjectException):
        theirs.get_table(db, "notes")
    with pytest.raises(hive2.NoSuchObjectException):
        ours.get_table(db, "notes")  # the cached table was dropped with it
    ours.drop_database(db, False, False)
    assert db not in theirs.get_all_databases()

    logged = [(change.kind, change.object.database, change.object.table)
              for change in hive.versions.changes(version).changes if change.source is ChangeSource.THRIFT]
    assert logged == [(ChangeKind.ADDED, db, ""), (ChangeKind.ADDED, db, "notes"), (ChangeKind.DROPPED, db, "notes"),
                      (ChangeKind.DROPPED, db, "")]
