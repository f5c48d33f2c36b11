"""Filesystem catalogs over folders written by Spark, pyarrow, pyiceberg and Hudi: the rows equal what each
writer's own reader (or Spark told the format by hand) returns, and promotions are kept."""

from __future__ import annotations

import zipfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hms_catalog import open_session
from hms_catalog.errors import AlreadyExistsError, ConfigurationError, NotFoundError, UnsupportedTableError
from hms_catalog.execution import Session
from hms_catalog.manager import CatalogManager
from hms_catalog.state import open_definitions
from tests.support.sessions import read_hms

HUDI_FIXTURE = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "hudi" / "sample_table_cow_v6_nonpartitioned.zip"


def _rows(frame: Any) -> Counter[tuple[tuple[str, Any], ...]]:
    """Rows as name-value pairs (column order differs between readers: Spark puts partitions last)."""
    def plain(value: Any) -> Any:
        if hasattr(value, "asDict"):
            return tuple(sorted((k, plain(v)) for k, v in value.asDict().items()))
        if isinstance(value, list):
            return tuple(plain(v) for v in value)
        return value
    return Counter(tuple(sorted((k, plain(v)) for k, v in row.asDict().items())) for row in frame.collect())


@pytest.fixture(scope="module")
def lake(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lake")
    raw = root / "raw"
    frame = spark.range(0, 300).selectExpr(
        "id", "cast(id % 7 as int) as bucket", "concat('n, ', id) as name", "id * 1.5 as amount",
        "date_add(date'2024-01-01', cast(id % 3 as int)) as day",
    )
    frame.write.partitionBy("day").parquet(str(raw / "events_parquet"))
    frame.write.partitionBy("bucket").orc(str(raw / "events_orc"))
    frame.drop("day").write.option("header", True).csv(str(raw / "drops_csv"))
    frame.selectExpr("id", "name", "named_struct('b', bucket, 'tags', array(name, 'x')) as detail").write.json(str(raw / "exports_json"))
    return root


@pytest.fixture
def fs_session(lake: Path, home: Path) -> Iterator[Session]:
    session = open_session(home)
    session.run_one(f"CREATE CATALOG lake PROPERTIES ('type'='filesystem', 'root'='{lake.as_uri()}')")
    yield session
    session.manager.close()


@pytest.mark.parametrize(("table", "reader"), [
    ("events_parquet", lambda spark, path: spark.read.parquet(path)),
    ("events_orc", lambda spark, path: spark.read.orc(path)),
    ("drops_csv", lambda spark, path: spark.read.option("header", True).option("inferSchema", True).csv(path)),
    ("exports_json", lambda spark, path: spark.read.json(path)),
])
def test_spark_written_folders_read_as_spark_reads_them(spark: Any, lake: Path, home: Path, fs_session: Session,
                                                       table: str, reader: Any) -> None:
    ours = read_hms(spark, home, f"lake.raw.{table}")
    theirs = reader(spark, str(lake / "raw" / table))
    assert _rows(ours) == _rows(theirs)
    assert len(_rows(ours)) == 300


def test_describe_status_and_pruned_splits(fs_session: Session) -> None:
    described = fs_session.run_one("DESCRIBE lake.raw.events_parquet").as_dicts()
    assert [(row["Field"], row["Type"], row["PartitionKey"]) for row in described] == [
        ("id", "bigint", False), ("bucket", "int", False), ("name", "string", False), ("amount", "decimal(23,1)", False),
        ("day", "date", True),
    ]
    status = {row["Name"]: row for row in fs_session.run_one("SHOW TABLE STATUS FROM lake.raw").as_dicts()}
    assert {name: row["FileFormat"] for name, row in status.items()} == {
        "drops_csv": "csv", "events_orc": "orc", "events_parquet": "parquet", "exports_json": "json"}
    pruned = fs_session.run_one("SHOW SPLITS FROM lake.raw.events_parquet WHERE day = DATE '2024-01-02'").as_dicts()
    assert pruned and all(row["partition_values"] == "day=2024-01-02" for row in pruned)
    assert fs_session.run_one("SHOW DATABASES FROM lake").column("Database") == ["raw"]


def test_a_promotion_is_kept_for_later_sessions(lake: Path, home: Path, fs_session: Session) -> None:
    fs_session.run_one("DESCRIBE lake.raw.events_orc")
    assert fs_session.manager.catalog("lake").metrics().calls.get("detect") == 1
    later = CatalogManager(open_definitions(home))  # another process on the same home
    try:
        later.catalog("lake").table("raw", "events_orc").schema  # noqa: B018 - loads it
        assert "detect" not in later.catalog("lake").metrics().calls
    finally:
        later.close()


def test_without_auto_promote_only_promoted_tables_are_served(lake: Path, fs_session: Session) -> None:
    fs_session.run_one(f"CREATE CATALOG strict PROPERTIES ('type'='filesystem', 'root'='{lake.as_uri()}', 'auto_promote'='false')")
    assert not fs_session.run_one("SHOW TABLES FROM strict.raw").rows
    with pytest.raises(NotFoundError, match=r"not promoted \(auto_promote is off\): ALTER TABLE strict.raw.drops_csv PROMOTE"):
        fs_session.run_one("DESCRIBE strict.raw.drops_csv")
    promoted = fs_session.run_one("ALTER TABLE strict.raw.drops_csv PROMOTE")
    assert "promoted: csv" in promoted.message
    assert fs_session.run_one("SHOW TABLES FROM strict.raw").column("Table") == ["drops_csv"]
    assert len(fs_session.run_one("DESCRIBE strict.raw.drops_csv").rows) == 4


def test_set_format_overrides_and_refresh_metadata_detects_again(spark: Any, tmp_path: Path, home: Path) -> None:
    root = tmp_path / "lake"
    (root / "db" / "codes").mkdir(parents=True)
    (root / "db" / "codes" / "a.txt").write_text("code;label\nx;first\ny;second\n")
    session = open_session(home)
    session.run_one(f"CREATE CATALOG lake PROPERTIES ('type'='filesystem', 'root'='{root.as_uri()}')")
    try:
        detected = [row["Field"] for row in session.run_one("DESCRIBE lake.db.codes").as_dicts()]
        assert detected == ["code", "label"]  # ';' and the header sniffed from the sample
        assert sorted(tuple(row) for row in read_hms(spark, home, "lake.db.codes").collect()) == [("x", "first"), ("y", "second")]
        session.run_one("ALTER TABLE lake.db.codes SET FORMAT ('type'='csv', 'delimiter'=';', 'header'='false')")
        assert [row["Field"] for row in session.run_one("DESCRIBE lake.db.codes").as_dicts()] == ["_c0", "_c1"]
        rows = sorted(tuple(row) for row in read_hms(spark, home, "lake.db.codes").collect())
        assert rows == [("code", "label"), ("x", "first"), ("y", "second")]
        with pytest.raises(ConfigurationError, match="'type' must be one of parquet, orc, avro, csv, json, got 'xml'"):
            session.run_one("ALTER TABLE lake.db.codes SET FORMAT ('type'='xml')")

        (root / "db" / "codes" / "a.txt").unlink()
        pq.write_table(pa.table({"code": ["z"], "weight": [1.5]}), root / "db" / "codes" / "b.parquet")
        session.run_one("REFRESH TABLE lake.db.codes")  # files listed again, the kept format stays
        assert session.manager.catalog("lake").table("db", "codes").detection.file_format == "csv"
        session.run_one("ALTER TABLE lake.db.codes REFRESH METADATA")
        assert [row["Field"] for row in session.run_one("DESCRIBE lake.db.codes").as_dicts()] == ["code", "weight"]
        assert [tuple(row) for row in read_hms(spark, home, "lake.db.codes").collect()] == [("z", 1.5)]
    finally:
        session.manager.close()


def test_iceberg_and_hudi_folders(spark: Any, iceberg_catalog: Any, tmp_path: Path, home: Path, unique_name: str) -> None:
    import hudi
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    root = tmp_path / "lake"
    iceberg_catalog.create_namespace(unique_name)
    written = iceberg_catalog.create_table(
        f"{unique_name}.orders", Schema(NestedField(1, "id", LongType()), NestedField(2, "item", StringType())),
        location=(root / "tables" / "orders").as_uri(),
    )
    written.append(pa.table({"id": pa.array([1, 2], pa.int64()), "item": ["a", "b"]}))
    written.append(pa.table({"id": pa.array([3], pa.int64()), "item": ["c"]}))
    with zipfile.ZipFile(HUDI_FIXTURE) as bundle:
        bundle.extractall(tmp_path / "unzipped")
    (tmp_path / "unzipped" / "v6_nonpartitioned").rename(root / "tables" / "trips")
    session = open_session(home)
    session.run_one(f"CREATE CATALOG lake PROPERTIES ('type'='filesystem', 'root'='{root.as_uri()}')")
    try:
        status = {row["Name"]: row["Format"] for row in session.run_one("SHOW TABLE STATUS FROM lake.tables").as_dicts()}
        assert status == {"orders": "ICEBERG", "trips": "HUDI"}
        iceberg_rows = sorted(tuple(row) for row in read_hms(spark, home, "lake.tables.orders").collect())
        assert iceberg_rows == sorted(zip(*written.refresh().scan().to_arrow().to_pydict().values()))
        theirs = hudi.HudiTableBuilder.from_base_uri(str(root / "tables" / "trips")).build()
        expected = sum(batch.num_rows for batch in theirs.read())
        assert read_hms(spark, home, "lake.tables.trips").count() == expected > 0
    finally:
        session.manager.close()
        iceberg_catalog.drop_table(f"{unique_name}.orders")
        iceberg_catalog.drop_namespace(unique_name)


def test_a_missing_root_is_refused_at_create(home: Path, tmp_path: Path) -> None:
    session = open_session(home)
    with pytest.raises(ConfigurationError, match=rf"property 'root': {(tmp_path / 'nowhere').as_uri()} does not exist"):
        session.run_one(f"CREATE CATALOG lake PROPERTIES ('type'='filesystem', 'root'='{(tmp_path / 'nowhere').as_uri()}')")
    with pytest.raises(ConfigurationError, match="property 'root' is required for a filesystem catalog"):
        session.run_one("CREATE CATALOG lake PROPERTIES ('type'='filesystem')")
    assert not session.run_one("SHOW CATALOGS").rows


def test_create_table_like_path_registers_folders_spark_then_reads(spark: Any, lake: Path, home: Path, metastore_uri: str,
                                                                   admin: Any, unique_name: str, fs_session: Session,
                                                                   tmp_path: Path) -> None:
    admin.create_database(unique_name)
    fs_session.run_one(f"CREATE CATALOG hive PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore_uri}')")
    try:
        created = fs_session.run_one(f"CREATE TABLE hive.{unique_name}.events LIKE PATH '{(lake / 'raw' / 'events_parquet').as_uri()}'")
        assert created.message == f"table 'hive.{unique_name}.events' created as parquet with 4 columns and 3 partitions"
        fs_session.run_one(f"CREATE TABLE hive.{unique_name}.drops LIKE PATH '{(lake / 'raw' / 'drops_csv').as_uri()}'")
        for registered, folder in (("events", "events_parquet"), ("drops", "drops_csv")):
            assert _rows(spark.table(f"{unique_name}.{registered}")) == _rows(read_hms(spark, home, f"lake.raw.{folder}"))
        assert [p.values for p in admin.pool.call("get_partitions", unique_name, "events", -1)] == [
            ["2024-01-01"], ["2024-01-02"], ["2024-01-03"]]
        with pytest.raises(AlreadyExistsError, match=f"table '{unique_name}.events' already exists"):
            fs_session.run_one(f"CREATE TABLE hive.{unique_name}.events LIKE PATH '{(lake / 'raw' / 'events_orc').as_uri()}'")
        again = fs_session.run_one(f"CREATE TABLE IF NOT EXISTS hive.{unique_name}.events LIKE PATH '{lake.as_uri()}/raw/events_orc'")
        assert "already exists" in again.message
        (tmp_path / "ice" / "metadata").mkdir(parents=True)
        (tmp_path / "ice" / "metadata" / "v1.metadata.json").write_text("{}")
        with pytest.raises(UnsupportedTableError, match="iceberg has no Hive table equivalent to register"):
            fs_session.run_one(f"CREATE TABLE hive.{unique_name}.ice LIKE PATH '{(tmp_path / 'ice').as_uri()}'")
        assert sorted(fs_session.run_one(f"SHOW TABLES FROM hive.{unique_name}").column("Table")) == ["drops", "events"]
    finally:
        admin.drop_database(unique_name)
