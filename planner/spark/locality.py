"""A locality-aware read: one RDD partition per split whose preferred locations are the split's hosts.

The Python data source API has no preferred location on an input partition, so this path builds the
partitions in the JVM: ``SparkContext.makeRDD(Seq((payload, Seq(hosts))))`` gives an RDD whose partition
i prefers the hosts of split i; it is wrapped as a Python RDD of the splits' JSON, and reading happens in
``mapPartitions`` (a narrow dependency, so the preference carries over and tasks can run NODE_LOCAL).
The catalog's storage resolver goes to the workers with the read function (its settings only, pickled);
the splits' JSON carries no setting.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from hms_catalog.storage.resolver import StorageResolver
from planner.listing import LOCAL_HOST
from planner.plan import Split, SplitPlan

__all__ = ["splits_rdd", "locality_dataframe"]


def _scala_seq(jvm: Any, items: list[Any]) -> Any:
    java_list = jvm.java.util.ArrayList()
    for item in items:
        java_list.add(item)
    return jvm.scala.jdk.javaapi.CollectionConverters.asScala(java_list).toSeq()


def _python(value: Any, kind: Any) -> Any:
    """Arrow's Python value as Spark's createDataFrame expects it (maps as dicts, nested alike)."""
    import pyarrow as pa

    if value is None:
        return None
    if pa.types.is_map(kind):
        return {_python(k, kind.key_type): _python(v, kind.item_type) for k, v in value}
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return [_python(v, kind.value_type) for v in value]
    if pa.types.is_struct(kind):
        return {kind.field(i).name: _python(value[kind.field(i).name], kind.field(i).type) for i in range(kind.num_fields)}
    if pa.types.is_binary(kind) and isinstance(value, bytes):
        return bytearray(value)
    return value


def splits_rdd(spark: Any, plan: SplitPlan) -> Any:
    """An RDD of the plan's splits (as JSON text), one partition per split, preferring each split's hosts but
    ``localhost`` (where local files are placed), which Spark's own file RDDs never prefer: no executor of a
    cluster carries that name, and a local executor needs no preference."""
    from pyspark.rdd import RDD
    from pyspark.serializers import UTF8Deserializer

    context = spark.sparkContext
    jvm = context._jvm
    pairs = [jvm.scala.Tuple2(json.dumps(split.to_json()), _scala_seq(jvm, [host for host in split.hosts if host != LOCAL_HOST]))
             for split in plan.splits]
    string_tag = jvm.scala.reflect.ClassTag.apply(jvm.java.lang.Class.forName("java.lang.String"))
    scala_rdd = context._jsc.sc().makeRDD(_scala_seq(jvm, pairs), string_tag)
    java_rdd = jvm.org.apache.spark.api.java.JavaRDD.fromRDD(scala_rdd, string_tag)
    return RDD(java_rdd, context, UTF8Deserializer())


def locality_dataframe(spark: Any, plan: SplitPlan, columns: list[str] | None = None, *,
                       storage: StorageResolver | None = None) -> Any:
    """The plan's rows as a DataFrame read through :func:`splits_rdd` (tasks prefer the splits' hosts),
    its files reached with ``storage`` (the plan's catalog's; none: local files and the environment's
    credentials only)."""
    from planner.spark.datasource import _as_read

    schema = plan.schema
    selected = [c for c in schema.columns if c.readable] if columns is None else [schema.column(n) for n in columns]
    names = [c.name for c in selected]
    target = schema.arrow_schema(names)
    text = plan.text
    resolver = storage if storage is not None else StorageResolver()

    def read(payloads: Iterator[str]) -> Iterator[tuple[Any, ...]]:
        from planner.readers import read_split

        for payload in payloads:
            for batch in read_split(Split.from_json(json.loads(payload)), selected, target, text=text,
                                    table_columns=schema.data_columns, storage=resolver):
                kinds = [field.type for field in batch.schema]
                for row in batch.to_pylist():
                    yield tuple(_python(value, kind) for value, kind in zip(row.values(), kinds))

    return spark.createDataFrame(splits_rdd(spark, plan).mapPartitions(read), _as_read(schema.spark_schema(names)))
