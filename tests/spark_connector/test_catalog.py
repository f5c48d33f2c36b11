"""The service's catalog as a Spark catalog: namespaces, tables, DESCRIBE, errors, and freshness."""

from __future__ import annotations

import subprocess
import sys
import urllib.request
from typing import Any

import pytest

from tests.spark_connector.conftest import CATALOG, heard, registered
from tests.support.service import Server


def test_namespaces_are_the_catalogs_databases(spark: Any, connected: str, written: str) -> None:
    namespaces = {row[0] for row in spark.sql(f"SHOW NAMESPACES IN {connected}").collect()}
    assert written in namespaces and "default" in namespaces


def test_tables_of_a_namespace(spark: Any, connected: str, written: str) -> None:
    tables = {row.tableName for row in spark.sql(f"SHOW TABLES IN {connected}.{written}").collect()}
    assert {"pq", "orc", "txt", "csv", "ds", "headed"} <= tables
    assert {row.tableName for row in spark.sql(f"SHOW TABLES IN {connected}.{written} LIKE 'o*'").collect()} == {"orc"}


def test_describe_shows_the_schema_and_partitioning(spark: Any, connected: str, written: str) -> None:
    described = spark.sql(f"DESCRIBE TABLE {connected}.{written}.pq").collect()
    columns = [(row.col_name, row.data_type) for row in described]
    assert ("amount", "decimal(12,3)") in columns and ("dt", "string") in columns and ("hr", "int") in columns
    assert ("tags", "array<string>") in columns
    spark_own = spark.table(f"spark_catalog.{written}.pq").schema
    assert spark.table(f"{connected}.{written}.pq").schema == spark_own
    rows = [tuple(row)[:2] for row in described]
    partitioning = rows[rows.index(("# col_name", "data_type")) + 1:]
    assert partitioning == [("dt", "string"), ("hr", "int")]


def test_spark_table_and_dataframe_api(spark: Any, connected: str, written: str) -> None:
    frame = spark.table(f"{connected}.{written}.ds").where("p = 2").select("id", "label")
    assert [tuple(row) for row in frame.collect()] == [(2, "two")]


def test_missing_objects_are_spark_errors(spark: Any, connected: str, written: str) -> None:
    from pyspark.errors import AnalysisException

    with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark.sql(f"SELECT * FROM {connected}.{written}.nope").collect()
    with pytest.raises(AnalysisException, match="SCHEMA_NOT_FOUND|NAMESPACE"):
        spark.sql(f"SHOW TABLES IN {connected}.nope_db").collect()


def test_a_change_the_catalog_cannot_make_says_so(spark: Any, connected: str, written: str) -> None:
    """DDL goes to the service (tests/spark_connector/test_ddl.py); what Hive cannot do is refused, saying why."""
    with pytest.raises(Exception, match="not supported"):
        spark.sql(f"ALTER TABLE {connected}.{written}.pq ALTER COLUMN id FIRST").collect()
    assert spark.sql(f"SELECT count(*) FROM {connected}.{written}.pq").collect()[0][0] == 4


def test_a_refresh_elsewhere_reaches_the_running_driver(spark: Any, connected: str, written: str,
                                                        connector_service: Server) -> None:
    spark.sql(f"CREATE TABLE {written}.grows (id INT) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {written}.grows VALUES (1)")
    assert spark.table(f"{connected}.{written}.grows").columns == ["id"]  # loaded, and cached by the driver
    spark.sql(f"ALTER TABLE {written}.grows ADD COLUMNS (note STRING)")
    spark.sql(f"INSERT INTO {written}.grows VALUES (2, 'two')")
    assert spark.table(f"{connected}.{written}.grows").columns == ["id"]  # the cache holds until told
    done = subprocess.run([sys.executable, "-m", "hms_catalog.cli", "--server", connector_service.url, "--token",
                           connector_service.token, "-e", f"REFRESH TABLE {connected}.{written}.grows"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    heard(lambda: spark.table(f"{connected}.{written}.grows").columns, lambda columns: columns == ["id", "note"],
          "the driver's catalog did not follow the service's change feed")
    rows = spark.sql(f"SELECT id, note FROM {connected}.{written}.grows").collect()
    assert sorted((row.id, row.note) for row in rows) == [(1, None), (2, "two")]


def test_a_service_catalog_under_another_spark_name(spark: Any, connector_service: Server, written: str) -> None:
    with registered(spark, connector_service, "elsewhere", remote_name="conn"):
        assert spark.sql(f"SELECT count(*) FROM elsewhere.{written}.ds").collect()[0][0] == 3


def test_a_wrong_token_is_named(spark: Any, connector_service: Server, written: str) -> None:
    with registered(spark, connector_service, "badtoken", token="not-the-token-at-all"):
        with pytest.raises(Exception, match="refused the token"):
            spark.sql(f"SHOW TABLES IN badtoken.{written}").collect()


def _plans_served(service: Server) -> int:
    """How many plans the service has answered (its /metrics counter of the plan route)."""
    with urllib.request.urlopen(urllib.request.Request(f"{service.url}/metrics",
                                                       headers={"Authorization": f"Bearer {service.token}"})) as answer:
        text = answer.read().decode()
    return sum(int(float(line.rsplit(" ", 1)[1])) for line in text.splitlines()
               if line.startswith("hms_catalog_requests_total") and "/plan" in line and 'status="200"' in line)


def test_plans_are_kept_by_the_driver_until_the_table_changes(spark: Any, connected: str, written: str,
                                                              connector_service: Server) -> None:
    spark.sql(f"CREATE TABLE {written}.kept (id INT) PARTITIONED BY (p INT) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {written}.kept PARTITION (p=1) VALUES (1)")
    query = f"SELECT p, count(*) FROM {connected}.{written}.kept t1 JOIN {connected}.{written}.kept t2 USING (p, id) GROUP BY p"
    before = _plans_served(connector_service)
    assert spark.sql(query).collect() == [(1, 1)]
    assert spark.sql(query).collect() == [(1, 1)]
    assert _plans_served(connector_service) - before == 1  # two scans, two queries: one plan
    spark.sql(f"INSERT INTO {written}.kept PARTITION (p=2) VALUES (2)")
    client = connector_service.client()
    try:
        client.refresh(CATALOG, written, "kept")  # the change feed tells the driver
    finally:
        client.close()
    heard(lambda: sorted(spark.sql(query).collect()), lambda rows: rows == [(1, 1), (2, 1)],
          "the driver kept a plan after its table changed")


def test_a_catalog_of_several_service_urls_fails_over_to_one_that_answers(spark: Any, connector_service: Server,
                                                                          written: str) -> None:
    """``uri`` may list replicas: one that cannot be reached is left for the next, and the read goes on."""
    import socket

    from spark_connector.session import catalog_conf

    with socket.socket() as probe:  # a port nothing listens on: a replica that is down
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]
    settings = catalog_conf("failover_conn", f"http://127.0.0.1:{dead},{connector_service.url}", connector_service.token,
                            remote_name=CATALOG)
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        frame = spark.table(f"failover_conn.{written}.ds").where("p = 2").select("id", "label")
        assert [tuple(row) for row in frame.collect()] == [(2, "two")]
    finally:
        for key in settings:
            spark.conf.unset(key)
