"""A store that accepts connections and never answers: each statement that reaches it (a plan, a DDL location
check, MSCK REPAIR, a Hudi or Iceberg table's DESCRIBE) fails with an error naming the catalog, the endpoint,
what was being done and the timeout, within the catalog's request timeout plus a margin, however many attempts
the engine makes (hudi-rs's, which cannot be set, are cut short from outside); and the same settings still
serve a store that answers.

The margin, ``MARGIN_S``: what a statement spends before it reaches the store (its metastore calls), the
engine's one-second tick at which it looks for silence, and a loaded machine's scheduling; the attempts,
their back-off and the connection are kept within the timeout itself (:mod:`hms_catalog.storage.timeouts`).
Before, each attempt had the whole timeout (and the ten-second connect timeout) to itself: seven to ten
seconds for a timeout of two, over thirty through TLS, and three minutes with the default.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hms_catalog import open_session
from hms_catalog.errors import HmsCatalogError
from hms_catalog.execution import Session
from tests.support.hms import Admin
from tests.support.hudi_tables import META_FIELDS, HudiCommit, hive_sync_table, write_cow_table
from tests.support.s3 import Warehouse, create_catalog_statement

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test

TIMEOUT_S = 2
MARGIN_S = 2.0
BOUND_S = TIMEOUT_S + MARGIN_S


@pytest.fixture(params=["http", "https"])
def silent_endpoint(request: pytest.FixtureRequest, silent_uri: str) -> str:
    """A socket that accepts and never answers a byte, as a plain endpoint (the request goes unanswered) and
    as a TLS one (the handshake goes unanswered: the engine is still connecting)."""
    return silent_uri.replace("thrift://", f"{request.param}://")


def _statements(warehouse: Warehouse, catalog: str, name: str) -> dict[str, str]:
    table = f"{catalog}.{warehouse.database}"
    return {
        "show splits": f"SHOW SPLITS FROM {table}.sales",
        "explain splits": f"EXPLAIN SPLITS FROM {table}.sales WHERE region <> 'north'",
        "create table": f"CREATE EXTERNAL TABLE {table}.{name} (id BIGINT) PARTITIONED BY (dt STRING) "
                        f"STORED AS PARQUET LOCATION '{warehouse.root}/{name}'",
        "add partition": f"ALTER TABLE {table}.sales ADD PARTITION (region='{name}') "
                         f"LOCATION '{warehouse.root}/sales/region={name}'",
        "msck repair": f"MSCK REPAIR TABLE {table}.sales",
    }


@pytest.fixture
def silent_session(s3_warehouse: Warehouse, home: Path, silent_endpoint: str) -> Iterator[Session]:
    """A session whose catalog ``silent`` is the warehouse's metastore with its store at the silent endpoint,
    the request timeout set short and the connection timeout left at its default (ten seconds)."""
    session = open_session(home)
    session.run_one(create_catalog_statement("silent", s3_warehouse.catalog_properties(
        **{"s3.endpoint": silent_endpoint, "s3.request.timeout": str(TIMEOUT_S * 1000)})))
    yield session
    session.manager.close()


def _fails_within_the_timeout(session: Session, text: str, endpoint_url: str, warehouse: Warehouse, where: str) -> None:
    """``text`` fails within the bound, naming the catalog, the endpoint, the timeout and its key, and ``where``
    it was reading; the secret key is never shown."""
    started = time.monotonic()
    with pytest.raises(HmsCatalogError) as caught:
        session.run_one(text)
    took = time.monotonic() - started
    message = str(caught.value)
    assert took < BOUND_S, (took, message)
    endpoint = endpoint_url.split("://", 1)[1]
    assert "catalog 'silent'" in message and endpoint in message, message
    assert f"within {TIMEOUT_S} s" in message and "'s3.request.timeout'" in message, message
    assert where in message, message
    assert warehouse.server.secret_key not in message


@pytest.mark.parametrize("statement", ["show splits", "explain splits", "create table", "add partition", "msck repair"])
def test_a_silent_store_fails_each_statement_within_the_request_timeout(
        silent_session: Session, s3_warehouse: Warehouse, silent_endpoint: str, unique_name: str, statement: str) -> None:
    text = _statements(s3_warehouse, "silent", unique_name)[statement]
    _fails_within_the_timeout(silent_session, text, silent_endpoint, s3_warehouse, s3_warehouse.root)


def test_the_same_timeout_serves_a_store_that_answers(s3_warehouse: Warehouse, home: Path, unique_name: str) -> None:
    """The statements above, against moto's store with the same short timeout, do their work."""
    session = open_session(home)
    try:
        session.run_one(create_catalog_statement("answering", s3_warehouse.catalog_properties(
            **{"s3.request.timeout": str(TIMEOUT_S * 1000)})))
        statements = _statements(s3_warehouse, "answering", unique_name)
        assert len(session.run_one(statements["show splits"]).rows) == 3  # one file per region
        assert dict(session.run_one(statements["explain splits"]).rows)["files"] == 2
        session.run_one(statements["create table"])
        table = f"answering.{s3_warehouse.database}.{unique_name}"
        try:
            session.run_one(f"ALTER TABLE {table} ADD PARTITION (dt='one') LOCATION '{s3_warehouse.root}/{unique_name}/dt=one'")
            session.run_one(f"MSCK REPAIR TABLE {table}")
            assert [row[0] for row in session.run_one(f"SHOW PARTITIONS {table}").rows] == ["dt=one"]
        finally:
            session.run_one(f"DROP TABLE {table}")
        session.run_one(statements["msck repair"])
        assert len(session.run_one(f"SHOW PARTITIONS answering.{s3_warehouse.database}.sales").rows) == 3
    finally:
        session.manager.close()


