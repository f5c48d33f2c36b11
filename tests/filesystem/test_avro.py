"""Avro read through the planner: a Hive table Spark wrote STORED AS AVRO, and a fastavro file of a filesystem
catalog cut into many small splits (each block read by exactly one split)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hms_catalog import open_session
from tests.support.sessions import open_catalog, read_hms


def _rows(frame: Any) -> Counter[tuple[Any, ...]]:
    columns = frame.select("id", "name", "amount", "tags", "p").collect()
    return Counter(tuple(tuple(v) if isinstance(v, list) else v for v in row) for row in columns)


def test_a_hive_avro_table_reads_as_spark_reads_it(spark: Any, metastore_uri: str, home: Path, unique_name: str) -> None:
    spark.sql(f"CREATE DATABASE {unique_name}")
    try:
        spark.sql(f"CREATE TABLE {unique_name}.av (id BIGINT, name STRING, amount DOUBLE, tags ARRAY<STRING>) "
                  "PARTITIONED BY (p INT) STORED AS AVRO")
        spark.sql(f"INSERT INTO {unique_name}.av PARTITION (p=1) VALUES (1, 'a', 1.5, array('x')), (2, NULL, NULL, array())")
        spark.sql(f"INSERT INTO {unique_name}.av PARTITION (p=2) VALUES (3, 'c', -2.0, NULL)")
        session = open_catalog(home, metastore_uri)
        try:
            assert session.manager.catalog("hive").table(unique_name, "av").detection.file_format == "avro"
            ours = read_hms(spark, home, f"hive.{unique_name}.av")
            theirs = spark.table(f"{unique_name}.av")
            assert _rows(ours) == _rows(theirs) and sum(_rows(ours).values()) == 3
        finally:
            session.manager.close()
    finally:
        spark.sql(f"DROP DATABASE {unique_name} CASCADE")


def test_avro_split_into_many_ranges_reads_every_record_once(spark: Any, tmp_path: Path, home: Path) -> None:
    fastavro = pytest.importorskip("fastavro")
    folder = tmp_path / "lake" / "db" / "events"
    folder.mkdir(parents=True)
    schema = {"type": "record", "name": "e", "fields": [{"name": "id", "type": "long"}, {"name": "label", "type": "string"}]}
    records = [{"id": i, "label": f"label-{i:05d}"} for i in range(5000)]
    with open(folder / "part-0.avro", "wb") as out:
        fastavro.writer(out, schema, records, sync_interval=1024)  # many small blocks
    session = open_session(home)
    session.run_one(f"CREATE CATALOG lake PROPERTIES ('type'='filesystem', 'root'='{(tmp_path / 'lake').as_uri()}', "
                    "'file_split_size'='4096', 'file.split.min-size'='4096')")
    try:
        splits = session.run_one("SHOW SPLITS FROM lake.db.events").rows
        assert len(splits) > 10
        rows = [tuple(row) for row in read_hms(spark, home, "lake.db.events").collect()]
        assert Counter(rows) == Counter((r["id"], r["label"]) for r in records)
    finally:
        session.manager.close()
