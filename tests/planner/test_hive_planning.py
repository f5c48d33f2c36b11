"""Planning Hive tables written by Spark: pruning equals Spark's, the metastore is asked little, the plan
covers every byte once and survives JSON."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

from hms_catalog.errors import PlanningError, UnsupportedTableError
from hms_catalog.execution import Session
from planner import LocalBlockLocator, SplitPlan, plan_table
from tests.support import hms
from tests.support.hms import Admin
from tests.support.sessions import open_catalog


def local_path(location: str) -> str:
    """A split's path (a Hadoop path: never URL-encoded) as a local file name."""
    return location[len("file://"):] if location.startswith("file://") else location


def planned_files(session: Session, db: str, table: str, where: str | None) -> set[str]:
    catalog = session.manager.catalog("hive")
    plan = plan_table(catalog, catalog.table(db, table), where)
    return {local_path(s.path) for s in plan.splits}


def spark_files(spark: Any, db: str, table: str, where: str | None) -> set[str]:
    """Spark's inputFiles are URIs: decode them to the file names on disk."""
    query = f"SELECT * FROM {db}.{table}" + (f" WHERE {where}" if where else "")
    return {unquote(urlparse(path).path) for path in spark.sql(query).inputFiles()}


PREDICATES = {
    "sales": [
        None,
        "dt = '2024-01-02'",
        "dt = '2024-01-02' AND region = 'us'",
        "region = 'eu'",
        "region IN ('us', 'apac')",
        "dt IN ('2024-01-01', '2024-01-03') AND region = 'eu'",
        "region = 'us' AND region = 'eu'",
        "region = 'us' AND amount > 5",
        "dt > '2024-01-02'",
        "dt <> '2024-01-01' AND region IN ('us', 'apac')",
        "dt NOT IN ('2024-01-01', '2024-01-04')",
        "dt = '2024-01-01' OR region = 'apac'",
        "NOT (dt = '2024-01-01' OR dt = '2024-01-02')",
        "dt BETWEEN '2024-01-02' AND '2024-01-03'",
        "region IS NULL",
        "dt = '2024-01-03' AND amount > 5",  # a data column: cannot prune on it
        "dt = '2024-01-03' OR amount > 5",
        "dt = 'nope'",
    ],
    "events": [
        "day = DATE '2024-03-01'",
        "day >= DATE '2024-03-02'",
        "hr > 2",
        "hr IS NULL",
        "day IS NULL",
        "day IS NOT NULL AND hr < 10",
        "hr IN (1, 2)",
        "NOT (hr = 1)",
    ],
    "labels": ["label = 'a/b'", "label = 'x y'", "label IN ('p=q', '100%')", "label > 'b'"],
}


@pytest.mark.parametrize(("table", "where"), [(t, w) for t, ws in PREDICATES.items() for w in ws])
def test_pruning_reads_the_same_files_as_spark(spark: Any, spark_tables: str, session: Session, table: str, where: str | None) -> None:
    assert planned_files(session, spark_tables, table, where) == spark_files(spark, spark_tables, table, where)


def test_partition_values_are_decoded_and_nulls_are_null(spark_tables: str, session: Session) -> None:
    catalog = session.manager.catalog("hive")
    labels = plan_table(catalog, catalog.table(spark_tables, "labels"))
    assert {dict(s.partition_values)["label"] for s in labels.splits} == {"a/b", "x y", "p=q", "100%"}
    events = plan_table(catalog, catalog.table(spark_tables, "events"), "day IS NULL OR hr IS NULL")
    assert {tuple(sorted(dict(s.partition_values).items(), key=str)) for s in events.splits} == {
        (("day", None), ("hr", "5")), (("day", "2024-03-10"), ("hr", None)),
    }