# Hudi tables: hudi-rs reads them with its own client, whose retries (ten, within three minutes) cannot be set.

HUDI_TABLE = "rides"
HUDI_SCHEMA = {"type": "record", "name": "rides_record", "namespace": "hoodie.rides", "fields": [
    {"name": "id", "type": "long"}, {"name": "rider", "type": ["null", "string"], "default": None},
    {"name": "city", "type": ["null", "string"], "default": None},
]}


@pytest.fixture(scope="module")
def hudi_table(s3_warehouse: Warehouse, admin: Admin, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A copy-on-write Hudi table of two commits (one partition each), written by the tests' builder, copied
    to the warehouse's bucket and registered at its ``s3a://`` location as Hudi's hive sync registers it."""
    import pyarrow as pa

    def rides(ids: list[int], city: str) -> pa.Table:
        return pa.table({"id": pa.array(ids, pa.int64()), "rider": [f"r{i}" for i in ids], "city": [city] * len(ids)})

    local = write_cow_table(tmp_path_factory.mktemp("hudi") / HUDI_TABLE, HUDI_TABLE, [
        HudiCommit("20240101000000000", HUDI_SCHEMA, {"city=sf": rides([1, 2], "sf")}),
        HudiCommit("20240102000000000", HUDI_SCHEMA, {"city=nyc": rides([3], "nyc")}),
    ], partition_field="city")
    filesystem = s3_warehouse.server.filesystem()
    prefix = f"{s3_warehouse.bucket}/{s3_warehouse.database}.db/{HUDI_TABLE}"
    for path in sorted(p for p in local.rglob("*") if p.is_file()):
        with filesystem.open_output_stream(f"{prefix}/{path.relative_to(local).as_posix()}") as out:
            out.write(path.read_bytes())
    table = hive_sync_table(s3_warehouse.database, HUDI_TABLE, local, [("id", "bigint"), ("rider", "string")],
                            partition_keys=[("city", "string")])
    table.sd.location = f"{s3_warehouse.root}/{HUDI_TABLE}"
    admin.pool.call("create_table", table)
    yield HUDI_TABLE
    admin.drop_table(s3_warehouse.database, HUDI_TABLE)


def _format_statements(warehouse: Warehouse, catalog: str, hudi: str) -> dict[str, tuple[str, str]]:
    """Each statement, and the location its error names (a Hudi table's root, an Iceberg table's metadata file)."""
    table = f"{catalog}.{warehouse.database}.{hudi}"
    root = f"{warehouse.root}/{hudi}"
    return {"describe hudi": (f"DESCRIBE {table}", root), "show splits hudi": (f"SHOW SPLITS FROM {table}", root),
            "explain splits hudi": (f"EXPLAIN SPLITS FROM {table} WHERE city <> 'sf'", root),
            "describe iceberg": (f"DESCRIBE {catalog}.{warehouse.database}.clicks", f"{warehouse.root}/clicks/metadata/")}


@pytest.mark.parametrize("statement", ["describe hudi", "show splits hudi", "explain splits hudi", "describe iceberg"])
def test_a_silent_store_fails_each_table_format_statement_within_the_request_timeout(
        silent_session: Session, s3_warehouse: Warehouse, silent_endpoint: str, hudi_table: str, statement: str) -> None:
    """hudi-rs would retry a silent store for three minutes; pyiceberg's error named neither endpoint nor timeout."""
    text, location = _format_statements(s3_warehouse, "silent", hudi_table)[statement]
    _fails_within_the_timeout(silent_session, text, silent_endpoint, s3_warehouse, location)


def test_the_hudi_reader_a_silent_store_leaves_behind_ends_by_itself(
        s3_warehouse: Warehouse, home: Path, silent_uri: str, hudi_table: str) -> None:
    """hudi-rs is given the catalog's timeouts for each attempt, so the call the catalog stopped waiting for ends
    after hudi-rs's own ten retries (of a fifth of a second each here), not after its three minutes."""
    session = open_session(home)
    try:
        session.run_one(create_catalog_statement("brief", s3_warehouse.catalog_properties(
            **{"s3.endpoint": silent_uri.replace("thrift://", "http://"), "s3.request.timeout": "200"})))
        others = set(threading.enumerate())
        with pytest.raises(HmsCatalogError):
            session.run_one(f"DESCRIBE brief.{s3_warehouse.database}.{hudi_table}")
        [worker] = [thread for thread in threading.enumerate() if thread not in others and thread.name.startswith("hms-catalog: read")]
        worker.join(timeout=60)
        assert not worker.is_alive()
    finally:
        session.manager.close()


def test_the_same_timeout_serves_hudi_and_iceberg_tables_on_a_store_that_answers(
        s3_warehouse: Warehouse, home: Path, hudi_table: str) -> None:
    session = open_session(home)
    try:
        session.run_one(create_catalog_statement("answering", s3_warehouse.catalog_properties(
            **{"s3.request.timeout": str(TIMEOUT_S * 1000)})))
        statements = {name: text for name, (text, _) in _format_statements(s3_warehouse, "answering", hudi_table).items()}
        assert [row[0] for row in session.run_one(statements["describe hudi"]).rows] == [*META_FIELDS, "id", "rider", "city"]
        assert len(session.run_one(statements["show splits hudi"]).rows) == 2  # one base file per partition
        assert dict(session.run_one(statements["explain splits hudi"]).rows)["files"] == 1
        assert [row[0] for row in session.run_one(statements["describe iceberg"]).rows] == ["id", "page"]
    finally:
        session.manager.close()
