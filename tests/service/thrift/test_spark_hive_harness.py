"""The harness that runs Spark's own Hive support in a process of its own, checked against the embedded metastore
itself: what it does there must be what the test session's SparkSession (same metastore) sees."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hms_catalog.metastore import EmbeddedMetastore
from tests.support.spark_hive_client import SparkHiveClient, SparkHiveError

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def _workers() -> Iterator[list[SparkHiveClient]]:
    started: list[SparkHiveClient] = []
    yield started
    for client in started:
        client.close()


@pytest.fixture
def hive(metastore: EmbeddedMetastore, tmp_path_factory: pytest.TempPathFactory,
         _workers: list[SparkHiveClient]) -> SparkHiveClient:
    """A worker the module's tests share while it lives (its JVM's start is most of a test's time); a test that
    closes it leaves the next a new one."""
    if not _workers or _workers[-1].closed:
        client = SparkHiveClient(metastore.uri, metastore.warehouse, tmp_path_factory.mktemp("spark"))
        print(f"Spark Hive worker started in {client.startup_seconds:.1f} s")
        _workers.append(client)
    return _workers[-1]


def test_statements_through_sparks_hive_client_reach_the_metastore(hive: SparkHiveClient, spark: Any,
                                                                   unique_name: str) -> None:
    db = unique_name
    hive.sql(f"CREATE DATABASE {db}")
    assert (db,) in hive.sql("SHOW DATABASES")
    hive.sql(f"CREATE TABLE {db}.events (id INT, name STRING) PARTITIONED BY (day STRING) "
             "ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' STORED AS TEXTFILE")
    hive.sql(f"CREATE TABLE {db}.metrics (k STRING, v DECIMAL(10,2), d DATE) USING parquet")
    hive.sql(f"INSERT INTO {db}.events PARTITION (day='2024-01-01') VALUES (1, 'a'), (2, 'b')")
    hive.sql(f"INSERT INTO {db}.events PARTITION (day='2024-01-02') VALUES (3, 'c')")
    hive.sql(f"INSERT OVERWRITE TABLE {db}.events PARTITION (day='2024-01-01') VALUES (4, 'd')")
    hive.sql(f"INSERT INTO {db}.metrics VALUES ('x', 1.5, DATE'2024-03-01')")
    assert hive.sql(f"SELECT * FROM {db}.metrics") == [("x", "1.50", "2024-03-01")]

    described = hive.sql(f"DESCRIBE {db}.events")
    assert described[:3] == [("id", "int", None), ("name", "string", None), ("day", "string", None)]
    assert ("# Partition Information", "", "") in described
    query = f"SELECT id, name FROM {db}.events WHERE day = '2024-01-02'"
    assert hive.sql(query) == [(3, "c")]
    (plan,) = hive.sql(f"EXPLAIN {query}")[0]
    assert "Pruned Partitions: [(day=2024-01-02)]" in plan  # the metastore was asked for one partition only

    hive.sql(f"ALTER TABLE {db}.events ADD COLUMNS (score DOUBLE)")
    assert ("score", "double", None) in hive.sql(f"DESCRIBE {db}.events")
    location = dict((row[0], row[1]) for row in hive.sql(f"DESCRIBE TABLE EXTENDED {db}.events"))["Location"]
    folder = Path(location.removeprefix("file:")) / "day=2024-01-03"
    folder.mkdir()
    (folder / "part-00000").write_text("5,e,2.5\n")  # a partition written behind the metastore's back
    assert ("day=2024-01-03",) not in hive.sql(f"SHOW PARTITIONS {db}.events")
    hive.sql(f"MSCK REPAIR TABLE {db}.events")
    assert hive.sql(f"SHOW PARTITIONS {db}.events") == [("day=2024-01-01",), ("day=2024-01-02",), ("day=2024-01-03",)]

    rows = [(4, "d", None, "2024-01-01"), (3, "c", None, "2024-01-02"), (5, "e", 2.5, "2024-01-03")]
    everything = f"SELECT id, name, score, day FROM {db}.events ORDER BY day"
    assert hive.sql(everything) == rows
    assert [tuple(row) for row in spark.sql(everything).collect()] == rows  # the session's own SparkSession agrees
    assert [(row.k, str(row.v), str(row.d)) for row in spark.table(f"{db}.metrics").collect()] == [("x", "1.50", "2024-03-01")]

    hive.sql(f"DROP TABLE {db}.metrics")
    assert not spark.catalog.tableExists(f"{db}.metrics")
    hive.sql(f"DROP DATABASE {db} CASCADE")
    assert (db,) not in hive.sql("SHOW DATABASES")
    assert not spark.catalog.databaseExists(db)


def test_a_failed_statement_carries_sparks_message_and_the_worker_goes_on(hive: SparkHiveClient) -> None:
    with pytest.raises(SparkHiveError, match=r"`nosuchdb`\.`nosuchtable` cannot be found") as raised:
        hive.sql("SELECT * FROM nosuchdb.nosuchtable")
    assert raised.value.condition == "TABLE_OR_VIEW_NOT_FOUND"
    assert hive.sql("SELECT 1 + 1, CAST(NULL AS STRING)") == [(2, None)]
    hive.close()
    hive.close()
    with pytest.raises(SparkHiveError, match="closed"):
        hive.sql("SELECT 1")


def test_a_statement_past_its_timeout_stops_the_worker(metastore: EmbeddedMetastore, tmp_path: Path) -> None:
    with SparkHiveClient(metastore.uri, metastore.warehouse, tmp_path / "spark", statement_timeout=3) as client:
        began = time.monotonic()
        with pytest.raises(SparkHiveError, match=r"no answer from Spark within 3 s"):
            client.sql("SELECT reflect('java.lang.Thread', 'sleep', 600000L)")
        assert time.monotonic() - began < 30
        assert _group_gone(client.pid, within=10), "the worker's JVM outlived the timeout"
        with pytest.raises(SparkHiveError, match="closed"):
            client.sql("SELECT 1")


def test_a_metastore_that_cannot_be_reached_fails_the_start_with_sparks_reason(refused_uri: str, tmp_path: Path) -> None:
    with pytest.raises(SparkHiveError, match=rf"Spark did not start on {refused_uri}: .*SessionHiveMetaStoreClient"):
        SparkHiveClient(refused_uri, tmp_path / "warehouse", tmp_path / "spark",
                        {"spark.hadoop.hive.metastore.connect.retries": "1"})


def _group_gone(pgid: int, within: float) -> bool:
    """Whether process group ``pgid`` (a killed worker and its JVM, being reaped by init) is empty within a time."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False
