"""Hudi tables: hand-made copy-on-write tables (built here) and Spark-written ones (shared fixtures)."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hms_catalog.execution import Session
from tests.support.hms import Admin
from tests.support.hudi_tables import META_FIELDS, HudiCommit, hive_sync_table, write_cow_table

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "hudi"

TRIPS_V1 = {"type": "record", "name": "trips_record", "namespace": "hoodie.trips", "fields": [
    {"name": "id", "type": "long"},
    {"name": "rider", "type": ["null", "string"], "default": None},
    {"name": "fare", "type": ["null", {"type": "fixed", "name": "fare_fixed", "size": 5, "logicalType": "decimal",
                                       "precision": 10, "scale": 2}], "default": None},
    {"name": "at", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}], "default": None},
    {"name": "city", "type": ["null", "string"], "default": None},
]}
TRIPS_V2 = {**TRIPS_V1, "fields": [*TRIPS_V1["fields"][:4], {"name": "tip", "type": ["null", "double"], "default": None},
                                   TRIPS_V1["fields"][4]]}



@pytest.fixture
def trips(admin: Admin, unique_name: str, tmp_path: Path) -> str:
    import datetime
    from decimal import Decimal

    def rows(ids: list[int], city: str, with_tip: bool) -> pa.Table:
        columns: dict[str, Any] = {
            "id": pa.array(ids, pa.int64()), "rider": [f"r{i}" for i in ids],
            "fare": pa.array([Decimal("12.50")] * len(ids), pa.decimal128(10, 2)),
            "at": pa.array([datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)] * len(ids), pa.timestamp("us", tz="UTC")),
        }
        if with_tip:
            columns["tip"] = [1.0] * len(ids)
        columns["city"] = [city] * len(ids)
        return pa.table(columns)

    base = write_cow_table(tmp_path / "trips", "trips", [
        HudiCommit("20240101000000000", TRIPS_V1, {"city=sf": rows([1, 2], "sf", False)}),
        HudiCommit("20240102000000000", TRIPS_V2, {"city=nyc": rows([3], "nyc", True)}),
    ], partition_field="city")
    admin.create_database(unique_name)
    admin.pool.call("create_table", hive_sync_table(
        unique_name, "trips", base,
        [("id", "bigint"), ("rider", "string"), ("fare", "decimal(10,2)"), ("at", "bigint"), ("tip", "double")],
        partition_keys=[("city", "string")],
    ))
    return unique_name


def test_hudi_schema_comes_from_the_latest_commit(trips: str, session: Session) -> None:
    catalog = session.manager.catalog("hive")
    before = catalog.metrics()
    rows = session.run_one(f"DESCRIBE hive.{trips}.trips").rows
    assert catalog.metrics().calls_since(before) == {"get_table_req": 1}
    assert [r[0] for r in rows] == [*META_FIELDS, "id", "rider", "fare", "at", "tip", "city"]
    types = {r[0]: r[1] for r in rows}
    assert (types["fare"], types["at"], types["tip"], types["city"]) == ("decimal(10,2)", "timestamp", "double", "string")
    assert rows[0][4] == "Hudi meta field" and rows[-1][3] is True
    handle = catalog.table(trips, "trips")
    assert handle.detection.format.value == "HUDI"
    assert handle.schema.details["latest-commit"] == "20240102000000000"
    assert handle.schema.details["table-type"] == "COPY_ON_WRITE"


def test_hudi_schema_equals_the_hudi_packages_own(trips: str, session: Session) -> None:
    import hudi

    handle = session.manager.catalog("hive").table(trips, "trips")
    theirs = hudi.HudiTableBuilder.from_base_uri(handle.thrift.sd.location).build().get_schema_with_meta_fields()
    ours = handle.schema.arrow_schema([c.name for c in handle.schema.data_columns])
    theirs_data = pa.schema([f for f in theirs if f.name != "city"])
    assert ours.names == theirs_data.names
    assert [f.type for f in ours] == [f.type for f in theirs_data]


def _fixture_tables() -> list[Path]:
    if not FIXTURES.is_dir():
        return []
    return sorted(FIXTURES.glob("*.zip"))


@pytest.mark.parametrize("archive", _fixture_tables(), ids=lambda p: p.stem)
def test_spark_written_hudi_fixtures_describe_like_hudi_reads_them(
    archive: Path, admin: Admin, unique_name: str, session: Session, tmp_path: Path
) -> None:
    import hudi

    with zipfile.ZipFile(archive) as bundle:
        bundle.extractall(tmp_path)
    roots = [
        p.parent.parent for p in tmp_path.rglob(".hoodie/hoodie.properties")
        if "__MACOSX" not in p.parts and ".hoodie" not in p.parent.parent.parts  # skip v9's metadata table
    ]
    assert len(roots) == 1, f"{archive.name}: expected one table root, found {roots}"
    root = roots[0]
    theirs = hudi.HudiTableBuilder.from_base_uri(str(root)).build()
    partition_names = [f.name for f in theirs.get_partition_schema()]
    data = [f for f in theirs.get_schema() if f.name not in partition_names]
    admin.create_database(unique_name)
    variants = {"ro": False, "rt": True} if theirs.is_mor else {"cow": False}
    for suffix, realtime in variants.items():
        admin.pool.call("create_table", hive_sync_table(
            unique_name, f"t_{suffix}", root, [(f.name, "string") for f in data],
            partition_keys=[(name, "string") for name in partition_names], realtime=realtime,
        ))
        handle = session.manager.catalog("hive").table(unique_name, f"t_{suffix}")
        assert handle.detection.format.value == "HUDI"
        assert handle.detection.hudi_query == ("snapshot" if realtime else "read_optimized")
        described = [c.name for c in handle.schema.columns]
        expected = [f.name for f in theirs.get_schema_with_meta_fields() if f.name not in partition_names] + partition_names
        assert described == expected
        assert handle.schema.details["table-type"] == theirs.table_type


def test_the_shared_hudi_fixtures_are_present_or_reported() -> None:
    if not FIXTURES.is_dir():
        pytest.skip(f"shared Hudi fixtures not found at {FIXTURES}; the conformance tests above did not run")
    assert _fixture_tables(), f"no *.zip tables in {FIXTURES}"