def test_equality_on_leading_string_keys_asks_the_metastore_for_names_by_partial_spec(spark_tables: str, session: Session) -> None:
    catalog = session.manager.catalog("hive")
    table = catalog.table(spark_tables, "sales")
    _ = table.metadata  # the table itself is loaded by DESCRIBE-like use; count only planning
    cold = plan_table(catalog, table, "dt = '2024-01-02'")
    assert cold.summary.metastore_calls == {"get_partition_names_ps": 1, "get_partitions_by_names": 1}
    warm = plan_table(catalog, table, "dt = '2024-01-02'")
    assert warm.summary.metastore_calls == {}
    assert warm.splits == cold.splits
    assert cold.summary.partitions_scanned == 3


@pytest.mark.parametrize(("where", "specs", "scanned"), [
    ("region = 'us'", ["['', 'us']"], 4),  # the second key: '' matches any value of the first
    ("dt IN ('2024-01-01', '2024-01-03')", ["['2024-01-01']", "['2024-01-03']"], 6),
    ("dt IN ('2024-01-01', '2024-01-03') AND region IN ('eu', 'us') AND amount > 5",
     ["['2024-01-01', 'eu']", "['2024-01-01', 'us']", "['2024-01-03', 'eu']", "['2024-01-03', 'us']"], 4),
])
def test_equalities_and_in_lists_on_any_string_keys_ask_names_by_partial_specs(spark_tables: str, session: Session, where: str,
                                                                              specs: list[str], scanned: int) -> None:
    """Each spec is one get_partition_names_ps (a scan of the table's partition names in the metastore, where a filter on a
    key after the first joins every partition's values); the objects come by names."""
    catalog = session.manager.catalog("hive")
    table = catalog.table(spark_tables, "sales")
    _ = table.metadata
    plan = plan_table(catalog, table, where)
    assert plan.summary.metastore_calls == {"get_partition_names_ps": len(specs), "get_partitions_by_names": 1}
    assert any(note.startswith("metastore narrowed by partial spec") and note.endswith(", ".join(specs))
               for note in plan.summary.notes), plan.summary.notes
    assert plan.summary.partitions_scanned == scanned


@pytest.mark.parametrize("where", [
    "dt IN ('2024-01-01', '2024-01-02', '2024-01-03') AND region IN ('eu', 'us', 'apac')",  # 9 specs: past the limit
    "region = 'us' AND dt > '2024-01-01'",  # a range beside the equality: the filter narrows by both in one call
    "dt > '2024-01-02'",
    "dt BETWEEN '2024-01-02' AND '2024-01-03' AND region <> 'eu'",
    "dt = '2024-01-01' OR region = 'apac'",
])
def test_other_filters_go_through_one_get_partitions_by_filter(spark_tables: str, session: Session, where: str) -> None:
    catalog = session.manager.catalog("hive")
    table = catalog.table(spark_tables, "sales")
    _ = table.metadata
    plan = plan_table(catalog, table, where)
    assert plan.summary.metastore_calls == {"get_partitions_by_filter": 1}
    assert any("filter" in note for note in plan.summary.notes)


def test_integral_and_date_keys_are_pushed_too(spark_tables: str, session: Session) -> None:
    catalog = session.manager.catalog("hive")
    table = catalog.table(spark_tables, "events")
    _ = table.metadata
    plan = plan_table(catalog, table, "hr > 2")
    assert plan.summary.metastore_calls == {"get_partitions_by_filter": 1}
    assert plan.summary.partitions_scanned == 2  # hr=13 and hr=5: NULL is no match
    dated = plan_table(catalog, table, "day >= DATE '2024-03-02'")
    assert dated.summary.metastore_calls == {"get_partitions_by_filter": 1}
    assert dated.summary.partitions_scanned == 2
    assert catalog.caches.filter_refusals.snapshot() == {}


def test_refresh_table_forgets_partitions_and_files(spark: Any, spark_tables: str, session: Session) -> None:
    catalog = session.manager.catalog("hive")
    table = catalog.table(spark_tables, "events")
    first = plan_table(catalog, table)
    spark.sql(f"INSERT INTO {spark_tables}.events PARTITION (day, hr) SELECT * FROM VALUES (9, 'z', DATE'2024-04-01', 9)")
    assert plan_table(catalog, table).splits == first.splits  # cached: the new partition is not seen yet
    session.run_one(f"REFRESH TABLE hive.{spark_tables}.events")
    refreshed = plan_table(catalog, table)
    assert len(refreshed.splits) == len(first.splits) + 1
    spark.sql(f"ALTER TABLE {spark_tables}.events DROP PARTITION (day=DATE'2024-04-01', hr=9)")


