"""A catalog on a real S3 API end to end: moto's server (signatures checked) holding a warehouse written with
pyarrow and pyiceberg, registered at ``s3a://`` locations in the real embedded metastore (its stub S3
filesystem); listing, detection, pruning, reading the plan's files, filesystem catalogs, MSCK REPAIR, DROP,
Iceberg appends, and the errors of a wrong key, an unknown bucket and an unreachable endpoint."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from hms_catalog import open_session
from hms_catalog.cli.main import main
from hms_catalog.errors import HmsCatalogError
from hms_catalog.execution import Session
from planner import plan_table
from tests.support.hms import table_struct
from tests.support.s3 import CLICKS, EVENTS, LAKE_VISITS, NOTES, SALES, S3Server, Warehouse, create_catalog_statement, iceberg_catalog

# The bound on a failure against an endpoint that refuses or never answers: the catalog's request timeout, set
# low here (its attempts share it), with room for a loaded machine; test_store_timeouts.py holds the tight bound.
TIMEOUT_MS = 2000
FAILURE_BOUND_S = 20.0


def _read_split(catalog: Any, path: str, file_format: str) -> pa.Table:
    """A plan's file read with pyarrow through the catalog's storage (its endpoint and credentials)."""
    filesystem, resolved = catalog.storage.resolve(path)
    if file_format == "orc":
        with filesystem.open_input_file(resolved) as handle:
            return orc.read_table(handle)
    return pq.read_table(resolved, filesystem=filesystem)


def test_the_server_checks_signatures(s3_server: S3Server) -> None:
    assert s3_server.refuses_wrong_signatures()


def test_show_tables_describe_and_detection(s3_session: Session, s3_warehouse: Warehouse) -> None:
    database = f"hive.{s3_warehouse.database}"
    written = {"clicks", "events", "notes", "sales"}  # (other tests add and drop tables of their own beside them)
    assert written <= {row[0] for row in s3_session.run_one(f"SHOW TABLES FROM {database}").rows}
    described = s3_session.run_one(f"DESCRIBE {database}.sales").as_dicts()
    assert [(row["Field"], row["Type"], row["PartitionKey"]) for row in described] == [
        ("id", "bigint", False), ("name", "string", False), ("amount", "double", False), ("region", "string", True)]
    status = {row["Name"]: row for row in s3_session.run_one(f"SHOW TABLE STATUS FROM {database}").as_dicts()}
    assert {name: row["Format"] for name, row in status.items() if name in written} == {
        "clicks": "ICEBERG", "events": "HIVE", "notes": "HIVE", "sales": "HIVE"}, status
    partitions = [row[0] for row in s3_session.run_one(f"SHOW PARTITIONS {database}.sales").rows]
    assert sorted(partitions) == ["region=a%2Fb", "region=north", "region=south east"]


@pytest.mark.parametrize(("where", "regions"), [
    ("region = 'a/b'", ["a/b"]),
    ("region = 'south east'", ["south east"]),
    ("region <> 'north'", ["a/b", "south east"]),
])
def test_pruned_splits_read_back_the_rows_written(s3_session: Session, s3_warehouse: Warehouse, where: str,
                                                  regions: list[str]) -> None:
    table = f"hive.{s3_warehouse.database}.sales"
    explained = dict(s3_session.run_one(f"EXPLAIN SPLITS FROM {table} WHERE {where}").rows)
    assert (explained["partitions_scanned"], explained["files"]) == (len(regions), len(regions)), explained
    catalog = s3_session.manager.catalog("hive")
    plan = plan_table(catalog, catalog.table(s3_warehouse.database, "sales"), where)
    assert all(split.path.startswith(f"{s3_warehouse.root}/sales/region=") for split in plan.splits)
    read = sorted(
        (row["id"], row["name"], row["amount"], dict(split.partition_values)["region"])
        for split in plan.splits for row in _read_split(catalog, split.path, "parquet").to_pylist())
    assert read == sorted((r[0], r[1], r[2], region) for region in regions for r in SALES[region])


def test_orc_and_text_tables_plan_their_partitions(s3_session: Session, s3_warehouse: Warehouse) -> None:
    catalog = s3_session.manager.catalog("hive")
    plan = plan_table(catalog, catalog.table(s3_warehouse.database, "events"), "dt = '2026-01-02'")
    assert len(plan.splits) == 1
    assert _read_split(catalog, plan.splits[0].path, "orc").to_pylist() == \
        [{"id": i, "kind": k} for i, k in EVENTS["2026-01-02"]]
    explained = dict(s3_session.run_one(f"EXPLAIN SPLITS FROM hive.{s3_warehouse.database}.notes").rows)
    assert (explained["partitions_scanned"], explained["files"]) == (2, 2), explained
    plan = plan_table(catalog, catalog.table(s3_warehouse.database, "notes"), "dt = '2026-01-01'")
    filesystem, path = catalog.storage.resolve(plan.splits[0].path)
    with filesystem.open_input_stream(path) as handle:
        assert handle.read() == NOTES["2026-01-01"]


def test_msck_repair_finds_partitions_written_behind_the_catalog(s3_session: Session, s3_warehouse: Warehouse,
                                                                unique_name: str) -> None:
    server, root = s3_warehouse.server, f"{s3_warehouse.root}/{unique_name}"
    filesystem = server.filesystem()
    key = root.removeprefix("s3a://")
    pq.write_table(pa.table({"id": pa.array([1], pa.int64())}), f"{key}/dt=one/part-0.parquet", filesystem=filesystem)
    table = f"hive.{s3_warehouse.database}.{unique_name}"
    s3_session.run_one(f"CREATE EXTERNAL TABLE {table} (id BIGINT) PARTITIONED BY (dt STRING) STORED AS PARQUET "
                       f"LOCATION '{root}'")
    s3_session.run_one(f"MSCK REPAIR TABLE {table}")
    assert [row[0] for row in s3_session.run_one(f"SHOW PARTITIONS {table}").rows] == ["dt=one"]
    pq.write_table(pa.table({"id": pa.array([2, 3], pa.int64())}), f"{key}/dt=two%2Fb/part-0.parquet",
                   filesystem=filesystem)  # written behind the catalog's back
    s3_session.run_one(f"MSCK REPAIR TABLE {table}")
    assert sorted(row[0] for row in s3_session.run_one(f"SHOW PARTITIONS {table}").rows) == ["dt=one", "dt=two%2Fb"]
    explained = dict(s3_session.run_one(f"EXPLAIN SPLITS FROM {table} WHERE dt = 'two/b'").rows)
    assert (explained["partitions_scanned"], explained["files"]) == (1, 1), explained
    s3_session.run_one(f"DROP TABLE {table}")
    assert len(server.keys(s3_warehouse.bucket, f"{s3_warehouse.database}.db/{unique_name}/")) == 2  # external: kept


def test_drops_of_a_managed_table_and_partition_delete_their_objects(s3_session: Session, s3_warehouse: Warehouse,
                                                    unique_name: str) -> None:
    server = s3_warehouse.server
    prefix = f"{s3_warehouse.database}.db/{unique_name}/"
    table = f"hive.{s3_warehouse.database}.{unique_name}"
    # No LOCATION (with one it is external, as in Spark): managed, in the database's folder on the bucket.
    s3_session.run_one(f"CREATE TABLE {table} (id BIGINT) PARTITIONED BY (dt STRING) STORED AS PARQUET")
    created = s3_session.run_one(f"SHOW CREATE TABLE {table}").rows[0][0]
    assert created.startswith("CREATE TABLE "), created
    for day in ("d1", "d2"):
        pq.write_table(pa.table({"id": pa.array([1], pa.int64())}), f"{s3_warehouse.bucket}/{prefix}dt={day}/part-0.parquet",
                       filesystem=server.filesystem())
    s3_session.run_one(f"MSCK REPAIR TABLE {table}")  # finds them: the table's folder is where they were written
    assert len(s3_session.run_one(f"SHOW PARTITIONS {table}").rows) == 2
    s3_session.run_one(f"ALTER TABLE {table} DROP PARTITION (dt='d1')")
    # (pyarrow leaves an empty marker object for the emptied parent folder, ``<table>/``: no data)
    assert [key for key in server.keys(s3_warehouse.bucket, prefix) if not key.endswith("/")] == \
        [f"{prefix}dt=d2/part-0.parquet"]
    assert "dropped with its files" in s3_session.run_one(f"DROP TABLE {table}").message
    assert server.keys(s3_warehouse.bucket, prefix) == []
    assert unique_name not in [row[0] for row in s3_session.run_one(f"SHOW TABLES FROM hive.{s3_warehouse.database}").rows]


def test_an_iceberg_append_by_pyiceberg_is_read_back(s3_session: Session, s3_warehouse: Warehouse) -> None:
    table = f"hive.{s3_warehouse.database}.clicks"
    before = dict(s3_session.run_one(f"EXPLAIN SPLITS FROM {table}").rows)
    appended = [(10, "/cart")]
    iceberg = iceberg_catalog(s3_warehouse).load_table(f"{s3_warehouse.database}.clicks")
    iceberg.append(pa.table({"id": pa.array([a[0] for a in appended], pa.int64()), "page": [a[1] for a in appended]}))
    s3_session.run_one(f"REFRESH TABLE {table}")
    after = dict(s3_session.run_one(f"EXPLAIN SPLITS FROM {table}").rows)
    assert after["files"] == before["files"] + 1, (before, after)
    catalog = s3_session.manager.catalog("hive")
    plan = plan_table(catalog, catalog.table(s3_warehouse.database, "clicks"))
    assert plan.table_format == "ICEBERG" and all(s.path.startswith(f"{s3_warehouse.root}/clicks/") for s in plan.splits)
    rows = sorted((row["id"], row["page"]) for split in plan.splits
                  for row in _read_split(catalog, split.path, "parquet").to_pylist())
    assert set(CLICKS) | set(appended) <= set(rows)


def test_drop_purge_of_an_iceberg_table_deletes_its_objects(s3_session: Session, s3_warehouse: Warehouse,
                                                           unique_name: str) -> None:
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField

    prefix = f"{s3_warehouse.database}.db/{unique_name}/"
    iceberg = iceberg_catalog(s3_warehouse).create_table(
        f"{s3_warehouse.database}.{unique_name}", location=f"s3a://{s3_warehouse.bucket}/{prefix}".rstrip("/"),
        schema=Schema(NestedField(1, "id", LongType(), required=False)))
    iceberg.append(pa.table({"id": pa.array([1, 2], pa.int64())}))
    written = s3_warehouse.server.keys(s3_warehouse.bucket, prefix)
    assert any(key.endswith(".parquet") for key in written) and any(key.endswith(".metadata.json") for key in written)
    message = s3_session.run_one(f"DROP TABLE hive.{s3_warehouse.database}.{unique_name} PURGE").message
    assert "its files deleted" in message, message
    assert [key for key in s3_warehouse.server.keys(s3_warehouse.bucket, prefix) if not key.endswith("/")] == []


def test_filesystem_catalog_serves_and_promotes_folders(s3_warehouse: Warehouse, home: Path) -> None:
    session = open_session(home)
    try:
        session.run_one(create_catalog_statement("lake", s3_warehouse.lake_properties(auto_promote="false")))
        assert [row[0] for row in session.run_one("SHOW DATABASES FROM lake").rows] == ["raw"]
        with pytest.raises(HmsCatalogError, match="not promoted"):
            session.run_one("DESCRIBE lake.raw.visits")
        assert "promoted: parquet" in session.run_one("ALTER TABLE lake.raw.visits PROMOTE").message
        described = session.run_one("DESCRIBE lake.raw.visits").as_dicts()
        assert [(row["Field"], row["PartitionKey"]) for row in described] == [("visit_id", False), ("dt", True)]
        catalog = session.manager.catalog("lake")
        plan = plan_table(catalog, catalog.table("raw", "visits"), "dt = '2026-02-02'")
        assert [row["visit_id"] for s in plan.splits for row in _read_split(catalog, s.path, "parquet").to_pylist()] \
            == LAKE_VISITS["2026-02-02"]
        assert "promoted: csv" in session.run_one("ALTER TABLE lake.raw.prices PROMOTE").message
    finally:
        session.manager.close()


def test_a_filesystem_catalog_with_a_wrong_key_is_refused_naming_its_root(s3_warehouse: Warehouse, home: Path) -> None:
    wrong = "not-" + s3_warehouse.server.secret_key
    session = open_session(home)
    try:
        message, _ = _failure(session, create_catalog_statement("lake", s3_warehouse.lake_properties(
            **{"s3.secret_key": wrong})))
        assert "lake" not in [row[0] for row in session.run_one("SHOW CATALOGS").rows]
    finally:
        session.manager.close()
    assert "'root'" in message and s3_warehouse.lake in message and "ACCESS_DENIED" in message, message
    assert wrong not in message and s3_warehouse.server.secret_key not in message


def test_secrets_are_masked_in_show_create_catalog_and_json(s3_warehouse: Warehouse, home: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    secret = s3_warehouse.server.secret_key
    statement = create_catalog_statement("masked", s3_warehouse.catalog_properties())
    assert main(["--home", str(home), "--format", "json", "-e", statement]) == 0
    assert main(["--home", str(home), "--format", "json", "-e", "SHOW CREATE CATALOG masked"]) == 0
    out, err = capsys.readouterr()
    assert secret not in out + err
    created, shown = (json.loads(line) for line in out.strip().splitlines()[-2:])
    assert "'s3.secret_key'='******'" in created["statement"], created
    text = shown["rows"][0][1]
    assert "'s3.secret_key' = '******'" in text and f"'s3.access_key' = '{s3_warehouse.server.access_key}'" in text, text


def _failure(session: Session, statement: str) -> tuple[str, float]:
    started = time.monotonic()
    with pytest.raises(HmsCatalogError) as caught:
        session.run_one(statement)
    return str(caught.value), time.monotonic() - started


@pytest.mark.parametrize("case", ["wrong secret", "closed port", "silent endpoint"])
def test_unreadable_store_errors_name_catalog_and_location(s3_warehouse: Warehouse, home: Path, refused_uri: str,
                                                          silent_uri: str, case: str) -> None:
    """Each within the timeouts set (the defaults, 10 s to connect and 60 s a request, would not fit the bound)."""
    secret = s3_warehouse.server.secret_key
    overrides = {"s3.connection.timeout": str(TIMEOUT_MS), "s3.request.timeout": str(TIMEOUT_MS)}
    if case == "wrong secret":
        overrides["s3.secret_key"] = "not-" + secret
    elif case == "closed port":
        overrides["s3.endpoint"] = refused_uri.replace("thrift://", "http://")
    else:  # accepts connections and never answers a byte
        overrides["s3.endpoint"] = silent_uri.replace("thrift://", "http://")
    session = open_session(home)
    try:
        session.run_one(create_catalog_statement("broken", s3_warehouse.catalog_properties(**overrides)))
        message, took = _failure(session, f"EXPLAIN SPLITS FROM broken.{s3_warehouse.database}.sales")
    finally:
        session.manager.close()
    assert "'broken'" in message and f"{s3_warehouse.root}/sales" in message, message
    assert secret not in message and overrides.get("s3.secret_key", secret) not in message
    assert took < FAILURE_BOUND_S, (took, message)


@pytest.mark.parametrize(("statement", "location"), [
    ("MSCK REPAIR TABLE broken.{db}.sales", "{db}.db/sales"),
    ("DESCRIBE broken.{db}.clicks", "{db}.db/clicks/metadata/"),  # Iceberg metadata, read through pyiceberg
], ids=["msck-repair", "iceberg-describe"])
def test_a_wrong_secret_fails_every_path_naming_catalog_and_location(s3_warehouse: Warehouse, home: Path,
                                                                    statement: str, location: str) -> None:
    statement, location = (text.format(db=s3_warehouse.database) for text in (statement, location))
    wrong = "not-" + s3_warehouse.server.secret_key
    session = open_session(home)
    try:
        session.run_one(create_catalog_statement("broken", s3_warehouse.catalog_properties(**{"s3.secret_key": wrong})))
        message, _ = _failure(session, statement)
    finally:
        session.manager.close()
    assert "'broken'" in message and f"s3a://{s3_warehouse.bucket}/{location}" in message, message
    assert wrong not in message and s3_warehouse.server.secret_key not in message


def _missing_bucket(unique_name: str) -> str:
    return f"s3a://no-such-bucket-{unique_name.replace('_', '-')}/t"


def test_planning_a_table_in_an_unknown_bucket_names_it(s3_session: Session, s3_warehouse: Warehouse, admin: Any,
                                                       unique_name: str) -> None:
    location = _missing_bucket(unique_name)
    # Registered by another engine, straight through the metastore (the catalog's own DDL checks the bucket).
    admin.pool.call("create_table", table_struct(s3_warehouse.database, unique_name, [("id", "bigint")], location))
    try:
        message, took = _failure(s3_session, f"EXPLAIN SPLITS FROM hive.{s3_warehouse.database}.{unique_name}")
    finally:
        admin.drop_table(s3_warehouse.database, unique_name)
    assert "'hive'" in message and location in message and "bucket" in message.lower(), message
    assert s3_warehouse.server.secret_key not in message
    assert took < FAILURE_BOUND_S


def test_create_table_in_an_unknown_bucket_is_refused(s3_session: Session, s3_warehouse: Warehouse,
                                                     unique_name: str) -> None:
    location = _missing_bucket(unique_name)
    table = f"hive.{s3_warehouse.database}.{unique_name}"
    try:
        message, _ = _failure(s3_session, f"CREATE EXTERNAL TABLE {table} (id BIGINT) STORED AS PARQUET LOCATION '{location}'")
    finally:
        s3_session.run_one(f"DROP TABLE IF EXISTS {table}")
    assert location in message and "bucket" in message.lower(), message
    assert s3_warehouse.server.secret_key not in message


def test_msck_repair_of_a_table_in_an_unknown_bucket_fails(s3_session: Session, s3_warehouse: Warehouse, admin: Any,
                                                          unique_name: str) -> None:
    """Not "the partitions match its folders": a bucket that does not exist is no empty folder."""
    location = _missing_bucket(unique_name)
    admin.pool.call("create_table", table_struct(s3_warehouse.database, unique_name, [("id", "bigint")], location,
                                                 partition_keys=[("dt", "string")]))
    try:
        message, _ = _failure(s3_session, f"MSCK REPAIR TABLE hive.{s3_warehouse.database}.{unique_name}")
    finally:
        admin.drop_table(s3_warehouse.database, unique_name)
    assert "'hive'" in message and location in message and "bucket" in message.lower(), message


def test_altered_storage_properties_take_effect_at_once(s3_warehouse: Warehouse, home: Path) -> None:
    """A catalog's filesystems are rebuilt when its properties change: the wrong key fails, the corrected
    one (ALTER CATALOG, no restart, no REFRESH) plans, and the filesystem of the old settings is gone."""
    session = open_session(home)
    wrong = "not-" + s3_warehouse.server.secret_key
    try:
        session.run_one(create_catalog_statement("altered", s3_warehouse.catalog_properties(**{"s3.secret_key": wrong})))
        with pytest.raises(HmsCatalogError, match="catalog 'altered'"):
            session.run_one(f"EXPLAIN SPLITS FROM altered.{s3_warehouse.database}.sales")
        before = session.manager.catalog("altered").storage
        session.run_one(f"ALTER CATALOG altered SET PROPERTIES ('s3.secret_key'='{s3_warehouse.server.secret_key}')")
        catalog = session.manager.catalog("altered")
        assert catalog.storage is not before and catalog.storage.config.s3.secret_key == s3_warehouse.server.secret_key
        plan = plan_table(catalog, catalog.table(s3_warehouse.database, "sales"))
        assert plan.splits and all(split.path.startswith("s3a://") for split in plan.splits)
    finally:
        session.manager.close()
