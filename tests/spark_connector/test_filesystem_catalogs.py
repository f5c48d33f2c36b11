"""A filesystem catalog of the service as a Spark catalog: folders Spark wrote, read by Spark's own readers."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.spark_connector.conftest import registered
from tests.support.service import Server


def test_folders_read_natively_as_spark_reads_them(spark: Any, connector_service: Server,
                                                   tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("connector-lake")
    frame = spark.range(0, 120).selectExpr("id", "concat('n, ', id) as name", "cast(id % 4 as int) as part")
    frame.write.partitionBy("part").parquet(str(root / "raw" / "events"))
    frame.write.option("header", True).csv(str(root / "raw" / "drops"))
    fastavro = pytest.importorskip("fastavro")
    (root / "raw" / "exports").mkdir()
    schema = {"type": "record", "name": "x", "fields": [{"name": "id", "type": "long"}, {"name": "tag", "type": "string"}]}
    with open(root / "raw" / "exports" / "part-0.avro", "wb") as out:
        fastavro.writer(out, schema, [{"id": i, "tag": f"t{i}"} for i in range(50)])
    client = connector_service.client()
    client.create_catalog("connlake", {"type": "filesystem", "root": root.as_uri()})
    client.close()
    with registered(spark, connector_service, "connlake") as name:
        events = spark.sql(f"SELECT * FROM {name}.raw.events WHERE part = 2")
        plan = events._jdf.queryExecution().executedPlan().toString()
        assert "BatchScan" in plan and "Reader: parquet" in plan
        expected = spark.read.parquet(str(root / "raw" / "events")).where("part = 2")
        assert Counter(map(tuple, events.select("id", "name", "part").collect())) == \
            Counter(map(tuple, expected.select("id", "name", "part").collect()))
        drops = spark.table(f"{name}.raw.drops")
        theirs = spark.read.option("header", True).option("inferSchema", True).csv(str(root / "raw" / "drops"))
        assert Counter(map(tuple, drops.select("id", "name", "part").collect())) == \
            Counter(map(tuple, theirs.select("id", "name", "part").collect()))
        # Avro: no reader among Spark's jars, so the scan goes to the registered Python source by itself.
        exports = spark.table(f"{name}.raw.exports")
        assert "Reader: python" in exports._jdf.queryExecution().executedPlan().toString()
        assert sorted(map(tuple, exports.collect())) == [(i, f"t{i}") for i in range(50)]