def test_max_partitions_per_scan_stops_a_large_scan(spark_tables: str, home: Path, metastore_uri: str) -> None:
    session = open_catalog(home, metastore_uri, max_partitions_per_scan="3")
    try:
        with pytest.raises(PlanningError, match=r"would read 4 partitions, more than max_partitions_per_scan=3"):
            session.run_one(f"SHOW SPLITS FROM hive.{spark_tables}.sales WHERE region = 'us'")
        assert session.run_one(f"SHOW SPLITS FROM hive.{spark_tables}.sales WHERE region = 'us' AND dt <= '2024-01-02'").rows
    finally:
        session.manager.close()


def test_small_split_sizes_cut_files_covering_every_byte_once(admin: Admin, unique_name: str, home: Path, metastore_uri: str) -> None:
    location = admin.create_database(unique_name) / "lines"
    admin.create_table(unique_name, "lines", [("line", "string")], formats=hms.TEXT)
    (location / "part-0").write_text("".join(f"line {i}\n" for i in range(1000)))
    (location / "part-1.gz").write_bytes(b"\x1f\x8b" + b"0" * 5000)  # compressed text: one split
    (location / "empty").write_text("")
    (location / "_SUCCESS").write_text("")
    (location / ".part-0.crc").write_text("crc")
    (location / "sub").mkdir()
    (location / "sub" / "nested").write_text("not read unless recursive\n")
    session = open_catalog(home, metastore_uri, **{"file.split.min-size": "1", "file_split_size": "1000"})
    try:
        catalog = session.manager.catalog("hive")
        plan = plan_table(catalog, catalog.table(unique_name, "lines"))
        by_file: dict[str, list[tuple[int, int]]] = {}
        for split in plan.splits:
            by_file.setdefault(Path(local_path(split.path)).name, []).append((split.start, split.length))
        assert sorted(by_file) == ["part-0", "part-1.gz"]
        size = (location / "part-0").stat().st_size
        ranges = by_file["part-0"]
        assert ranges[0][0] == 0 and sum(length for _, length in ranges) == size
        assert all(a + b == c for (a, b), (c, _) in zip(ranges, ranges[1:]))
        assert all(length == 1000 for _, length in ranges[:-1]) and ranges[-1][1] <= 1100
        assert by_file["part-1.gz"] == [(0, 5002)]
        assert set(plan.summary.hosts) == {LocalBlockLocator().host}
        assert plan.summary.files == 3 and plan.summary.bytes == size + 5002
    finally:
        session.manager.close()
    recursive = open_catalog(home / "r", metastore_uri, **{"hive.recursive_directories": "true"})
    try:
        catalog = recursive.manager.catalog("hive")
        names = {Path(local_path(s.path)).name for s in plan_table(catalog, catalog.table(unique_name, "lines")).splits}
        assert names == {"part-0", "part-1.gz", "nested"}
    finally:
        recursive.manager.close()
    admin.drop_database(unique_name)


def test_absent_partition_locations_are_skipped_or_reported(admin: Admin, unique_name: str, home: Path, metastore_uri: str) -> None:
    admin.create_database(unique_name)
    table = admin.create_table(unique_name, "gappy", [("id", "int")], partition_keys=[("p", "string")])
    root = Path(urlparse(table.sd.location).path)
    for value in ("a", "b"):
        sd = hms.storage([("id", "int")], f"file://{root}/p={value}")  # a Hadoop path: '=' stays as is
        partition = hms.ttypes.Partition(values=[value], dbName=unique_name, tableName="gappy", sd=sd, parameters={})
        admin.pool.call("add_partitions", [partition])
    (root / "p=a" / "f.parquet").write_bytes(b"PAR1")
    (root / "p=b").rmdir()  # the metastore made it on add_partitions; a cleaner removed it since
    session = open_catalog(home, metastore_uri)
    try:
        catalog = session.manager.catalog("hive")
        plan = plan_table(catalog, catalog.table(unique_name, "gappy"))
        assert plan.summary.absent_locations == 1 and len(plan.splits) == 1
    finally:
        session.manager.close()
    strict = open_catalog(home / "s", metastore_uri, **{"hive.ignore_absent_partitions": "false"})
    try:
        with pytest.raises(PlanningError, match=r"1 location\(s\) do not exist.*p=b"):
            strict.run_one(f"EXPLAIN SPLITS FROM hive.{unique_name}.gappy")
    finally:
        strict.manager.close()
    admin.drop_database(unique_name)


class _AskingLocator(LocalBlockLocator):
    """A locator that asks something outside the process (as a namenode's is): its answers are worth caching."""

    def asks(self, path: str) -> bool:
        return True


def test_unchanged_files_are_not_looked_up_again_after_refresh(spark_tables: str, session: Session) -> None:
    catalog = session.manager.catalog("hive")
    table = catalog.table(spark_tables, "sales")
    locator = _AskingLocator()
    plan_table(catalog, table, locator=locator)
    looked_up = locator.calls
    assert looked_up == len({s.path for s in plan_table(catalog, table).splits})
    session.run_one(f"REFRESH TABLE hive.{spark_tables}.sales")
    plan_table(catalog, table, locator=locator)
    assert locator.calls == looked_up


def test_blocks_made_up_from_the_size_are_not_cached(spark_tables: str, session: Session) -> None:
    """Local files' blocks cost less to make than to look up: a plan makes them, and the cache holds none."""
    catalog = session.manager.catalog("hive")
    table = catalog.table(spark_tables, "sales")
    catalog.caches.file_blocks.clear()
    local, asking = LocalBlockLocator(), _AskingLocator()
    made = plan_table(catalog, table, locator=local)
    assert local.calls > 0 and len(catalog.caches.file_blocks) == 0
    session.run_one(f"REFRESH TABLE hive.{spark_tables}.sales")
    assert plan_table(catalog, table, locator=asking).splits == made.splits
    assert len(catalog.caches.file_blocks) == asking.calls == local.calls


def test_plans_survive_json_and_pickle(spark_tables: str, session: Session) -> None:
    catalog = session.manager.catalog("hive")
    plan = plan_table(catalog, catalog.table(spark_tables, "events"), "hr < 10")
    again = SplitPlan.loads(plan.dumps())
    assert again == plan
    assert pickle.loads(pickle.dumps(plan)) == plan
    assert again.predicate == "hr < 10"
    assert [c.name for c in again.schema.columns] == ["id", "name", "day", "hr"]


def test_transactional_and_unknown_tables_are_refused_with_the_reason(admin: Admin, unique_name: str, session: Session) -> None:
    orc = ("org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
           "org.apache.hadoop.hive.ql.io.orc.OrcSerde")
    admin.create_database(unique_name)
    acid = hms.table_struct(unique_name, "acid", [("id", "int")], (admin.warehouse / f"{unique_name}.db" / "acid").as_uri(),
                            formats=orc, parameters={"transactional": "true"})
    acid.sd.numBuckets, acid.sd.bucketCols = 2, ["id"]
    acid.tableType, acid.parameters = "MANAGED_TABLE", {"transactional": "true"}
    admin.pool.call("create_table", acid)
    admin.create_table(unique_name, "seq", [("id", "int")], formats=(
        "org.apache.hadoop.mapred.SequenceFileInputFormat", hms.TEXT[1], hms.TEXT[2]))
    with pytest.raises(UnsupportedTableError, match="transactional"):
        session.run_one(f"SHOW SPLITS FROM hive.{unique_name}.acid")
    with pytest.raises(UnsupportedTableError, match="SequenceFileInputFormat is not supported"):
        session.run_one(f"SHOW SPLITS FROM hive.{unique_name}.seq")
    admin.drop_database(unique_name)


def test_show_and_explain_splits(spark_tables: str, session: Session) -> None:
    shown = session.run_one(f"SHOW SPLITS FROM hive.{spark_tables}.sales WHERE dt = '2024-01-01' AND region = 'eu'")
    assert shown.columns == ("path", "start", "length", "file_length", "hosts", "partition_values")
    assert shown.rows and all(row[5] == "dt=2024-01-01/region=eu" for row in shown.rows)
    explained = dict(session.run_one(f"EXPLAIN SPLITS FROM hive.{spark_tables}.sales WHERE dt = '2024-01-01'").rows)
    assert explained["format"] == "HIVE" and explained["partitions_scanned"] == 3
    assert explained["predicate"] == "dt = '2024-01-01'" and explained["splits"] >= 3


@pytest.mark.parametrize(
    ("where", "kinds", "values", "kept"),
    [
        ("p = 1", {"p": "string"}, {"p": "01"}, True),  # Spark compares as numbers: never prune on text
        ("p > 9", {"p": "string"}, {"p": "10"}, True),
        ("p = 'x'", {"p": "string"}, {"p": "y"}, False),
        ("n = '10'", {"n": "int"}, {"n": "10"}, True),
        ("n = '10'", {"n": "int"}, {"n": "11"}, False),
        ("d < TIMESTAMP '2024-01-01 12:00:00'", {"d": "date"}, {"d": "2024-01-01"}, True),
        ("n = 1 OR x = 2", {"n": "int"}, {"n": "5"}, True),  # x is a data column: could match
        ("NOT (n = 1 AND x = 2)", {"n": "int"}, {"n": "1"}, True),
        ("n IS NULL", {"n": "int"}, {"n": None}, True),
        ("n IS NULL", {"n": "int"}, {"n": "3"}, False),
    ],
)
def test_pruning_never_drops_a_partition_that_could_match(where: str, kinds: dict[str, str], values: dict[str, str | None],
                                                          kept: bool) -> None:
    from hms_catalog.sql import parse_expression
    from hms_catalog.types import parse_hive_type
    from planner.predicates import bind

    predicate = bind(parse_expression(where), {k: parse_hive_type(v) for k, v in kinds.items()})
    assert predicate is not None and predicate.may_match(values) is kept


def test_iceberg_filters_are_supersets() -> None:
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField

    from hms_catalog.sql import parse_expression
    from planner.iceberg_filters import to_iceberg_filter

    schema = Schema(NestedField(1, "a", LongType()), NestedField(2, "userId", LongType()))
    assert str(to_iceberg_filter(parse_expression("NOT (a = 1 AND a = b)"), schema)) == "AlwaysTrue()"
    assert str(to_iceberg_filter(parse_expression("a > 1.5"), schema)) == "AlwaysTrue()"  # would be rounded to 2
    assert "userId" in str(to_iceberg_filter(parse_expression("userid = 3"), schema))
    assert "Not" in str(to_iceberg_filter(parse_expression("NOT (a = 1)"), schema))


def test_hudi_partition_paths() -> None:
    from planner.hudi_planner import partition_values_of

    assert partition_values_of("city=sf/day=1", ["city", "day"], True) == (("city", "sf"), ("day", "1"))
    assert partition_values_of("sf/1", ["city", "day"], False) == (("city", "sf"), ("day", "1"))
    assert partition_values_of("2024/01/01", ["dt"], False) == (("dt", "2024/01/01"),)
    assert partition_values_of("a/b/c", ["x", "y"], False) == (("x", None), ("y", None))


def test_hudi_slices_whose_path_values_do_not_parse_are_kept() -> None:
    from hms_catalog.types import BigIntType, StringType
    from planner.hudi_planner import _prunable

    assert _prunable((("city", "sf"),), {"city": StringType()})
    assert not _prunable((("ts", "2024/01/01"),), {"ts": BigIntType()})  # a key generator's formatted value
    assert not _prunable((("x", None),), {"x": StringType()})
